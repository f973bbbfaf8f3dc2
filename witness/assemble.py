"""Engine outputs in, one Transcript out: ``engine_words`` labels a stereo call's words by
channel, ``assemble`` merges words with turns and adds the file's metadata (``audio_meta``),
``named_voices`` names the speakers enrolled voices match; ``read_words`` takes words from a
file (``--words``). A speaker the merge found twice leaves no gap in the labels
(``one_label_each``): the diarization's SPEAKER_NN are numbered again here and nowhere else.
The engines themselves are run by ``witness.run.orchestrate``.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from witness.audio import SAMPLE_RATE, AudioInfo
from witness.errors import InputError
from witness.fileio import read_input_text, sha256_file
from witness.merge import MergeOptions, exclusive_turns, merge, speaker_order
from witness.opinion import Voices
from witness.transcript import AudioMeta, Transcript, Turn, Word

if TYPE_CHECKING:
    from witness.run.engines import TurnsResult, WordsResult
    from witness.voices.store import Voice

log = logging.getLogger(__name__)

DIARIZED = re.compile(r"SPEAKER_\d+")  # a label the diarization gave (``witness.diarize.reconstruct``)


def audio_meta(info: AudioInfo, length: int, sha256: str = "") -> AudioMeta:
    """What the transcript says of its audio: ``length`` decoded samples of ``info``'s file,
    whose ``sha256`` is computed unless the caller has it."""
    return AudioMeta(
        path=info.path,
        duration=round(length / SAMPLE_RATE, 6),
        sha256=sha256 or sha256_file(info.path),
        sample_rate=info.source_rate,
        channels=info.channels,
    )


def assemble(
    meta: AudioMeta,
    words: Sequence[Word],
    turns: Sequence[Turn] | None,
    exclusive: Sequence[Turn] | None = None,
    options: MergeOptions = MergeOptions(),
    engines: Mapping[str, Any] | None = None,
    plan: Mapping[str, Any] | None = None,
    timings: Mapping[str, float] | None = None,
    voices: Voices | None = None,
    centroids: Mapping[str, Any] | None = None,
) -> Transcript:
    """Merge ``words`` with ``exclusive`` turns (derived from ``turns`` when not given).
    ``turns`` None means no diarization ran: utterances carry no speaker. ``voices``: for
    the merge's second opinion (``witness.opinion``). ``centroids``: the diarization's, by
    label; they become the transcript's ``speaker_embeddings`` (a speaker's with turns or
    words), relabelled with it."""
    if turns is None:
        result = merge(words, [], options)
        speakers: tuple[str, ...] = ()
        turns, exclusive = (), ()
    else:
        exclusive = tuple(exclusive) if exclusive is not None else exclusive_turns(turns)
        result = merge(words, exclusive, options, voices)
        speakers = speaker_order(turns, result.words)
        log.info("%s: %d words on %d speakers; boundary repair moved %d, interjections %d, second opinion %d "
                 "(%d stretches embedded), %d unattributed", meta.path, len(result.words), len(speakers),
                 result.repaired, result.interjected, result.reopined, result.opinions, result.unattributed)
    transcript = Transcript(
        audio=meta,
        utterances=result.utterances,
        speakers=speakers,
        turns=tuple(sorted(turns, key=lambda t: (t.start, t.end))),
        exclusive_turns=tuple(exclusive),
        engines=dict(engines or {}),
        plan=dict(plan or {}),
        timings=dict(timings or {}),
        speaker_embeddings={k: v for k, v in (centroids or {}).items() if k in speakers},
    )
    return one_label_each(transcript, result.absorbed)


def one_label_each(transcript: Transcript, absorbed: Mapping[str, str]) -> Transcript:
    """``transcript`` with each speaker the merge found twice (``absorbed``: gone -> kept)
    under the kept one's label, in its turns too (its centroid dropped); then, where one was,
    the diarization's labels (``DIARIZED``) numbered again SPEAKER_00, SPEAKER_01, ... with
    no gap, in order of first appearance in the turns, the order the diarization numbers them
    in. Labels of another form (an RTTM's, a test's names) stay as they are."""
    if not absorbed:
        return transcript
    embeddings = {k: v for k, v in transcript.speaker_embeddings.items() if k not in absorbed}
    joined = replace(transcript, speaker_embeddings=embeddings).rename_speakers(absorbed)
    diarized = [s for s in joined.speakers if DIARIZED.fullmatch(s)]  # in order of first appearance
    numbers = {old: f"SPEAKER_{n:02d}" for n, old in enumerate(diarized)}
    log.info("%s: one voice found twice: %s", transcript.audio.path,
             ", ".join(f"{gone} is {kept} (now {numbers.get(kept, kept)})" for gone, kept in absorbed.items()))
    return joined.rename_speakers(numbers)


def engine_words(asr: WordsResult | None, diarization: TurnsResult | None) -> tuple[Word, ...]:
    """The words Whisper heard (none without it); where the speakers of a stereo call came
    from its channels and each channel was transcribed apart, each word is its channel's party's."""
    if asr is None:
        return ()
    if asr.channels and diarization is not None and diarization.info is not None \
            and diarization.info.get("method") == "channels":
        from witness.channels import LABELS

        return tuple(replace(w, speaker=LABELS[c]) for w, c in zip(asr.words, asr.channels))
    return tuple(asr.words)


def named_voices(transcript: Transcript, voices: Sequence[Voice], threshold: float = 0.0) -> Transcript:
    """``transcript`` with the speakers whose centroid (``speaker_embeddings``) matches an
    enrolled voice named by it, the scores in ``engines.diarization.voices`` (``threshold``
    0: the calibrated one)."""
    if not voices:
        return transcript
    from witness.voices.match import THRESHOLD, match_voices, matches_info

    threshold = threshold or THRESHOLD
    matches = match_voices(transcript.speaker_embeddings, voices, threshold)
    engines = dict(transcript.engines)
    engines["diarization"] = {**engines["diarization"], "voices": matches_info(matches, voices, threshold)}
    return replace(transcript.rename_speakers({m.speaker: m.name for m in matches}), engines=engines)


def read_words(path: str | Path) -> list[Word]:
    """Words from a witness transcript JSON, or from a JSON list of
    ``{"start", "end", "text", "probability"?}`` objects (speakers are ignored)."""
    try:
        data = json.loads(read_input_text(path, "words"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON (line {exc.lineno}: {exc.msg})", path) from None
    if isinstance(data, dict):
        return [Word(w.start, w.end, w.text, w.probability) for w in Transcript.from_dict(data, str(path)).words]
    try:
        return [Word(float(d["start"]), float(d["end"]), str(d["text"]), d.get("probability")) for d in data]
    except (TypeError, KeyError, ValueError) as exc:
        raise InputError(f"not a list of words with start, end and text ({type(exc).__name__}: {exc})", path) from None
