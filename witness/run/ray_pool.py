"""A batch's files through a pool of Ray actors (``witness batch --ray ADDRESS``).

The driver (this process) does what it does locally: the plan, the models resolved once
(``jobs.resolve_models``), the merge (it decodes the call itself only for the merge's
second opinion), every output and every manifest row. Each
actor is a long-lived Ray worker process that builds the engines the local workers build
(``engines.FACTORIES``, from the same jobs) on its first file and keeps them: it
reads the input itself from the path it is given (a filesystem every node mounts at the
same path; no audio goes through Ray's object store), decodes it, runs Whisper and
diarization (side by side in two threads when the plan says parallel, else one after the
other) and returns the words and turns. One file per actor at a time, so when an actor dies
the driver knows which file it was on: that file is tried again on a fresh actor once
(``retries``), and the batch goes on.

Outputs are written by the driver from what the actors return (a transcript is kilobytes),
so OUTDIR need only be visible to the driver, and the driver alone writes the manifest; an
output and its row are written together, as locally. Actors writing outputs onto a shared
filesystem themselves would only pay for outputs too big to send back (not transcripts),
and would split an output from its row across machines.

Pool and resources come from the plan, made for the biggest node's CPUs: an actor reserves
the CPU threads its engines use, as many actors as the nodes' CPUs hold, and when an engine
runs on a GPU each actor reserves its node's GPUs split between its actors (a fraction:
four actors share a card). ``--ray-actors`` and ``--ray-gpus-per-actor`` override both.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import logging
import os
import signal
import socket
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from witness.config import Settings
from witness.errors import InputError, ModelError, UsageError, WitnessError, engine_error, file_error
from witness.run.flow import FileJob, FileResult, merged
from witness.progress import Progress
from witness.transcript import AudioMeta

if TYPE_CHECKING:
    from witness.run.jobs import EngineJobs
    from witness.run.workers import SharedAudio

log = logging.getLogger(__name__)

INSTALL_HINT = "--ray needs Ray, which is not installed: pip install 'witness[ray]'"
WAIT = 0.5  # s: longest wait for an actor's answer before looking again


@dataclass(frozen=True)
class RayOptions:
    """``--ray ADDRESS`` ("auto", "local" or a cluster address), ``--ray-actors`` (0: as
    many as the cluster holds) and ``--ray-gpus-per-actor`` (None: from the plan)."""

    address: str
    actors: int = 0
    gpus_per_actor: float | None = None


def import_ray():
    """The ``ray`` module, or UsageError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


def connect(ray, address: str) -> None:
    """Join the cluster at ``address`` ("auto": RAY_ADDRESS or the one running here; "local":
    start one in this process with this machine's cores); UsageError when there is none."""
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}  # one line per problem is ours to say
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        if address == "local":
            # No idle workers started ahead (78 MiB each): the actors are all the workers a batch needs.
            ray.init(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False, **quiet,
                     _system_config={"enable_worker_prestart": False, "prestart_worker_first_driver": False})
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"--ray {address}: cannot join a Ray cluster ({first}); start one with "
                         "`ray start --head`, or pass its address") from None
    finally:  # ray.init makes SIGTERM exit at once; the batch stops on it as on Ctrl-C (and closes Ray)
        if sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, sigterm)


# --- the actor ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What an actor returns for one file: its audio's metadata and each engine's result
    (by engine name), with "decode" and "engines" seconds; or the error that ended it
    (``engines_ran``: after decoding, in an engine)."""

    meta: AudioMeta | None
    results: Mapping[str, Any]
    timings: Mapping[str, float]
    error: WitnessError | None = None
    engines_ran: bool = True


def node_name() -> str:
    return socket.gethostname()


class EngineActor:
    """The body of each Ray actor: ``factories[name](jobs[name])`` builds engine ``name`` on
    the first file (the local workers' engines, from the same jobs); ``parallel``: run them
    side by side. ``model_files`` are checked on this node first (``ready``)."""

    def __init__(self, factories: Mapping[str, Callable[..., Any]], jobs: Mapping[str, Any], parallel: bool,
                 stereo: bool, model_files: tuple[str, ...]):
        self.factories, self.jobs, self.model_files = dict(factories), dict(jobs), model_files
        self.parallel, self.stereo = parallel, stereo
        self.engines: dict[str, Any] = {}

    def ready(self) -> str | None:
        """None when every model file is on this node, else why not (one line)."""
        missing = [path for path in self.model_files if not os.path.exists(path)]
        if missing:
            return (f"model file {missing[0]} is not on Ray node {node_name()}: put the models folder "
                    "(--models-dir) on a filesystem every node mounts at the same path, or run "
                    "`witness warmup` with the same options on every node")
        return None

    def transcribe(self, path: str, sha256: str) -> Answer:
        """Decode ``path`` (as this node sees it) and run every engine on it."""
        from witness.run.orchestrate import decode_shared

        if not os.path.exists(path):
            return Answer(None, {}, {}, InputError(f"not found on Ray node {node_name()} (inputs must be on a "
                                                   "filesystem every node mounts at the same path)", path), engines_ran=False)
        start = time.perf_counter()
        try:
            meta, audio = decode_shared(path, sha256, self.stereo)
        except Exception as exc:
            return Answer(None, {}, {}, file_error(exc, path), engines_ran=False)
        try:
            decoded = time.perf_counter()
            results = self._run_engines(audio, path)
            timings = {"decode": decoded - start, "engines": time.perf_counter() - decoded}
            return Answer(meta, results, timings)
        except WitnessError as exc:
            return Answer(None, {}, {}, exc)
        finally:
            audio.unlink()

    def _run_engines(self, audio: SharedAudio, path: str) -> dict[str, Any]:
        names = list(self.jobs)
        if not self.parallel or len(names) < 2:
            return {name: self._run(name, audio, path) for name in names}
        with ThreadPoolExecutor(len(names)) as pool:
            futures = {name: pool.submit(self._run, name, audio, path) for name in names}
            return {name: future.result() for name, future in futures.items()}

    def _run(self, name: str, audio: SharedAudio, path: str) -> Any:
        """Engine ``name`` on ``audio``; errors named as the local workers name them."""
        try:
            if name not in self.engines:
                self.engines[name] = self.factories[name](self.jobs[name])
            return self.engines[name](audio, None)
        except Exception as exc:  # this file fails, the actor lives on
            raise engine_error(name, exc, path) from None


class ActorDied(WitnessError):
    """The Ray actor working on a file died (a native crash, out of memory, a lost node)."""

    def __init__(self, path: str):
        super().__init__("the Ray actor working on it died", path)


# --- the pool -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActorShape:
    """How many actors, and what each reserves from Ray."""

    actors: int
    cpus: int
    gpus: float


def actor_shape(nodes: list[Mapping[str, float]], cpus: int, on_gpu: bool, options: RayOptions) -> ActorShape:
    """The pool for ``nodes`` (each alive node's Ray resources) when an actor needs ``cpus``
    CPUs and, if ``on_gpu``, a share of a GPU; UsageError when the cluster cannot hold what
    ``options`` ask for (an actor that cannot be placed would wait forever)."""
    per_node = [int(node.get("CPU", 0) // cpus) for node in nodes]
    gpus = options.gpus_per_actor
    if gpus is None:
        shares = [node.get("GPU", 0) / n for node, n in zip(nodes, per_node) if n and node.get("GPU", 0)]
        gpus = round(min(shares), 4) if on_gpu and shares else 0.0
        if on_gpu and not shares:
            log.warning("an engine is planned on a GPU, but no Ray node with room for an actor offers one: "
                        "the actors reserve none")
    if gpus:
        per_node = [min(n, int(node.get("GPU", 0) / gpus + 1e-9)) for node, n in zip(nodes, per_node)]
    room = sum(per_node)
    wanted = f"{cpus} CPUs" + (f" and {gpus:g} GPU" if gpus else "")
    if room == 0:
        raise UsageError(f"no node of the Ray cluster has room for an actor of {wanted} (the plan's threads; "
                         "set [plan] threads, or --ray-gpus-per-actor)")
    if options.actors > room:
        raise UsageError(f"--ray-actors {options.actors}: the Ray cluster has room for {room} actors of {wanted}")
    return ActorShape(options.actors or room, cpus, gpus)


def model_files(jobs: EngineJobs) -> tuple[str, ...]:
    """Every model file the engine jobs (``jobs.worker_jobs``) open."""
    files: list[Any] = []
    if jobs.asr is not None:
        files += [jobs.asr.model.path, jobs.asr.vad, jobs.asr.channel_vad]
    if jobs.diarization is not None:
        models = jobs.diarization.models
        files += [models.segmentation, models.vad, models.embedding_path, jobs.diarization.channel_vad]
    return tuple(str(f) for f in files if f)


def run_on_ray(files: Iterable[FileJob], settings: Settings, options: RayOptions, *, diarize: bool = True,
               retries: int = 1, model_progress: Progress | None = None) -> Iterator[FileResult]:
    """``orchestrate.run`` on a Ray cluster (see the module docstring): a FileResult per
    file as it finishes; a file whose actor died is tried ``retries`` more times on a fresh
    one. Stopping early (an error, Ctrl-C, closing the iterator) kills the actors."""
    source = iter(files)
    first = next(source, None)
    if first is None:  # nothing to do (a re-run that skips every file): no cluster needed
        return
    ray = import_ray()
    pool = None
    # A Ray driver prints the cluster's error reports (a dead worker's, with its logs) on
    # stdout whatever ``log_to_driver`` says; stdout is for transcripts, and the batch says
    # in one line what became of the file. They go to the debug log (--debug).
    with contextlib.redirect_stdout(_DebugLog()):
        connect(ray, options.address)
        try:
            pool = _Pool(ray, settings, options, diarize, model_progress)
            yield from pool.run(itertools.chain([first], source), retries)
        finally:
            if pool is not None:
                pool.close()
            ray.shutdown()


class _DebugLog(io.TextIOBase):
    """A text stream whose lines go to the debug log."""

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                log.debug("ray: %s", line)
        return len(text)


class _Pool:
    """The actors and the files on them (driver-side bookkeeping)."""

    def __init__(self, ray, settings: Settings, options: RayOptions, diarize: bool, model_progress: Progress | None):
        from witness.run.engines import FACTORIES
        from witness.run.orchestrate import Orchestrator, Sources

        self.ray = ray
        nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]
        cores = int(max(node.get("CPU", 1) for node in nodes))
        self.host = Orchestrator(settings, Sources(turns=diarize), model_progress=model_progress, cores=cores)
        plan, names = self.host.plan, self.host.names
        threads = {"asr": plan.whisper_threads, "diarization": plan.onnx_threads}
        used = [threads[name] for name in names]
        cpus = sum(used) if plan.mode == "parallel" else max(used)
        devices = self.host.devices.for_plan()
        self.shape = actor_shape(nodes, cpus, devices.asr_gpu or devices.diarization_gpu, options)
        log.info("ray: %d actors of %d CPUs%s", self.shape.actors, self.shape.cpus,
                 f" and {self.shape.gpus:g} GPU" if self.shape.gpus else "")
        jobs = self.host.engine_jobs()  # models resolved here, once; enrolled voices loaded for the merge
        self.args = ({name: FACTORIES[name] for name in names}, jobs.by_name(), plan.mode == "parallel",
                     self.host.decodes_stereo, model_files(jobs))
        self.remote = ray.remote(EngineActor)
        self.actors = [self._start() for _ in range(self.shape.actors)]
        self._check(self.actors)

    def _start(self):
        return self.remote.options(num_cpus=self.shape.cpus, num_gpus=self.shape.gpus, max_restarts=0,
                                   max_task_retries=0).remote(*self.args)

    def _check(self, actors) -> None:
        """ModelError when an actor's node lacks a model file; UsageError when no actor can
        start there (e.g. Witness is not installed on the node)."""
        try:
            problems = self.ray.get([actor.ready.remote() for actor in actors])
        except self.ray.exceptions.RayError as exc:
            cause = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise UsageError(f"a Witness actor cannot start on the Ray cluster ({cause}); every node needs "
                             "the same witness installed as this machine") from None
        problem = next((p for p in problems if p), None)
        if problem:
            raise ModelError(problem)

    def run(self, files: Iterable[FileJob], retries: int) -> Iterator[FileResult]:
        source = iter(files)
        idle = deque(self.actors)
        again: deque[tuple[FileJob, int]] = deque()  # files whose actor died, with their tries so far
        running: dict[Any, tuple[Any, FileJob, int, float]] = {}  # answer ref -> (actor, job, tries, started)
        upcoming = next(source, None)
        while upcoming is not None or again or running:
            while idle and (again or upcoming is not None):
                if again:
                    job, tries = again.popleft()
                else:
                    (job, tries), upcoming = (upcoming, 0), next(source, None)
                actor = idle.popleft()
                ref = actor.transcribe.remote(os.path.abspath(job.path), job.sha256)
                running[ref] = (actor, job, tries + 1, time.perf_counter())
            done, _ = self.ray.wait(list(running), num_returns=1, timeout=WAIT)
            for ref in done:
                actor, job, tries, started = running.pop(ref)
                try:
                    answer = self.ray.get(ref)
                except self.ray.exceptions.RayActorError:
                    self._replace(actor, idle)
                    if tries <= retries:
                        log.warning("%s: the Ray actor working on it died; trying again on a fresh actor", job.path)
                        again.append((job, tries))
                        continue
                    yield FileResult(job.path, None, ActorDied(job.path), tries, time.perf_counter() - started)
                    continue
                idle.append(actor)
                yield self._result(job, answer, tries, time.perf_counter() - started)

    def _replace(self, dead, idle: deque) -> None:
        self.ray.kill(dead)
        fresh = self._start()
        self.actors = [fresh if actor is dead else actor for actor in self.actors]
        idle.append(fresh)

    def _result(self, job: FileJob, answer: Answer, tries: int, seconds: float) -> FileResult:
        if answer.error is not None:
            return FileResult(job.path, None, answer.error, tries if answer.engines_ran else 0, seconds)
        meta = replace(answer.meta, path=job.path)  # the input as found, as locally
        audio = self._audio_for_merge(job, answer.results.get("diarization"))
        try:
            transcript, error = merged(self.host, job.path, meta, dict(answer.results), dict(answer.timings), audio)
        finally:
            if audio is not None:
                audio.unlink()
        return FileResult(job.path, transcript, error, tries, seconds)

    def _audio_for_merge(self, job: FileJob, diarization: Any) -> SharedAudio | None:
        """The call decoded here too when the merge's second opinion will embed some of it (the
        actors' audio stays on their nodes), so a Ray batch's transcripts equal a local one's;
        None when it cannot run on ``diarization``, or the driver cannot read the file."""
        if not self.host.second_opinion_possible(diarization):
            return None
        try:
            return self.host.decode(job.path, job.sha256)[1]
        except (WitnessError, OSError) as exc:
            log.info("%s: no second opinion (%s)", job.path, exc)
            return None

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
