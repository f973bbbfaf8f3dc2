"""Read torch checkpoints into numpy arrays, without torch: old-format and zip-format files.

``load_checkpoint`` takes either layout. The zip layout (torch >= 1.6, ``torch.save``'s default)
is a zip archive with one folder holding ``data.pkl`` (the saved object, its storages as
persistent ids ``("storage", type, key, location, numel)``) and ``data/<key>`` (each storage's
raw little-endian elements).

The legacy layout written by ``torch.save(..., _use_new_zipfile_serialization=False)`` is five
pickles followed by raw storages:

1. the magic number, 2. the protocol version (1001), 3. system info (endianness, type sizes),
4. the saved object, whose tensors are ``torch._utils._rebuild_tensor_v2(storage, offset, size,
   stride, ...)`` calls and whose storages are persistent ids ``("storage", type, key, location,
   numel, view)``, 5. the list of storage keys in file order; then, for each key, an int64
   element count and that many little-endian elements.

Every pickle goes through a restricted unpickler: it resolves only ``collections.OrderedDict``, the tensor rebuild
functions and the storage type names; any other global is refused, so a crafted file cannot run
code. Tensors come back as read-only numpy arrays in the same dict/list structure.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from witness.errors import ModelError

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001

_STORAGE_DTYPES = {
    "FloatStorage": np.dtype("<f4"),
    "DoubleStorage": np.dtype("<f8"),
    "HalfStorage": np.dtype("<f2"),
    "LongStorage": np.dtype("<i8"),
    "IntStorage": np.dtype("<i4"),
    "ShortStorage": np.dtype("<i2"),
    "CharStorage": np.dtype("i1"),
    "ByteStorage": np.dtype("u1"),
    "BoolStorage": np.dtype("?"),
}


@dataclass(frozen=True)
class _StorageType:
    dtype: np.dtype


@dataclass(frozen=True)
class _StorageRef:
    key: str
    dtype: np.dtype
    numel: int


@dataclass(frozen=True)
class _TensorRef:
    storage: _StorageRef
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]


def _rebuild_tensor(storage, offset, size, stride, *_ignored) -> _TensorRef:
    return _TensorRef(storage, int(offset), tuple(size), tuple(stride))


def _rebuild_parameter(data, *_ignored):
    return data


class _Inert:
    """Stands in for metadata objects a checkpoint carries beside its tensors (torch's version
    string, pyannote's task description): keeps their arguments and state, runs no code."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __setstate__(self, state):
        self.state = state


# Metadata classes that pyannote's Lightning checkpoints pickle; never needed for the weights.
_INERT = {("torch.torch_version", "TorchVersion"), ("pyannote.audio.core.task", "Specifications"),
          ("pyannote.audio.core.task", "Problem"), ("pyannote.audio.core.task", "Resolution")}

_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
}


class _Unpickler(pickle.Unpickler):
    """Resolves only the globals a plain state dict needs; storages become references."""

    def __init__(self, file: BinaryIO, path: Path):
        super().__init__(file)
        self._path = path

    def find_class(self, module: str, name: str):
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(_STORAGE_DTYPES[name])
        if (module, name) in _INERT:
            return _Inert
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise ModelError(
                f"refusing to load: the checkpoint asks for {module}.{name}, which a plain "
                "tensor checkpoint never needs", self._path) from None

    def persistent_load(self, pid):
        # legacy: ("storage", type, key, location, numel, view); zip: the same without view
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise ModelError(f"unexpected persistent id {pid!r}", self._path)
        if len(pid) == 6 and pid[5] is not None:
            raise ModelError("storage views are not supported", self._path)
        return _StorageRef(str(pid[2]), pid[1].dtype, int(pid[4]))


_UNREADABLE = (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, KeyError,
               IndexError, struct.error, zipfile.BadZipFile)


def load_checkpoint(path: str | Path) -> Any:
    """Load a torch checkpoint of either layout; tensors become read-only numpy arrays.

    Raises ModelError (naming the file) for anything that is not such a checkpoint.
    """
    path = Path(path)
    if zipfile.is_zipfile(path):
        try:
            return _load_zip(path)
        except ModelError:
            raise
        except _UNREADABLE as exc:
            raise ModelError(f"unreadable torch checkpoint ({exc}); download it again", path) from None
    return load_legacy_checkpoint(path)


def _load_zip(path: Path) -> Any:
    with zipfile.ZipFile(path) as archive:
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise ModelError("not a torch checkpoint (no single data.pkl in the zip)", path)
        folder = pickles[0][: -len("data.pkl")]
        byteorder = folder + "byteorder"  # absent in files from torch < 1.10: little-endian
        if byteorder in archive.namelist() and archive.read(byteorder).strip() != b"little":
            raise ModelError("big-endian torch checkpoints are not supported", path)
        obj = _Unpickler(io.BytesIO(archive.read(pickles[0])), path).load()
        storages = {}
        for key, ref in _storage_refs(obj).items():
            data = archive.read(f"{folder}data/{key}")
            if len(data) != ref.numel * ref.dtype.itemsize:
                raise ModelError(f"storage {key} is truncated or has the wrong size", path)
            array = np.frombuffer(data, dtype=ref.dtype)
            array.flags.writeable = False
            storages[key] = array
    return _materialise(obj, storages)


def load_legacy_checkpoint(path: str | Path) -> Any:
    """Load an old-format torch checkpoint; tensors become read-only numpy arrays.

    Raises ModelError (naming the file) for anything that is not such a checkpoint.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            return _load(f, path)
    except ModelError:
        raise
    except _UNREADABLE as exc:
        raise ModelError(f"unreadable torch checkpoint ({exc}); download it again", path) from None


def _load(f: BinaryIO, path: Path) -> Any:
    header = [_Unpickler(f, path).load() for _ in range(2)]
    if header != [MAGIC_NUMBER, PROTOCOL_VERSION]:
        raise ModelError("not an old-format torch checkpoint (bad magic number or protocol; "
                         "zip-format checkpoints are not supported)", path)
    sys_info = _Unpickler(f, path).load()
    if not (isinstance(sys_info, dict) and sys_info.get("little_endian", False)):
        raise ModelError("big-endian torch checkpoints are not supported", path)
    obj = _Unpickler(f, path).load()
    keys = _Unpickler(f, path).load()
    storages = _read_storages(f, keys, _storage_refs(obj), path)
    return _materialise(obj, storages)


def _storage_refs(obj: Any) -> dict[str, _StorageRef]:
    """Every storage referenced by a tensor in ``obj``, by key."""
    refs: dict[str, _StorageRef] = {}
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, _TensorRef):
            refs[item.storage.key] = item.storage
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return refs


def _read_storages(f: BinaryIO, keys: list, refs: dict[str, _StorageRef],
                   path: Path) -> dict[str, np.ndarray]:
    """Read each storage (int64 count + data) in file order; returns 1-D arrays by key."""
    storages = {}
    for key in map(str, keys):
        ref = refs.get(key)
        if ref is None:
            raise ModelError(f"storage {key} is not referenced by any tensor", path)
        (numel,) = struct.unpack("<q", f.read(8))
        data = f.read(numel * ref.dtype.itemsize)
        if numel != ref.numel or len(data) != numel * ref.dtype.itemsize:
            raise ModelError(f"storage {key} is truncated or has the wrong size", path)
        array = np.frombuffer(data, dtype=ref.dtype)
        array.flags.writeable = False
        storages[key] = array
    missing = set(refs) - set(storages)
    if missing:
        raise ModelError(f"storages missing from the file: {sorted(missing)}", path)
    return storages


def _tensor(ref: _TensorRef, base: np.ndarray) -> np.ndarray:
    """The tensor ``ref`` as a read-only contiguous copy of its slice of ``base`` (1-D)."""
    if any(n < 0 for n in ref.shape) or any(s < 0 for s in ref.stride) or ref.offset < 0:
        raise ValueError(f"negative size, stride or offset in tensor {ref}")
    last = ref.offset + sum((n - 1) * s for n, s in zip(ref.shape, ref.stride))
    if 0 not in ref.shape and last >= base.size:
        raise ValueError(f"tensor {ref} reaches past its storage of {base.size} elements")
    itemsize = base.dtype.itemsize
    view = np.lib.stride_tricks.as_strided(
        base[ref.offset:], shape=ref.shape,
        strides=tuple(s * itemsize for s in ref.stride), writeable=False)
    array = np.array(view)  # contiguous copy, detached from the file buffer
    array.flags.writeable = False
    return array


def _materialise(obj: Any, storages: dict[str, np.ndarray]) -> Any:
    """Replace tensor references with numpy views on their storages (recursively)."""
    if isinstance(obj, _TensorRef):
        return _tensor(obj, storages[obj.storage.key])
    if isinstance(obj, dict):
        return type(obj)((k, _materialise(v, storages)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_materialise(v, storages) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_materialise(v, storages) for v in obj)
    return obj
