"""Stereo calls with one party per channel (``scripts/stereo_cases.py``: the dev set's
simulated calls, one speaker per channel, bleed -20 dB with a 20-80 ms delay): what the
detection says, the split path's DER per file (strict and with a 0.25 s collar, against both
references: the speech of each party's own channel, and the utterance spans), and with
``--words`` the two ways to give words their speaker:

- mix: Whisper once on the mono mix, each word to the louder channel's exclusive turn;
- channels: Whisper on each channel where its party holds the floor, silent outside its own
  speech so the other party's bleed is not transcribed (``WhisperEngine.transcribe_call``,
  what ``witness`` does); each word has its channel's speaker.

Words are scored (WER, WDER) on the utterances with text that no other speech overlaps
(``scored_spans``: a piece cut short by an overlap in the source call has no text, and a
method that transcribes it must not be charged for it). Whisper seconds are in one run, on a
shared machine: compare them as a ratio only.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/measure_stereo.py
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/measure_stereo.py --words --model tiny.en
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from functools import partial

import numpy as np

from scripts.stereo_cases import StereoCall, shared_channel_calls, stereo_calls
from witness.channels import LABELS, ChannelTurns, diarize_channels, same_voice_share, stereo_call
from witness.diarize.embedding import CamPlusPlusEmbedder
from witness.vad import SileroVad
from witness.evaluate import diarization_error
from witness.evaluate.der import DerResult, combine
from witness.evaluate.stm import StmSegment
from witness.evaluate.wder import score_words
from witness.evaluate.words import words_from_stm, words_from_transcript
from witness.merge import group_utterances, merge
from witness.models.campplus_onnx import campplus_onnx_path
from witness.models.whisper_models import resolve_model, resolve_vad
from witness.transcript import AudioMeta, Transcript, Word


def der_results(call: StereoCall, split: ChannelTurns) -> list[DerResult]:
    """DER strict and with a 0.25 s collar, against the channel speech and the spans."""
    return [diarization_error(list(reference), list(split.turns), collar=collar)
            for reference in (call.reference, call.spans) for collar in (0.0, 0.25)]


def der_line(results: list[DerResult]) -> str:
    return "      {:5.2f} {:5.2f}                     {:5.2f} {:5.2f}".format(*(100 * r.der for r in results))


def scored_spans(call: StereoCall) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(spans scored, spans left out): the utterances with text that no other piece of speech
    overlaps, and every other piece. A piece without text (cut short by an overlap in the
    source call) holds real speech that the reference cannot score: a method that
    transcribes it (each channel does, where the parties overlap) must not be charged for it."""
    texted = {(s, e, label) for s, e, label, _ in call.texts}
    others = [(t.start, t.end) for t in call.spans if (t.start, t.end, t.speaker) not in texted]
    clean = [(s, e) for s, e, _, _ in call.texts
             if not any(a < e + 0.2 and b > s - 0.2 for a, b in others)]
    left_out = others + [(s, e) for s, e, _, _ in call.texts if (s, e) not in clean]
    return clean, left_out


def scored(call: StereoCall, words: list[Word]) -> tuple[float, float]:
    """(WER %, WDER %) of speaker-labelled ``words`` within ``scored_spans``."""
    clean, left_out = scored_spans(call)

    def kept(word: Word) -> bool:
        middle = (word.start + word.end) / 2
        return (any(s - 0.2 <= middle <= e + 0.2 for s, e in clean)
                and not any(s < middle < e for s, e in left_out))

    words = sorted((w for w in words if kept(w)), key=lambda w: (w.start, w.end))
    transcript = Transcript(AudioMeta(call.name, call.duration), group_utterances(words, 2.0))
    reference = words_from_stm(StmSegment(call.name, "1", label, s, e, text) for s, e, label, text in call.texts
                               if (s, e) in clean)
    wer, wder = score_words(reference, words_from_transcript(transcript))
    return 100 * wer.wer, 100 * wder.wder


def words_by_mix(engine, call: StereoCall, split: ChannelTurns) -> list[Word]:
    return list(merge(engine.transcribe(call.channels.mean(axis=0)).words, split.exclusive_turns).words)


def words_by_channel(engine, call: StereoCall, vad: SileroVad) -> list[Word]:
    result = engine.transcribe_call(stereo_call(call.channels, vad))
    return [replace(w, speaker=LABELS[c]) for w, c in zip(result.words, result.channels)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", action="store_true", help="also compare the two word attributions")
    parser.add_argument("--model", default="tiny.en", help="Whisper model for --words")
    parser.add_argument("--layouts", type=int, default=1,
                        help="lay each call out this many ways (other pauses and overlaps): more calls to score")
    args = parser.parse_args()
    vad = SileroVad(resolve_vad())
    voice_share = partial(same_voice_share, CamPlusPlusEmbedder(campplus_onnx_path()))
    engine = None
    if args.words:
        from witness.asr.whisper import WhisperEngine

        engine = WhisperEngine(resolve_model(args.model).path, vad_path=resolve_vad())
    print("file                      s   split  one_voice      DER% channel speech (strict, collar)  spans (strict, collar)"
          + ("   WER/WDER% mix   channels   Whisper s mix  channels" if engine else ""))
    totals, ders, wers = {"mix": 0.0, "channels": 0.0}, [], {"mix": [], "channels": []}
    calls = [call for layout in range(args.layouts) for call in stereo_calls(vad, layout)]
    for call in calls + shared_channel_calls(vad):
        evidence, split = diarize_channels(call.channels, vad, "auto", voice_share)
        voices = "-" if evidence.one_voice is None else "/".join(f"{v:.2f}" for v in evidence.one_voice)
        line = f"{call.name:24s} {call.duration:4.0f}  {str(evidence.split):5s}  {voices:9s}"
        if split is None:
            print(f"{line}  ({evidence.reason})")
            continue
        ders.append(der_results(call, split))
        line += der_line(ders[-1])
        if engine is not None:
            results = {}
            methods = {"mix": partial(words_by_mix, engine, call, split),
                       "channels": partial(words_by_channel, engine, call, vad)}
            for name, words_of in methods.items():
                began = time.perf_counter()
                words = words_of()
                totals[name] += time.perf_counter() - began
                results[name] = scored(call, words) + (time.perf_counter() - began,)
                wers[name].append(results[name][0])
            line += "   {:5.1f}/{:4.1f}   {:5.1f}/{:4.1f}   {:6.1f} {:6.1f}".format(
                *results["mix"][:2], *results["channels"][:2], results["mix"][2], results["channels"][2])
        print(line)
    print(f"{'all split calls':46s}{der_line([combine(list(column)) for column in zip(*ders)])}")
    if engine is not None:
        better = sum(c < m for m, c in zip(wers["mix"], wers["channels"]))
        print(f"mean WER: mix {np.mean(wers['mix']):.2f} %, channels {np.mean(wers['channels']):.2f} % "
              f"(channels better on {better} of {len(wers['mix'])} calls, worse on "
              f"{sum(c > m for m, c in zip(wers['mix'], wers['channels']))})")
        print(f"Whisper seconds in all: mix {totals['mix']:.1f}, channels {totals['channels']:.1f} "
              f"({totals['channels'] / totals['mix']:.2f}x)")


if __name__ == "__main__":
    main()
