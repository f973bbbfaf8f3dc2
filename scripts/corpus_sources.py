"""The speech the tuning corpus is built from (``make_corpus``): real single-speaker recordings,
each cut into pieces at its pauses, with a transcript, a pitch and a CAM++ voice print.

Source: the LibriSpeech utterances in resemble-ai/Resemblyzer's repository (``audio_data/``,
Apache-2.0 repository; LibriSpeech itself is CC BY 4.0): 10 test-other speakers with 10
utterances each and 251 train-clean-100 speakers with one each, 65 minutes in all. Get it with

    git clone --depth 1 https://github.com/resemble-ai/Resemblyzer /path/to/Resemblyzer

and pass ``--source /path/to/Resemblyzer``. The repository carries no transcripts or speaker
sexes, so each utterance is transcribed here by Whisper tiny.en (faster-whisper int8 on the
CTranslate2 weights Witness ships: 6x faster than whisper.cpp here) on the clean recording, and each speaker's sex is estimated from the median F0
(< 165 Hz: male). Both are recorded as such in every call's .json ("transcript": "whisper
tiny.en on the clean source"), so WER on the corpus measures what the conditions cost, not
absolute accuracy; WDER and DER do not depend on it.

The catalogue (pieces, words, pitch, voice prints) is cached in ``<cache>/sources-<key>.json``
and ``.npy``: transcribing the 351 files takes a few minutes once.

The words are the one input of the pieces that depends on the machine: ``WHISPER`` pins how
they are made (see there) and names their cache, ``<cache>/words-<key>``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from witness.audio import SAMPLE_RATE, load_audio
from witness.transcript import Word

LICENCE = ("LibriSpeech (openslr.org/12), CC BY 4.0; copied in resemble-ai/Resemblyzer audio_data/ "
           "(Apache-2.0 repository)")
FRAME = 160  # 10 ms energy frames
SPEECH_DB = -35.0  # a frame is speech above the utterance's loud level minus this
MIN_PAUSE = 0.2  # seconds of quiet that split an utterance into pieces
QUIET_DB = -25.0  # a word cut out alone must start and end this far below the loud level
BACKCHANNELS = {"yes", "yeah", "no", "well", "oh", "ah", "right", "so", "okay", "now", "sir", "sure", "indeed", "what", "why", "true", "good", "hm", "mm"}
MALE_BELOW_HZ = 165.0


@dataclass
class Piece:
    """A stretch of one utterance between pauses (sample range in the source file)."""

    source: str  # path inside the source folder
    speaker: str
    start: int
    end: int
    text: str
    word_count: int
    regions: list[tuple[int, int]]  # speech inside the piece (samples, relative to start)
    short_word: bool  # a single short word with quiet on both sides (a backchannel candidate)


def speech_regions(samples: np.ndarray, min_pause: float = MIN_PAUSE) -> list[tuple[int, int]]:
    """Sample ranges of speech: 10 ms frames above the loud level - 35 dB and the noise floor
    + 10 dB, pauses under ``min_pause`` bridged."""
    n = len(samples) // FRAME
    if n == 0:
        return []
    energy = 10 * np.log10(np.mean(samples[: n * FRAME].reshape(n, FRAME) ** 2, axis=1) + 1e-12)
    loud, floor = np.percentile(energy, [95, 5])
    active = energy > max(loud + SPEECH_DB, floor + 10.0)  # above the recording's noise floor too
    regions: list[list[int]] = []
    for i in np.flatnonzero(active):
        if regions and i - regions[-1][1] <= min_pause * SAMPLE_RATE / FRAME:
            regions[-1][1] = i + 1
        else:
            regions.append([i, i + 1])
    return [(int(a) * FRAME, int(b) * FRAME) for a, b in regions if b - a >= 5]  # 50 ms at least


def median_f0(samples: np.ndarray) -> float:
    """Median pitch (Hz) over voiced 40 ms frames, by autocorrelation (60-400 Hz)."""
    size, lo, hi = 640, SAMPLE_RATE // 400, SAMPLE_RATE // 60
    frames = samples[: len(samples) // size * size].reshape(-1, size)
    frames = frames[np.mean(frames ** 2, axis=1) > 0.1 * np.mean(frames ** 2)]
    pitches = []
    for frame in frames:
        frame = frame - frame.mean()
        ac = np.correlate(frame, frame, "full")[size - 1:]
        if ac[0] <= 0:
            continue
        lag = lo + int(np.argmax(ac[lo:hi]))
        if ac[lag] / ac[0] > 0.4:
            pitches.append(SAMPLE_RATE / lag)
    return float(np.median(pitches)) if pitches else float("nan")


def _energy_db(samples: np.ndarray) -> np.ndarray:
    n = len(samples) // FRAME
    energy = 10 * np.log10(np.mean(samples[: n * FRAME].reshape(n, FRAME) ** 2, axis=1) + 1e-12)
    return energy - np.percentile(energy, 95)


def short_words(rel: str, speaker: str, samples: np.ndarray, words, limit: int = 6) -> list[Piece]:
    """Single words (0.15-0.6 s) that can be cut out alone: each Whisper word's edges snapped
    to the quietest 10 ms frame near them, kept when both are QUIET_DB below the loud level.
    Backchannel-like words ("yes", "well", "oh") first."""
    energy, found = _energy_db(samples), []
    for w in words:
        text = w.text.strip()
        a0, a1 = int((w.start - 0.08) * 100), int((w.start + 0.05) * 100)
        b0, b1 = int((w.end - 0.05) * 100), int((w.end + 0.12) * 100)
        if a0 < 0 or b1 > len(energy) or not text:
            continue
        fs, fe = a0 + int(np.argmin(energy[a0:a1])), b0 + int(np.argmin(energy[b0:b1]))
        if energy[fs] < QUIET_DB and energy[fe] < QUIET_DB and 0.15 <= (fe - fs) / 100 <= 0.6:
            clip = samples[fs * FRAME: fe * FRAME]
            regions = speech_regions(clip, min_pause=0.15)
            if regions:
                plain = text.strip(".,!?;:\"'").lower()
                found.append((plain not in BACKCHANNELS, len(found),
                              Piece(rel, speaker, fs * FRAME, fe * FRAME, text, 1, regions, True)))
    return [p for *_, p in sorted(found)[:limit]]


def _pieces(rel: str, speaker: str, samples: np.ndarray, words) -> list[Piece]:
    """The utterance cut at its pauses (each Whisper word goes to the piece holding its
    middle), and the words that can be cut out alone."""
    out = []
    for a, b in speech_regions(samples):
        lo, hi = int(max(0, a - 800)), int(min(len(samples), b + 800))  # 50 ms of room each side
        inside = [w for w in words if a <= (w.start + w.end) / 2 * SAMPLE_RATE < b]
        text = " ".join(w.text.strip() for w in inside).strip()
        regions = speech_regions(samples[lo:hi], 0.15)
        if text and regions:
            out.append(Piece(rel, speaker, lo, hi, text, len(inside), regions, False))
    return out + short_words(rel, speaker, samples, words)


def _key(files: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.relative_to(root)}:{f.stat().st_size}\n".encode())
    return h.hexdigest()[:12]


def source_files(root: Path) -> list[Path]:
    files = sorted((root / "audio_data").glob("librispeech_*/**/*.flac"))
    if not files:
        raise SystemExit(f"{root}: no audio_data/librispeech_*/ files (a Resemblyzer checkout?)")
    return files


def _speaker(path: Path) -> str:
    return "ls" + path.name.split("-")[0]


GAP = SAMPLE_RATE  # 1 s of silence between the files of a stream
# How the words are made, the same on every x86-64 machine with AVX2: CTranslate2's AVX2 kernels,
# oneDNN's GEMMs up to AVX2 (never MKL's, nor AVX-512 where there is one), one thread, streams cut
# from the whole sorted file list, the temperature fallback's sampling seeded per stream. Each of
# these changed the words, and so the pieces and every call drawn after them (measured in
# ``make_corpus.built_with``'s docstring).
WHISPER = {"model": "tiny.en", "compute_type": "int8", "cpu_threads": 1, "stream": 12, "seed": 0,
           "env": {"CT2_FORCE_CPU_ISA": "AVX2", "CT2_USE_MKL": "0", "ONEDNN_MAX_CPU_ISA": "AVX2"}}


def words_dir(cache: Path) -> Path:
    """Where the words made by ``WHISPER`` with the installed faster-whisper and CTranslate2 are
    cached: words made otherwise are never mixed in."""
    from importlib.metadata import version

    made = {**WHISPER, **{name: version(name) for name in ("faster-whisper", "ctranslate2")}}
    return cache / f"words-{hashlib.sha256(json.dumps(made, sort_keys=True).encode()).hexdigest()[:12]}"


def _file_cache(folder: Path, path: Path) -> Path:
    return folder / f"{path.stem}-{path.stat().st_size}.json"


def _pin_cpu(env: dict[str, str]) -> None:
    """A worker's CTranslate2 settings, before it loads (``WHISPER``)."""
    os.environ.update(env)


def _transcribe_stream(job: tuple[Path, list[Path]]) -> None:
    """One stream of files joined by 1 s gaps, transcribed at once (Whisper's windows stay
    full), its words handed back to each file by their middles; each file's words cached."""
    import ctranslate2

    from scripts.asr_cases import faster_whisper_model

    folder, files = job
    audio = [load_audio(f).samples for f in files]
    joined = np.concatenate([np.concatenate([a, np.zeros(GAP, np.float32)]) for a in audio])
    ctranslate2.set_random_seed(WHISPER["seed"])  # before the model: its threads draw from the seeded generator
    model = faster_whisper_model(WHISPER["model"], WHISPER["cpu_threads"], WHISPER["compute_type"])
    segments, _ = model.transcribe(joined, language="en", beam_size=1, condition_on_previous_text=False,
                                   word_timestamps=True)
    words = [Word(w.start, w.end, w.word) for s in segments for w in s.words]
    offset = 0
    for f, a in zip(files, audio):
        shift = offset / SAMPLE_RATE
        mine = [Word(w.start - shift, w.end - shift, w.text) for w in words
                if offset <= (w.start + w.end) / 2 * SAMPLE_RATE < offset + len(a)]
        _file_cache(folder, f).write_text(json.dumps([[round(w.start, 3), round(w.end, 3), w.text] for w in mine]))
        offset += len(a) + GAP
    print(f"  transcribed {len(files)} files from {files[0].name}", flush=True)


def pending_streams(files: list[Path], folder: Path) -> list[list[Path]]:
    """The streams of ``WHISPER["stream"]`` files, cut from the whole list whatever is cached,
    that hold a file with no words in ``folder`` yet: a build resumed after an interruption
    transcribes the same streams as one that ran through."""
    n = WHISPER["stream"]
    streams = [files[i:i + n] for i in range(0, len(files), n)]
    return [s for s in streams if not all(_file_cache(folder, f).exists() for f in s)]


def whisper_words(files: list[Path], cache: Path, workers: int = 2) -> dict[Path, list[Word]]:
    """Whisper tiny.en's timed words of each file (in ``pending_streams`` of the sorted
    ``files``, made and cached as ``WHISPER`` says)."""
    from multiprocessing import get_context

    folder = words_dir(cache)
    folder.mkdir(parents=True, exist_ok=True)
    todo = [(folder, s) for s in pending_streams(files, folder)]
    if todo:
        with get_context("spawn").Pool(workers, initializer=_pin_cpu, initargs=(WHISPER["env"],)) as pool:
            pool.map(_transcribe_stream, todo)
    return {f: [Word(*w) for w in json.loads(_file_cache(folder, f).read_text())] for f in files}


def transcribe_pieces(root: Path, cache: Path, workers: int = 2) -> list[dict]:
    """Every file cut into pieces at its pauses, with Whisper tiny.en's words (cached)."""
    words = whisper_words(source_files(root), cache, workers)
    pieces = []
    for f, mine in words.items():
        pieces += [asdict(p) for p in _pieces(str(f.relative_to(root)), _speaker(f), load_audio(f).samples, mine)]
    return pieces


def speaker_prints(files: list, cache: Path, name: str, speaker_of, describe,
                   seconds: float = 6.0, samples_of=None) -> tuple[dict, np.ndarray]:
    """Per speaker (``speaker_of(file)``): ``describe(speaker, found)`` of what was found
    ({"f0": each file's median F0, "vec", "seconds" of audio, "files"}); and the CAM++ centroid
    of the first ``seconds`` of each file (rows in sorted speaker order). Cached as ``name``.
    ``samples_of(file)`` gives a file's audio (default: the file at ``file``, a path)."""
    meta, prints = cache / f"{name}.json", cache / f"{name}.npy"
    if meta.exists() and prints.exists():
        return json.loads(meta.read_text()), np.load(prints)
    from witness.diarize.embedding import CamPlusPlusEmbedder
    from witness.models.campplus_onnx import campplus_onnx_path

    embedder = CamPlusPlusEmbedder(campplus_onnx_path(None), threads=2)
    found: dict[str, dict] = {}
    for i, f in enumerate(files):
        samples = samples_of(f) if samples_of else load_audio(f).samples
        e = found.setdefault(speaker_of(f), {"f0": [], "vec": [], "seconds": 0.0, "files": []})
        e["f0"].append(median_f0(samples))
        e["vec"].append(embedder.embed(samples[None, : int(seconds * SAMPLE_RATE)])[0])
        e["seconds"] += len(samples) / SAMPLE_RATE
        e["files"].append(f)
        if i % 25 == 0:
            print(f"  voice print {i + 1}/{len(files)}", flush=True)
    speakers, rows = {}, []
    for spk in sorted(found):
        speakers[spk] = describe(spk, found[spk])
        c = np.nanmean(np.stack(found[spk]["vec"]), axis=0)
        rows.append(c / np.linalg.norm(c))
    cache.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps(speakers))
    np.save(prints, np.stack(rows))
    return speakers, np.stack(rows)


def _describe(speaker: str, found: dict) -> dict:
    f0 = float(np.nanmedian(found["f0"]))
    return {"f0": round(f0, 1), "sex_from_f0": "M" if f0 < MALE_BELOW_HZ else "F", "seconds": round(found["seconds"], 2),
            "subset": "test-other" if "test-other" in str(found["files"][0]) else "train-clean-100", "licence": LICENCE}


def voice_prints(root: Path, cache: Path, seconds: float = 6.0) -> tuple[dict, np.ndarray]:
    """Per speaker: median F0, sex estimated from it, seconds of speech; and the CAM++
    centroid of the first ``seconds`` of each file (rows in sorted speaker order; cached)."""
    files = source_files(root)
    return speaker_prints(files, cache, f"speakers-{_key(files, root)}", _speaker, _describe, seconds)
