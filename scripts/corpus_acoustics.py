"""The acoustic conditions of a corpus call (``make_corpus``): level differences between the
parties, each party's room (pyroomacoustics image-source RIR, or a synthetic exponential
decay when it is not installed), background noise at an SNR, and the telephone channel
(300-3400 Hz band at 8 kHz with mu-law, or AMR-NB / Opus at a low bitrate through PyAV)."""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import signal

from witness.audio import SAMPLE_RATE

BANDS = (["wide", "telephone", "amr-nb", "opus"], [0.3, 0.35, 0.2, 0.15])
AMR_BITRATES = [4750, 5900, 7400, 10200, 12200]
OPUS_BITRATES = [6000, 8000, 12000]
TARGET_DBFS = -26.0


@dataclass
class Conditions:
    band: str
    bitrate: int | None
    snr_db: float | None
    noise: str | None
    level_db: dict[str, float] = field(default_factory=dict)
    reverb_rt60: dict[str, float | None] = field(default_factory=dict)
    room: dict[str, dict | None] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def draw_conditions(speakers: list[str], rng) -> Conditions:
    band = str(rng.choice(BANDS[0], p=BANDS[1]))
    bitrate = (int(rng.choice(AMR_BITRATES)) if band == "amr-nb" else
               int(rng.choice(OPUS_BITRATES)) if band == "opus" else None)
    clean = rng.random() < 0.15
    snr = None if clean else round(float(rng.uniform(5.0, 30.0)), 1)
    noise = None if clean else str(rng.choice(["pink", "brown", "babble-shaped"]))
    spread = float(rng.choice([0.0, 3.0, 6.0, 10.0]))  # the largest level difference between parties
    levels = {s: round(float(rng.uniform(-spread / 2, spread / 2)), 1) for s in speakers}
    reverberant = rng.random() < 0.6
    rt60 = {s: (round(float(rng.uniform(0.15, 0.7)), 2) if reverberant and rng.random() < 0.8 else None)
            for s in speakers}
    return Conditions(band, bitrate, snr, noise, levels, rt60)


def active_rms(x: np.ndarray) -> float:
    """RMS over the loudest frames (speech), not the silences."""
    n = len(x) // 160
    if n == 0:
        return float(np.sqrt(np.mean(x ** 2)) + 1e-9)
    power = np.mean(x[: n * 160].reshape(n, 160) ** 2, axis=1)
    loud = power[power > np.percentile(power, 95) * 10 ** -3.5]
    return float(np.sqrt(np.mean(loud)) + 1e-9)


def room_rir(rt60: float, rng, image_source: bool = True) -> tuple[np.ndarray, dict]:
    """A shoebox room's impulse response from a talker to a phone/microphone in it: by
    pyroomacoustics' image sources (the ``corpus`` extra), else (or with ``image_source``
    False: the same audio whatever is installed) a synthetic exponential decay."""
    dims = np.array([rng.uniform(3, 8), rng.uniform(3, 6), rng.uniform(2.4, 3.2)])
    mic = dims * rng.uniform(0.25, 0.75, 3)
    distance = float(rng.uniform(0.3, 2.0))
    direction = rng.normal(size=3)
    direction[2] *= 0.2
    src = np.clip(mic + distance * direction / np.linalg.norm(direction), 0.2, dims - 0.2)
    info = {"dims": [round(float(d), 2) for d in dims], "distance": round(float(np.linalg.norm(src - mic)), 2)}
    pra = None
    if image_source:
        try:
            import pyroomacoustics as pra
        except ImportError:
            pass
    if pra is None:
        info["method"] = "synthetic exponential decay"
        n = int(rt60 * SAMPLE_RATE)
        tail = rng.normal(size=n) * np.exp(-6.9 * np.arange(n) / n)
        rir = np.concatenate([[1.0], 0.3 * tail / np.sqrt(np.sum(tail ** 2))])
        return rir, info
    absorption, max_order = pra.inverse_sabine(rt60, dims)
    room = pra.ShoeBox(dims, fs=SAMPLE_RATE, materials=pra.Material(absorption), max_order=min(max_order, 12))
    room.add_source(src)
    room.add_microphone(mic)
    room.compute_rir()
    info["method"] = "pyroomacoustics image source"
    return np.asarray(room.rir[0][0], dtype=np.float64), info


def _noise(kind: str, n: int, rng, speech: np.ndarray) -> np.ndarray:
    spectrum = np.fft.rfft(rng.normal(size=n))
    f = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
    f[0] = f[1]
    if kind == "pink":
        spectrum /= np.sqrt(f)
    elif kind == "brown":
        spectrum /= f
    else:  # noise with the call's own long-term speech spectrum (babble-like)
        _, psd = signal.welch(speech, SAMPLE_RATE, nperseg=1024)
        spectrum *= np.sqrt(np.interp(f, np.linspace(0, SAMPLE_RATE / 2, len(psd)), psd))
    return np.fft.irfft(spectrum, n)


def _mu_law(x: np.ndarray) -> np.ndarray:
    y = np.sign(x) * np.log1p(255 * np.minimum(np.abs(x), 1.0)) / np.log(256)
    y = np.round(y * 127) / 127
    return np.sign(y) * ((1 + 255) ** np.abs(y) - 1) / 255


def _codec(x8k: np.ndarray, codec: str, bitrate: int) -> np.ndarray:
    """Encode and decode 8 kHz audio with PyAV (libopencore_amrnb or libopus)."""
    import av

    name, fmt, rate = ("libopencore_amrnb", "amr", 8000) if codec == "amr-nb" else ("libopus", "ogg", 48000)
    pcm = np.clip(x8k, -1, 1).astype(np.float32)
    if rate != 8000:
        pcm = signal.resample_poly(pcm, rate // 8000, 1).astype(np.float32)
    buf = io.BytesIO()
    with av.open(buf, "w", format=fmt) as out:
        stream = out.add_stream(name, rate=rate, layout="mono")
        stream.bit_rate = bitrate
        frame = av.AudioFrame.from_ndarray((pcm * 32767).astype(np.int16)[None, :], format="s16", layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    buf.seek(0)
    with av.open(buf) as src:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=8000)
        parts = [r.to_ndarray().reshape(-1) for f in src.decode(audio=0) for r in resampler.resample(f)]
    y = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    y = np.pad(y, (0, max(0, len(x8k) + 800 - len(y))))
    head = min(len(x8k), 80000)  # the codec's delay, by cross-correlation (at most 100 ms)
    lags = signal.correlate(y[: head + 800], x8k[:head], mode="valid", method="fft")
    delay = int(np.argmax(lags))
    return y[delay: delay + len(x8k)]


def channel(x: np.ndarray, band: str, bitrate: int | None) -> np.ndarray:
    """The telephone channel at 16 kHz out: band-limit, 8 kHz, mu-law or a codec, back up."""
    if band == "wide":
        return x
    sos = signal.butter(6, [300, 3400], "bandpass", fs=SAMPLE_RATE, output="sos")
    x8k = signal.resample_poly(signal.sosfiltfilt(sos, x), 1, 2)  # zero phase: turns keep their times
    peak = max(1e-9, float(np.max(np.abs(x8k))))
    scale = 0.9 / peak if peak > 0.9 else 1.0
    y = _mu_law(x8k * scale) if band == "telephone" else _codec(x8k * scale, band, bitrate)
    return signal.resample_poly(y / scale, 2, 1)[: len(x)]


def render(tracks: dict[str, np.ndarray], cond: Conditions, rng) -> np.ndarray:
    """Mix the parties' dry tracks (each at the target level) under ``cond``; sets cond.room."""
    mix = np.zeros(len(next(iter(tracks.values()))))
    for speaker, track in tracks.items():
        wet = track * 10 ** (cond.level_db[speaker] / 20)
        rt60 = cond.reverb_rt60[speaker]
        cond.room[speaker] = None
        if rt60:
            rir, cond.room[speaker] = room_rir(rt60, rng)
            direct = int(np.argmax(np.abs(rir)))  # keep the turns' times: drop the travel delay
            wet = signal.oaconvolve(wet, rir[direct:] / abs(rir[direct]))[: len(mix)]
        mix += wet
    if cond.snr_db is not None:
        noise = _noise(cond.noise, len(mix), rng, mix)
        mix += noise / active_rms(noise) * active_rms(mix) * 10 ** (-cond.snr_db / 20)
    mix = channel(mix, cond.band, cond.bitrate)
    mix *= 10 ** (TARGET_DBFS / 20) / active_rms(mix)
    peak = float(np.max(np.abs(mix)))
    return (mix * (0.95 / peak) if peak > 0.95 else mix).astype(np.float32)
