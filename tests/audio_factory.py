"""Real call audio in the formats users bring, encoded from the sample call with PyAV."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

FORMATS = {  # extension: (container, codec, sample rate)
    "wav": ("wav", "pcm_s16le", 16000),
    "flac": ("flac", "flac", 44100),
    "mp3": ("mp3", "libmp3lame", 44100),
    "ogg": ("ogg", "libopus", 48000),
    "m4a": ("ipod", "aac", 44100),
    "webm": ("webm", "libopus", 48000),
}


def encode(samples: np.ndarray, rate: int, out: Path, codec: str, container: str, out_rate: int) -> Path:
    """Write ``samples`` ((channels, n) float32 at ``rate``) to ``out`` with the given codec."""
    channels = samples.shape[0]
    layout = "mono" if channels == 1 else "stereo"
    with av.open(str(out), "w", format=container) as c:
        stream = c.add_stream(codec, rate=out_rate, layout=layout)
        resampler = av.AudioResampler(format=stream.format.name if stream.format else "s16", layout=layout, rate=out_rate)
        frame_len = 1024
        for start in range(0, samples.shape[1], frame_len):
            block = np.ascontiguousarray(samples[:, start : start + frame_len], dtype=np.float32)
            frame = av.AudioFrame.from_ndarray(block, format="fltp", layout=layout)
            frame.sample_rate = rate
            frame.pts = None
            for f in resampler.resample(frame):
                for packet in stream.encode(f):
                    c.mux(packet)
        for f in resampler.resample(None):
            for packet in stream.encode(f):
                c.mux(packet)
        for packet in stream.encode(None):
            c.mux(packet)
    return out


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """(channels, n) float32 and the rate of a PCM wav, decoded without witness."""
    with av.open(str(path)) as c:
        s = c.streams.audio[0]
        frames = [f.to_ndarray() for f in c.decode(s)]
        data = np.concatenate(frames, axis=1)
        if data.dtype == np.int16:
            data = data.astype(np.float32) / 32768.0
        return data.astype(np.float32), s.rate
