"""How much GPU memory the chosen models need side by side: the plan's VRAM floor.

* **Whisper** (whisper.cpp): weights (the ggml file) + KV caches + compute buffers.
  The KV caches follow from the model's dimensions as whisper.cpp sizes them (f16 keys and
  values; text context 448 padded to 512, audio context 1500 padded to 1536): this formula
  gives the sizes whisper.cpp logs on load for tiny.en and base exactly. The self-attention
  cache is counted once per decoder (beam size or best-of, whichever is larger), as sampling
  fallbacks run that many at once. The compute buffers are what whisper.cpp logged when it
  loaded tiny.en and base here with the default settings (DTW timestamps, so flash attention
  off); other sizes are scaled linearly in the model's width through those two points
  (``scripts/measure_model_memory.py`` prints the logged sizes of the models it finds).
* **Diarization** (ONNX Runtime): weights (the ONNX files) + activations for the planned
  batch: the peak above a loaded session on ONNX Runtime's CPU allocator, per row
  (``scripts/measure_model_memory.py``); a GPU provider's arena may round it up, which the
  margin is for.
* **Runtime**: the engines' GPU contexts (whisper.cpp's Vulkan device; ONNX Runtime's CUDA
  provider and its cuBLAS/cuDNN workspaces), which no file size shows. Calibrated on the one
  measurement there is: tiny.en and the default diarization models side by side on an H100
  took 1.7 GiB above the baseline (1.1 GiB one after the other; issue 15).

The plan asks for the total plus ``MARGIN``; a Whisper model of unknown dimensions (an
imported name) gives no estimate, and the plan keeps its default floor.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

GIB = 1 << 30
MB = 1_000_000  # whisper.cpp and the measurements print decimal megabytes

MARGIN = 0.25  # asked for on top of the estimate: allocator rounding, fragmentation, drivers

# (n_audio_state, n_audio_layer, n_text_state, n_text_layer) per architecture (the ggml header's)
WHISPER_DIMS = {
    "tiny": (384, 4, 384, 4),
    "base": (512, 6, 512, 6),
    "small": (768, 12, 768, 12),
    "medium": (1024, 24, 1024, 24),
    "large": (1280, 32, 1280, 32),
    "large-v3-turbo": (1280, 32, 1280, 4),
}
TEXT_CTX, AUDIO_CTX = 448, 1500

# whisper.cpp's compute buffers (conv, encode, cross, decode; MB) as it logged them loading
# tiny.en (width 384) and base (width 512) with pywhispercpp 1.5.1 on the CPU, default settings
COMPUTE_MEASURED = {384: (13.21, 64.81, 3.89, 134.23), 512: (16.28, 85.88, 4.66, 140.29)}

# Per embedding model: (ONNX weights, activations per model-call row) in MB, measured with
# scripts/measure_model_memory.py (rows: 10 s of fbank frames for CAM++ and WeSpeaker, a 1.6 s
# partial for GE2E). WeSpeaker's activations were not measured (hub-only model): CAM++'s are
# taken, its weights are the file's size.
EMBEDDING_MB = {"campplus": (27.7, 26.6), "ge2e": (5.7, 1.0), "wespeaker": (26.5, 26.6)}
SEGMENTATION_MB = {"fp32": (6.0, 10.5), "int8": (1.6, 10.5)}  # weights, per 10 s window
DEFAULT_EMBEDDING_BATCH = {"campplus": 16, "ge2e": 64, "wespeaker": 16}
SEGMENTATION_WINDOWS = 8  # windows per segmentation call (the pipeline's windows_per_batch)

# tiny.en + the default diarization models side by side on an H100, above baseline (issue 15)
MEASURED_SIDE_BY_SIDE = ("tiny.en", 1.7 * GIB)


@dataclass(frozen=True)
class VramNeed:
    """Bytes each part needs on the GPU, and how the Whisper figure was found."""

    whisper: int
    diarization: int
    runtime: int
    whisper_source: str

    @property
    def total(self) -> int:
        return self.whisper + self.diarization + self.runtime

    @property
    def floor_gib(self) -> float:
        """What the plan asks for side by side: the total plus the margin, to 0.1 GiB up."""
        return -(-round(self.total * (1 + MARGIN) / GIB * 100) // 10) / 10

    def to_dict(self) -> dict:
        return {"whisper_gib": _gib(self.whisper), "diarization_gib": _gib(self.diarization),
                "runtime_gib": _gib(self.runtime), "total_gib": _gib(self.total), "margin": MARGIN,
                "floor_gib": self.floor_gib, "whisper_source": self.whisper_source}


def _gib(n: int) -> float:
    return round(n / GIB, 2)


def architecture(name: str) -> str | None:
    """The WHISPER_DIMS key of a model name (``large-v2-q5_0`` -> large), None if unknown."""
    base = name.split("-q")[0].removesuffix(".en")
    if base.startswith("large-v3-turbo"):
        return "large-v3-turbo"
    if base == "large" or base.startswith("large-v"):
        return "large"
    return base if base in WHISPER_DIMS else None


def compute_buffers(audio_state: int, text_state: int) -> int:
    """whisper.cpp's four compute buffers in bytes, interpolated in the model's width."""
    (w0, low), (w1, high) = sorted(COMPUTE_MEASURED.items())
    widths = (audio_state, audio_state, text_state, text_state)  # conv, encode | cross, decode
    return round(sum(a + (b - a) * (w - w0) / (w1 - w0) for a, b, w in zip(low, high, widths)) * MB)


def kv_caches(dims: tuple[int, int, int, int], decoders: int = 1) -> tuple[int, int, int]:
    """(self, cross, pad) KV cache bytes as whisper.cpp allocates them (f16 keys and values)."""
    audio_state, _, text_state, text_layers = dims
    text_ctx, audio_ctx = _pad(TEXT_CTX), _pad(AUDIO_CTX)
    return (decoders * text_layers * text_ctx * text_state * 4, text_layers * audio_ctx * text_state * 4,
            audio_ctx * audio_state * 4)


def _pad(n: int, to: int = 256) -> int:
    return -(-n // to) * to


def whisper_need(model: str, decoders: int = 1) -> tuple[int, str] | None:
    """(bytes, how found) for a catalogue name or a ggml file; None when unknown."""
    path = Path(model)
    if path.is_file():
        from witness.errors import ModelError
        from witness.models.ggml import read_hparams

        try:
            hp, _ = read_hparams(path)
        except (ModelError, OSError):  # said where the model loads; here it only means "unknown"
            return None
        dims = (hp.n_audio_state, hp.n_audio_layer, hp.n_text_state, hp.n_text_layer)
        weights, source = path.stat().st_size, f"{path.name}: its size and header"
    else:
        from witness.models.whisper_catalogue import lookup

        arch, entry = architecture(model), lookup(model)
        if arch is None or entry is None:
            return None
        base = lookup(entry.base)
        ggml = entry.ggml or (base.ggml if base else None)
        if ggml is None:
            return None
        dims, weights, source = WHISPER_DIMS[arch], ggml.size, f"{model}: ggml size and {arch} dimensions"
    return weights + sum(kv_caches(dims, decoders)) + compute_buffers(dims[0], dims[2]), source


def diarization_need(segmentation: str = "fp32", embedding: str = "campplus", embedding_batch: int = 0,
                     segmentation_on_gpu: bool = True, embedding_on_gpu: bool = True) -> int:
    """Bytes the diarization models on a GPU provider need: weights + one call's activations."""
    seg_weights, per_window = SEGMENTATION_MB.get(segmentation, SEGMENTATION_MB["fp32"])
    emb_weights, per_row = EMBEDDING_MB.get(embedding, EMBEDDING_MB["campplus"])
    batch = embedding_batch or DEFAULT_EMBEDDING_BATCH.get(embedding, 16)
    need = 0.0
    if segmentation_on_gpu:
        need += seg_weights + per_window * SEGMENTATION_WINDOWS
    if embedding_on_gpu:
        need += emb_weights + per_row * batch
    return round(need * MB)


def runtime_overhead() -> int:
    """The engines' GPU contexts: the H100 side-by-side measurement less what its models need."""
    model, measured = MEASURED_SIDE_BY_SIDE
    whisper, _ = whisper_need(model)  # type: ignore[misc]  (a catalogue name: always known)
    return max(0, round(measured) - whisper - diarization_need())


def estimate(model: str, segmentation: str = "fp32", embedding: str = "campplus", embedding_batch: int = 0,
             decoders: int = 1, segmentation_on_gpu: bool = True, embedding_on_gpu: bool = True) -> VramNeed | None:
    """What ``model`` and the diarization models need side by side; None when the Whisper
    model's dimensions are unknown. ``segmentation``: "fp32" or "int8"; ``embedding``:
    "campplus", "ge2e" or "wespeaker" ("auto" counts as CAM++, the default)."""
    found = whisper_need(model, decoders)
    if found is None:
        return None
    whisper, source = found
    embedding = "campplus" if embedding == "auto" else embedding
    segmentation = "fp32" if segmentation == "auto" else segmentation
    diarization = diarization_need(segmentation, embedding, embedding_batch, segmentation_on_gpu, embedding_on_gpu)
    return VramNeed(whisper, diarization, runtime_overhead(), source)
