"""Running the engines for a file: devices, the plan, the workers, and the Transcript.

``Orchestrator`` owns one run's engine workers (a single file, or a whole batch with
``keep_workers``): it decodes each file once into shared memory, hands it to the Whisper and
diarization workers side by side or one after the other as the plan says (the scheduling
across files is ``witness.flow``), and merges the results into a Transcript that records
models, devices, the plan and timings.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from witness.accel.providers import ProviderChoice, available_providers, choose_provider
from witness.accel.vram import GpuMemory, free_vram, probe_gpus
from witness.asr.backend import gpu_backend_libraries
from witness.config import Settings
from witness.engines import AsrSettings, DiarizationJobSettings, asr_engine, diarization_engine
from witness.flow import FileJob, FileResult, Flow, default_jobs
from witness.pipeline import assemble, audio_meta
from witness.plan import EngineDevices, Plan, make_plan
from witness.progress import Progress
from witness.transcript import AudioMeta, Transcript
from witness.workers import SharedAudio, Worker

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Devices:
    """What each engine runs on (decided without touching a GPU in this process)."""

    asr_gpu_backend: str | None  # "vulkan", "cuda", … when whisper.cpp has one and may use it
    segmentation: ProviderChoice
    embedding: ProviderChoice
    gpus: tuple[GpuMemory, ...]

    def for_plan(self) -> EngineDevices:
        return EngineDevices(
            asr_gpu=self.asr_gpu_backend is not None,
            diarization_gpu=self.segmentation.on_gpu or self.embedding.on_gpu,
        )


def find_devices(settings: Settings, gpus: tuple[GpuMemory, ...] | None = None,
                 providers: tuple[str, ...] | None = None) -> Devices:
    """Where the engines would run with ``settings``: probes are injectable for tests."""
    gpus = probe_gpus() if gpus is None else gpus
    providers = available_providers() if providers is None else providers
    asr_gpu = None
    if settings.whisper.use_gpu:
        libraries = gpu_backend_libraries()
        asr_gpu = libraries[0] if libraries else None
    d = settings.diarization
    return Devices(
        asr_gpu_backend=asr_gpu,
        segmentation=choose_provider("segmentation", d.segmentation_device, providers),
        embedding=choose_provider("embedding", d.embedding_device, providers),
        gpus=gpus,
    )


def plan_for(settings: Settings, devices: Devices) -> Plan:
    return make_plan(devices.for_plan(), free_vram(devices.gpus, settings.whisper.gpu_device),
                     os.cpu_count() or 1, settings.plan)


class Orchestrator:
    """The engines for one run. ``diarize=False`` runs Whisper alone (``--no-diarize``).

    With ``keep_workers`` (batch), workers live until ``close()``; otherwise each worker is
    closed as soon as no file needs it, so in serial mode two GPU engines never hold memory
    at once. ``transcribe`` does one file, ``transcribe_many`` pipelines many
    (``witness.flow``); the other public methods are what the flow calls.
    """

    def __init__(self, settings: Settings, diarize: bool = True, keep_workers: bool = False,
                 devices: Devices | None = None):
        self.settings = settings
        self.diarize = diarize
        self.keep_workers = keep_workers
        self.devices = devices or find_devices(settings)
        self.plan = plan_for(settings, self.devices)
        self._workers: dict[str, Worker] = {}
        for reason in self.plan.reasons:
            log.info("plan: %s", reason)

    def transcribe(self, path: str | Path, progress: Progress | None = None) -> Transcript:
        """Decode, run the engines as planned, merge; InputError for bad audio, WorkerDied
        when a worker dies (no retry for a single file)."""
        (result,) = self.transcribe_many([FileJob(str(path))], jobs=1, retries=0, progress=progress)
        if result.error is not None:
            raise result.error
        return result.transcript

    def transcribe_many(self, files: Iterable[FileJob], jobs: int | None = None, retries: int = 1,
                        progress: Progress | None = None) -> Iterator[FileResult]:
        """A FileResult per file as it finishes, with at most ``jobs`` files in flight
        (default: ``flow.default_jobs`` for the plan); paths must be distinct."""
        flow = Flow(self, jobs or default_jobs(self.plan.mode), retries, self.keep_workers, progress)
        try:
            yield from flow.run(files)
        finally:
            if not self.keep_workers:
                self.close()

    # --- what the flow calls ----------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        return ("asr", "diarization") if self.diarize else ("asr",)

    @property
    def mode(self) -> str:
        return self.plan.mode

    def decode(self, path: str, sha256: str = "") -> tuple[AudioMeta, SharedAudio]:
        """``path`` decoded into shared memory (/dev/shm when there is one); InputError for
        bad audio. ``sha256`` of the file when the caller has it (else computed)."""
        info, audio = SharedAudio.decode(path)
        return audio_meta(info, audio.length, sha256), audio

    def transcript(self, meta: AudioMeta, results: dict[str, Any], timings: dict[str, float]) -> Transcript:
        """Merge the engines' ``results`` (by engine name) into the file's Transcript;
        ``timings`` has "decode" and "engines" seconds, merge and total are added."""
        start = time.perf_counter()
        asr, diarization = results["asr"], results.get("diarization")
        engines = {"asr": dict(asr.info)}
        timings = {**timings, "asr": asr.seconds}
        turns = exclusive = None
        if diarization is not None:
            engines["diarization"] = dict(diarization.info)
            timings["diarization"] = diarization.seconds
            turns, exclusive = diarization.turns, diarization.exclusive_turns
        transcript = assemble(meta, asr.words, turns, exclusive, self.settings.merge,
                              engines=engines, plan=self.plan.to_dict())
        timings["merge"] = time.perf_counter() - start
        timings["total"] = timings["decode"] + timings["engines"] + timings["merge"]
        return replace(transcript, timings={k: round(v, 3) for k, v in timings.items()})

    def worker(self, name: str) -> Worker:
        """The engine's worker, started (loading its model on its first job) when there is
        none or the last one ended."""
        worker = self._workers.get(name)
        if worker is None or not worker.alive:
            factory, args = self._factory(name)
            worker = self._workers[name] = Worker(name, factory, args)
        return worker

    def _factory(self, name: str) -> tuple[Callable[..., Any], tuple]:
        s, models_dir = self.settings, self.settings.models.dir or None
        if name == "asr":
            options = s.whisper if s.whisper.threads else replace(s.whisper, threads=self.plan.whisper_threads)
            return asr_engine, (AsrSettings(s.asr.model, options, models_dir, s.models.offline),)
        return diarization_engine, (DiarizationJobSettings(
            s.diarization, self.devices.segmentation, self.devices.embedding, models_dir, s.models.offline),)

    def release(self, name: str, timeout: float = 10.0) -> None:
        """Close the engine's worker (waiting up to ``timeout`` s for its current job)."""
        worker = self._workers.pop(name, None)
        if worker is not None:
            worker.close(timeout)

    def close(self, timeout: float = 10.0) -> None:
        for name in list(self._workers):
            self.release(name, timeout)

    def __enter__(self) -> "Orchestrator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
