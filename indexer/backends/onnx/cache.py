"""The optimised copy of a model kept on disk, so that a fresh process loads it in a few hundredths
of a second instead of optimising the graph again.

Kept under ``$XDG_CACHE_HOME/indexer/onnx/`` (default ``~/.cache``), keyed by the model, the
onnxruntime version, the machine, the edits and the precision with the CPU's int8 instructions. A
copy is written to a scratch folder and renamed into place (atomic, so concurrent processes never
see half of one); one that does not load is thrown away and made again; what a killed process left
is removed once it is old enough to have no owner.
"""

from __future__ import annotations

import hashlib
import os
import platform
import threading
import time
from pathlib import Path

import onnxruntime as ort

from indexer.backends.onnx.cpu import INT8_SCHEME, INT8_SCHEMES

#: File names inside an optimised-model cache folder: the graph and its weights beside it.
OPTIMIZED_MODEL = "model.onnx"
OPTIMIZED_WEIGHTS = "weights.bin"

#: Changes whenever what is saved changes, so older copies are not loaded.
CACHE_FORMAT = "extended without SkipLayerNormFusion, NaN guards dropped, BiasGelu fused"

#: Seconds after which a scratch folder in the cache counts as left behind by a killed process.
ABANDONED_AFTER = 600


def sync_folder(folder: Path) -> None:
    """Flush a folder's files to disk, so a crash after the rename cannot leave a renamed, empty copy."""
    for path in folder.iterdir():
        with path.open("rb") as stream:
            os.fsync(stream.fileno())


def discard_folder(folder: Path) -> None:
    """Remove a cache folder; renamed away first, so no other process sees it half deleted."""
    trash = folder.with_name(f".stale-{os.getpid()}-{threading.get_ident()}-{folder.name}")
    try:
        os.rename(folder, trash)
    except FileNotFoundError:
        return  # another process discarded it already
    remove_folder(trash)


def remove_abandoned(cache_root: Path) -> None:
    """Remove scratch and discarded folders that a killed process left (each can hold ~90 MB).

    Saving a copy takes seconds, so one untouched for ABANDONED_AFTER seconds has no owner left.
    """
    if not cache_root.is_dir():
        return
    for folder in cache_root.iterdir():
        if folder.name.startswith((".partial-", ".stale-")):
            try:
                if time.time() - folder.stat().st_mtime > ABANDONED_AFTER:
                    remove_folder(folder)
            except FileNotFoundError:
                continue  # another process removed it first


def remove_folder(folder: Path) -> None:
    """Delete a cache folder and the files in it (it holds no subfolders)."""
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


def optimized_model_folder(
    identity: str,
    int8_instructions: str | None = None,
    scheme: str = INT8_SCHEME,
    fused_attention: bool = False,
) -> Path:
    """The cache folder for a model known by ``identity``, this onnxruntime version and this machine,
    float32 or int8 (with the CPU's int8 instructions and the int8 scheme in the key: a copy follows
    the CPU it was made on), its attention fused or not."""
    arithmetic = "float32"
    if int8_instructions:
        arithmetic = f"int8 ({INT8_SCHEMES[scheme]}) with {int8_instructions}"
    key = f"{identity}|onnxruntime {ort.__version__}|{platform.machine()}|{arithmetic}|{CACHE_FORMAT}"
    if fused_attention:
        key += "|attention fused"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "indexer" / "onnx" / hashlib.sha256(key.encode()).hexdigest()[:32]


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
