"""A recording reduced to a voice print, and prints added to a voice.

A recording is diarized like any call (``witness.run.orchestrate.run``, no Whisper): the print
is its speaker's cluster centroid, so only speech enters it (the segmentation model's
activity) and it is the same kind of vector later runs compare. A recording where the
diarization hears another voice with a real share of the speech is refused, naming the
voices found: a print of two people would name either. ``--speaker`` picks one of them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from witness.errors import InputError, UsageError
from witness.transcript import Transcript, speech_seconds
from witness.voices.store import Voice, VoicePrint

MIN_SPEECH_SECONDS = 5.0  # less speech gives a print too noisy to trust (calibrated on 5–6 s pieces)
OTHER_VOICE_SHARE = 0.15  # another voice with at least this share of the speech: refused (a choice, not measured)


def enrollment_print(transcript: Transcript, speaker: str | None = None) -> VoicePrint:
    """The print of the one voice in ``transcript`` (a diarized recording), or of
    ``speaker`` (a label it has); InputError naming the file when there is too little
    speech or more than one voice and no ``speaker``."""
    path = transcript.audio.path
    seconds = {label: s for label, s in speech_seconds(transcript.exclusive_turns).items()
               if label in transcript.speaker_embeddings}
    found = ", ".join(f"{label} {s:.1f} s" for label, s in seconds.items()) or "none"
    if speaker is not None:
        if speaker not in seconds:
            raise UsageError(f"--speaker {speaker}: no such speaker here (found: {found})", path)
    elif not seconds:
        raise InputError("no speech found to enroll", path)
    else:
        speaker, *others = seconds
        total = sum(seconds.values())
        if any(seconds[o] >= OTHER_VOICE_SHARE * total for o in others):
            raise InputError(f"{len(seconds)} voices here ({found}): enroll a recording of one voice, "
                             "or pick one with --speaker (labels as `witness diarize --channels mix` gives them)", path)
    if seconds[speaker] < MIN_SPEECH_SECONDS:
        raise InputError(f"too little speech to enroll ({seconds[speaker]:.1f} s of {speaker}; "
                         f"at least {MIN_SPEECH_SECONDS:.0f} s)", path)
    added = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    return VoicePrint(transcript.speaker_embeddings[speaker], Path(path).name, transcript.audio.sha256,
                      seconds[speaker], added)


def check_mode(existing: Voice | None, mode: str) -> None:
    """UsageError when the voice exists already and ``mode`` neither adds nor replaces."""
    if existing is not None and mode not in ("add", "replace"):
        raise UsageError(f"voice {existing.name} is enrolled already ({len(existing.prints)} prints): --add to add "
                         "these recordings to it, --replace to start it over", existing.path)


def enrolled(name: str, prints: Sequence[VoicePrint], model: str, model_sha256: str,
             existing: Voice | None, mode: str) -> Voice:
    """The voice ``name`` after enrolling ``prints``: a new voice, or ``existing`` with the
    prints added (``mode`` "add") or replaced ("replace"). UsageError when ``existing`` is
    there and ``mode`` is "new" (nothing is overwritten silently), or when prints would mix
    embedding models."""
    check_mode(existing, mode)
    if existing is None or mode == "replace":
        return Voice(name, model, model_sha256, tuple(prints))
    if (existing.model, existing.model_sha256) != (model, model_sha256):
        raise UsageError(f"voice {name} was made with another model ({existing.model}, sha256 "
                         f"{existing.model_sha256[:12]}…): --replace to enroll it again with {model}", existing.path)
    return replace(existing, prints=existing.prints + tuple(prints))
