"""The transcript model: Word, Turn, Utterance, Transcript, and their JSON form.

Every stage exchanges these frozen dataclasses. Times are seconds from the start of the
audio (float). ``Transcript.to_json`` writes times to the millisecond (no float noise
such as 6.3999999999999995) and ``from_json`` reads back exactly what was written; the
schema is documented in the README ("Transcript JSON").
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from witness.errors import InputError
from witness.fileio import read_input_text

SCHEMA = "witness.transcript"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Word:
    """One recognised word. ``speaker`` is None until merged (or when unattributed)."""

    start: float
    end: float
    text: str
    probability: float | None = None
    speaker: str | None = None

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)


@dataclass(frozen=True)
class Turn:
    """A stretch of time in which ``speaker`` talks."""

    start: float
    end: float
    speaker: str

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)


@dataclass(frozen=True)
class Utterance:
    """Consecutive words of one speaker; ``speaker`` None marks unattributed words."""

    speaker: str | None
    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()


@dataclass(frozen=True)
class AudioMeta:
    """Where the transcript came from. ``sha256`` is of the input file's bytes."""

    path: str
    duration: float
    sha256: str = ""
    sample_rate: int = 16000
    channels: int = 1


@dataclass(frozen=True)
class Transcript:
    """A whole transcript.

    ``turns`` are the diarization's regular turns (overlap kept); ``exclusive_turns`` give
    one speaker per instant and are what words were matched against. ``engines``, ``plan``
    and ``timings`` are JSON-ready metadata: which models ran on which device, how the run
    was scheduled and why, and seconds spent per stage. ``speaker_embeddings``: each
    speaker's cluster centroid ((dim,) float32 by label) when diarization ran in this
    process's run; kept in memory only (``witness enroll`` stores one), never in the JSON.
    """

    audio: AudioMeta
    utterances: tuple[Utterance, ...] = ()
    speakers: tuple[str, ...] = ()
    turns: tuple[Turn, ...] = ()
    exclusive_turns: tuple[Turn, ...] = ()
    engines: Mapping[str, Any] = field(default_factory=dict)
    plan: Mapping[str, Any] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    speaker_embeddings: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def words(self) -> tuple[Word, ...]:
        return tuple(w for u in self.utterances for w in u.words)

    @property
    def empty_warning(self) -> str | None:
        """What to tell the user when no word was heard (None when some were)."""
        if any(u.words or u.text.strip() for u in self.utterances):
            return None
        return "no speech found (0 words): the audio holds only silence, music or noise"

    def rename_speakers(self, names: Mapping[str, str]) -> "Transcript":
        """A copy with speaker labels replaced by ``names`` (labels not named stay)."""
        if not names:
            return self

        def rn(label: str | None) -> str | None:
            return names.get(label, label) if label is not None else None

        utterances = tuple(
            replace(u, speaker=rn(u.speaker), words=tuple(replace(w, speaker=rn(w.speaker)) for w in u.words))
            for u in self.utterances
        )
        return replace(
            self,
            utterances=utterances,
            speakers=tuple(dict.fromkeys(rn(s) for s in self.speakers)),
            turns=tuple(replace(t, speaker=rn(t.speaker)) for t in self.turns),
            exclusive_turns=tuple(replace(t, speaker=rn(t.speaker)) for t in self.exclusive_turns),
            speaker_embeddings={rn(label): e for label, e in self.speaker_embeddings.items()},
        )

    # --- JSON -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "audio": {
                "path": self.audio.path,
                "duration": _ms(self.audio.duration),
                "sha256": self.audio.sha256,
                "sample_rate": self.audio.sample_rate,
                "channels": self.audio.channels,
            },
            "speakers": list(self.speakers),
            "utterances": [
                {
                    "speaker": u.speaker,
                    "start": _ms(u.start),
                    "end": _ms(u.end),
                    "text": u.text,
                    "words": [_word_to_dict(w) for w in u.words],
                }
                for u in self.utterances
            ],
            "turns": [_turn_to_dict(t) for t in self.turns],
            "exclusive_turns": [_turn_to_dict(t) for t in self.exclusive_turns],
            "engines": json.loads(json.dumps(self.engines)),
            "plan": json.loads(json.dumps(self.plan)),
            "timings": dict(self.timings),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> "Transcript":
        """Parse a transcript dict; raises InputError naming ``source`` when it is not one."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise InputError("not a witness transcript (no \"schema\": \"witness.transcript\")", source)
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise InputError(
                f"transcript schema version {version!r} is not supported (this witness reads {SCHEMA_VERSION})",
                source,
            )
        try:
            a = data["audio"]
            audio = AudioMeta(
                path=str(a["path"]),
                duration=float(a["duration"]),
                sha256=str(a.get("sha256", "")),
                sample_rate=int(a.get("sample_rate", 16000)),
                channels=int(a.get("channels", 1)),
            )
            utterances = tuple(
                Utterance(
                    speaker=u["speaker"],
                    start=float(u["start"]),
                    end=float(u["end"]),
                    text=str(u["text"]),
                    words=tuple(_word_from_dict(w) for w in u.get("words", ())),
                )
                for u in data["utterances"]
            )
            return cls(
                audio=audio,
                utterances=utterances,
                speakers=tuple(str(s) for s in data.get("speakers", ())),
                turns=tuple(_turn_from_dict(t) for t in data.get("turns", ())),
                exclusive_turns=tuple(_turn_from_dict(t) for t in data.get("exclusive_turns", ())),
                engines=dict(data.get("engines", {})),
                plan=dict(data.get("plan", {})),
                timings={str(k): float(v) for k, v in data.get("timings", {}).items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed transcript ({type(exc).__name__}: {exc})", source) from None

    @classmethod
    def from_json(cls, text: str, source: str | None = None) -> "Transcript":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", source) from None
        return cls.from_dict(data, source)


def _word_to_dict(w: Word) -> dict[str, Any]:
    p = w.probability
    return {
        "start": _ms(w.start),
        "end": _ms(w.end),
        "text": w.text,
        "probability": None if p is None or not math.isfinite(p) else p,
        "speaker": w.speaker,
    }


def _word_from_dict(d: Mapping[str, Any]) -> Word:
    p = d.get("probability")
    return Word(
        start=float(d["start"]),
        end=float(d["end"]),
        text=str(d["text"]),
        probability=None if p is None else float(p),
        speaker=d.get("speaker"),
    )


def _turn_to_dict(t: Turn) -> dict[str, Any]:
    return {"start": _ms(t.start), "end": _ms(t.end), "speaker": t.speaker}


def _ms(seconds: float) -> float:
    """Seconds to the millisecond, as JSON writes them."""
    return round(seconds, 3)


def _turn_from_dict(d: Mapping[str, Any]) -> Turn:
    return Turn(start=float(d["start"]), end=float(d["end"]), speaker=str(d["speaker"]))


def speech_seconds(exclusive_turns: Iterable[Turn]) -> dict[str, float]:
    """Seconds each speaker talks alone (in ``exclusive_turns``), largest first."""
    seconds: dict[str, float] = {}
    for turn in exclusive_turns:
        seconds[turn.speaker] = seconds.get(turn.speaker, 0.0) + turn.end - turn.start
    return dict(sorted(seconds.items(), key=lambda kv: -kv[1]))


def speakers_in_order(labels: Iterable[str | None]) -> tuple[str, ...]:
    """Distinct speaker labels in order of first appearance, unattributed left out."""
    return tuple(dict.fromkeys(s for s in labels if s is not None))


def read_transcript(path: str | Path) -> Transcript:
    """A transcript from a witness JSON file (InputError naming the file when it is
    missing, unreadable, malformed or of another schema version)."""
    text = read_input_text(path, "transcript")
    return Transcript.from_json(text, str(path))
