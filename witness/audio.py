"""Audio in: any call recording -> 16 kHz float32, mono mix plus the original channels.

Decoding is PyAV (FFmpeg's libraries, shipped inside the wheel: wav, flac, mp3, ogg/opus,
m4a/aac, webm and the rest, with no system ffmpeg). Samples are made safe for the engines
as they are decoded: NaN/Inf become silence, with one warning that says how many. Finite
values outside [-1, 1] (a float WAV can hold 1e30 or 100.0) are clipped to it when they are
a few (a glitch: one warning says how many); when more than 1 % of the samples are, the
file's level is wrong (floats scaled like 16-bit integers) and the whole file is scaled
down to fit instead (one warning says by how much). Frames are resampled as they are
decoded and written straight into one preallocated buffer, so an hours-long file costs one
copy of its 16 kHz samples in memory (about 230 MB per channel-hour), never several.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from witness.errors import InputError

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
WHOLE_FILE_SHARE = 0.01  # more samples than this outside [-1, 1]: the level is wrong, scale the file
_TRUNCATION_SLACK = 0.05  # decoded may fall short of the declared duration by 5 % + 1 s


@dataclass(frozen=True)
class AudioInfo:
    """What the file was before decoding."""

    path: str
    container: str
    codec: str
    source_rate: int
    channels: int
    layout: str
    declared_duration: float | None  # from the container header, when it says


@dataclass(frozen=True)
class Audio:
    """Decoded audio at 16 kHz.

    ``samples``: (n,) float32 mono mix (mean of the channels), what the engines read.
    ``channel_samples``: (channels, n) float32, kept only when asked (``keep_channels``):
    a stereo call often has one party per channel.
    """

    samples: np.ndarray
    info: AudioInfo
    channel_samples: np.ndarray | None = None
    sample_rate: int = SAMPLE_RATE

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate


def load_audio(path: str | Path, keep_channels: bool = False) -> Audio:
    """Decode ``path``; InputError (one line naming the file) for anything that is not
    usable audio: missing, empty, not audio, no audio stream, truncated, no samples."""
    path = Path(path)
    info, buffer = _decode_into(path, lambda info: _Buffer(info.declared_duration, max(1, info.channels) if keep_channels else 0))
    mono, channels = buffer.result()
    _fit_range(path, buffer.loud, mono, *([] if channels is None else [channels]))
    return Audio(samples=mono, info=info, channel_samples=channels)


def write_wav(path: str | Path, samples: np.ndarray) -> Path:
    """``samples`` ((n,) mono or (channels, n), floats in [-1, 1] at 16 kHz) as a 16-bit PCM WAV."""
    import wave

    frames = np.atleast_2d(samples)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(frames.shape[0])
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes((np.clip(frames.T, -1.0, 1.0) * 32767).round().astype("<i2").tobytes())
    return Path(path)


def write_float_wav(path: str | Path, samples: np.ndarray, rate: int, name: str) -> Path:
    """``samples`` ((n,) mono or (n, 2) frames, floats at ``rate`` Hz) as a float32 WAV,
    exactly (decoding reads them back as they were); InputError naming ``name`` for an
    array that is not one of those shapes or holds no samples."""
    frames = np.asarray(samples, dtype=np.float32)
    if frames.ndim == 1:
        frames = frames[:, None]
    if frames.ndim != 2 or frames.shape[1] not in (1, 2) or not frames.shape[0]:
        raise InputError(f"samples must be a non-empty (n,) or (n, 2) array, not shape {np.shape(samples)}", name)
    if not isinstance(rate, int) or isinstance(rate, bool) or rate < 1:
        raise InputError(f"sample_rate must be a whole number of Hz, not {rate!r}", name)
    with open(path, "wb") as out:
        data = frames.astype("<f4").tobytes()
        channels = frames.shape[1]
        out.write(b"RIFF" + (36 + len(data)).to_bytes(4, "little") + b"WAVEfmt ")
        out.write((16).to_bytes(4, "little") + (3).to_bytes(2, "little") + channels.to_bytes(2, "little"))
        out.write(rate.to_bytes(4, "little") + (rate * 4 * channels).to_bytes(4, "little"))
        out.write((4 * channels).to_bytes(2, "little") + (32).to_bytes(2, "little"))
        out.write(b"data" + len(data).to_bytes(4, "little") + data)
    return Path(path)


def decode_to_file(path: str | Path, dest: str | Path,
                   stereo_dest: str | Path | None = None) -> tuple[AudioInfo, int]:
    """Decode ``path`` to 16 kHz mono float32 written straight into ``dest`` (raw samples),
    so even a 3-hour file never sits in this process's memory; returns (info, samples).
    With ``stereo_dest``, a two-channel file's channels are also written there, interleaved
    ((samples, 2) float32: ``stereo_view`` reads them); other files leave it empty.
    Same checks and errors as ``load_audio``."""
    with contextlib.ExitStack() as files:
        out = files.enter_context(open(dest, "wb"))
        both = None if stereo_dest is None else files.enter_context(open(stereo_dest, "wb"))
        info, sink = _decode_into(Path(path), lambda info: _FileSink(out, both if info.channels == 2 else None))
    if sink.loud:
        samples = np.memmap(dest, dtype=np.float32, mode="r+")
        channels = [stereo_view(stereo_dest, sink.length, writable=True)] if sink.stereo is not None else []
        _fit_range(Path(path), sink.loud, samples, *channels)
        for array in (samples, *channels):
            array.flush()
    return info, sink.length


def decoded_bytes(info: AudioInfo, stereo: bool = False) -> int:
    """About the bytes ``decode_to_file`` writes for ``info``'s file, from its header (0 when
    it gives no duration): the float32 mono mix, and with ``stereo`` a two-channel file's
    channels too."""
    if not info.declared_duration:
        return 0
    samples = math.ceil(info.declared_duration * SAMPLE_RATE * 1.01) + SAMPLE_RATE
    return samples * 4 * (3 if stereo and info.channels == 2 else 1)


def stereo_view(path: str | Path, length: int, writable: bool = False) -> np.ndarray:
    """The two channels ``decode_to_file`` wrote to ``path``: a (2, length) float32 view of
    the interleaved file (mapped, not read)."""
    return np.memmap(path, dtype=np.float32, mode="r+" if writable else "r", shape=(length, 2)).T


def probe(path: str | Path) -> AudioInfo:
    """What ``path`` holds, from its header alone (milliseconds, nothing decoded): the
    checks decoding starts with, so a file that is missing, empty or not audio fails at
    once (InputError), as does a WAV shorter than its header says; damage further in, and
    truncation of other formats, show only when decoding."""
    with _opened(Path(path)) as (_, _, info):
        riff = _riff_durations(Path(path))
        if riff is not None:
            _check_length(Path(path), riff[0], riff[1])
        return info


@contextlib.contextmanager
def _opened(path: Path):
    """(container, audio stream, info) of ``path``, open; InputError when it has none."""
    _check_file(path)
    import av  # lazy: keeps `witness --help` light

    try:
        # max_size: a WAV's packets of 64 KiB, not FFmpeg's 4 KiB (other formats ignore it)
        container = av.open(str(path), metadata_errors="ignore", options={"max_size": "65536"})
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"not an audio file ({_reason(exc)})", path) from None
    with container:
        stream = next((s for s in container.streams if s.type == "audio"), None)
        if stream is None:
            raise InputError("has no audio stream", path)
        yield container, stream, _info(path, container, stream)


def _decode_into(path: Path, make_sink):
    """Open, decode into ``make_sink(info)``, and check the result; returns (info, sink)."""
    with _opened(path) as (container, stream, info):
        sink = make_sink(info)
        _decode(container, stream, info, sink)
    duration = sink.length / SAMPLE_RATE
    if sink.length == 0:
        raise InputError("contains no audio samples (zero-length)", path)
    riff = _riff_durations(path)
    _check_length(path, riff[0] if riff else info.declared_duration, duration)
    return info, sink


def _check_length(path: Path, declared: float | None, duration: float) -> None:
    """InputError when ``duration`` seconds (decoded, or in the file) fall short of the
    ``declared`` ones by more than the slack."""
    if declared and duration < declared * (1 - _TRUNCATION_SLACK) - 1.0:
        raise InputError(f"is truncated: the header says {declared:.1f} s but only {duration:.1f} s decode", path)


def _riff_durations(path: Path) -> tuple[float, float] | None:
    """(seconds a WAV header promises, seconds of data the file holds): FFmpeg infers the
    duration from the file size, which hides truncation. None for anything that is not a
    plain PCM RIFF/WAVE file."""
    import struct

    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        byte_rate = None
        while chunk := f.read(8):
            if len(chunk) < 8:
                return None
            kind, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if kind == b"fmt ":
                fmt = f.read(size + (size & 1))
                byte_rate = struct.unpack("<I", fmt[8:12])[0] if len(fmt) >= 12 else None
            elif kind == b"data":
                # 0 and 0xFFFFFFFF mark a stream whose writer never went back to fill the size.
                if not byte_rate or size in (0, 0xFFFFFFFF):
                    return None
                held = os.fstat(f.fileno()).st_size - f.tell()
                return size / byte_rate, min(size, held) / byte_rate
            else:
                f.seek(size + (size & 1), 1)
    return None


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file", path)
    if path.is_dir():
        raise InputError("is a folder, not an audio file", path)
    if path.stat().st_size == 0:
        raise InputError("is empty (0 bytes)", path)


def _info(path: Path, container, stream) -> AudioInfo:
    declared = None
    if stream.duration is not None and stream.time_base is not None:
        declared = float(stream.duration * stream.time_base)
    elif container.duration is not None:
        declared = container.duration / 1_000_000  # AV_TIME_BASE
    layout = stream.layout.name if stream.layout is not None else ""
    return AudioInfo(
        path=str(path),
        container=container.format.name,
        codec=stream.codec_context.name,
        source_rate=int(stream.rate or 0),
        channels=int(stream.channels or 0),
        layout=layout,
        declared_duration=declared if declared and declared > 0 else None,
    )


BLOCK_SAMPLES = 1 << 16  # resampled frames (about 1024 samples each) are checked and stored this many at a time


def _decode(container, stream, info: AudioInfo, sink) -> None:
    """Decode and resample frame by frame into ``sink`` (``append((channels, k) float32)``),
    about ``BLOCK_SAMPLES`` at a time: checked and stored frame by frame (1024 samples of a
    WAV), a 30-minute call took 1.9-2.6 CPU s to decode, 0.7-0.9 s this way, the same samples."""
    import av

    resampler = av.AudioResampler(format="fltp", layout=info.layout or None, rate=SAMPLE_RATE)
    pending: list[np.ndarray] = []  # resampled, not yet stored

    def store(out, at_least: int = BLOCK_SAMPLES) -> None:
        pending.extend(o.to_ndarray() for o in out or ())
        if pending and sum(p.shape[-1] for p in pending) >= at_least:
            sink.append(_finite(pending[0] if len(pending) == 1 else np.concatenate(pending, axis=-1), sink))
            pending.clear()

    try:
        for frame in container.decode(stream):
            store(resampler.resample(frame))
        store(resampler.resample(None), at_least=0)
    except av.error.FFmpegError as exc:
        store(None, at_least=0)  # what decoded before the error counts
        raise InputError(
            f"corrupt audio data after {sink.length / SAMPLE_RATE:.1f} s ({_reason(exc)})", info.path
        ) from None
    if sink.bad_values:
        log.warning("%s: %d NaN/Inf samples replaced by silence", info.path, sink.bad_values)


def _finite(block: np.ndarray, sink) -> np.ndarray:
    """(channels, k) float32 with NaN/Inf replaced by 0 (counted on the sink: ``bad_values``;
    the instants whose values fall outside [-1, 1] in ``loud``)."""
    block = np.asarray(block, dtype=np.float32)
    if block.ndim == 1:
        block = block[None, :]
    finite = np.isfinite(block)
    if not finite.all():
        sink.bad_values += int(block.size - finite.sum())
        block = np.where(finite, block, 0.0).astype(np.float32)
    sink.loud += int((np.abs(block) > 1.0).any(axis=0).sum())
    return block


def _fit_range(path: Path, loud: int, mono: np.ndarray, *others: np.ndarray) -> None:
    """In place: ``mono`` (n,) and ``others`` (e.g. (channels, n)) brought into [-1, 1] when
    ``loud`` of its n instants fall outside: clipped when they are a few, else all scaled
    down by the peak (see the module docstring); one warning either way."""
    if not loud:
        return
    arrays = (mono, *others)
    if loud <= len(mono) * WHOLE_FILE_SHARE:
        for a in arrays:
            np.clip(a, -1.0, 1.0, out=a)
        log.warning("%s: %d samples outside [-1, 1] clipped to it", path, loud)
        return
    peak = max(float(np.abs(a).max()) for a in arrays)
    for a in arrays:
        a *= np.float32(1.0 / peak)
    log.warning("%s: %.1f %% of the samples are outside [-1, 1] (peak %.4g): the whole file scaled down to fit",
                path, 100.0 * loud / len(mono), peak)


class _FileSink:
    """Mono samples appended to an open binary file as raw float32 (and, with ``stereo``,
    a two-channel file's channels, interleaved, to another)."""

    def __init__(self, out, stereo=None):
        self.out = out
        self.stereo = stereo
        self.length = 0
        self.bad_values = 0
        self.loud = 0

    def append(self, block: np.ndarray) -> None:
        # file.write, not ndarray.tofile: a full disk is then OSError(ENOSPC), not an errno-less OSError
        self.out.write(block.mean(axis=0, dtype=np.float32).tobytes())
        if self.stereo is not None:
            self.stereo.write(np.ascontiguousarray(block[:2].T).tobytes())
        self.length += block.shape[1]


class _Buffer:
    """Preallocated sample buffers that grow by half when the header under-promised."""

    def __init__(self, declared: float | None, n_channels: int):
        estimate = math.ceil((declared or 60.0) * SAMPLE_RATE * 1.01) + SAMPLE_RATE
        self.mono = np.empty(estimate, dtype=np.float32)
        self.channels = np.empty((n_channels, estimate), dtype=np.float32) if n_channels else None
        self.length = 0
        self.bad_values = 0
        self.loud = 0

    def append(self, block: np.ndarray) -> None:
        """``block``: (channels, k) finite float32 from the resampler."""
        k = block.shape[1]
        self._reserve(self.length + k)
        self.mono[self.length : self.length + k] = block.mean(axis=0)
        if self.channels is not None:
            rows = min(len(self.channels), len(block))
            self.channels[:rows, self.length : self.length + k] = block[:rows]
        self.length += k

    def _reserve(self, needed: int) -> None:
        if needed <= len(self.mono):
            return
        size = max(needed, int(len(self.mono) * 1.5))
        self.mono = np.resize(self.mono, size)
        if self.channels is not None:
            grown = np.empty((len(self.channels), size), dtype=np.float32)
            grown[:, : self.length] = self.channels[:, : self.length]
            self.channels = grown

    def result(self) -> tuple[np.ndarray, np.ndarray | None]:
        # Slicing keeps the over-allocation alive but copies nothing; trimming by copy
        # would briefly need two full buffers for a 3-hour file.
        mono = self.mono[: self.length]
        channels = None if self.channels is None else self.channels[:, : self.length]
        return mono, channels


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc)
    return " ".join(str(text).split())[:160]
