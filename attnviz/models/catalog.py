"""The models on this machine (:func:`find`) and loading one (:func:`load`); nothing is
downloaded.

Where :func:`find` looks (``dirs`` replaces both when given):

1. the Hugging Face hub cache: ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
   ``~/.cache/huggingface/hub``, laid out as the hub does it:
   ``models--org--name/snapshots/<rev>/`` whose files are symlinks to ``../../blobs/``;
2. the folders of ``ATTNVIZ_MODELS`` (an ``os.pathsep`` list), each holding model folders
   one level down (``$ATTNVIZ_MODELS/my-bert/config.json``). A folder given in ``dirs``
   may be either kind.

Each model folder is read as far as its config and safetensors headers (no weights). A
folder that cannot be read (no config.json, a truncated file, an unsupported family, a
symlink that leaves its listed folder) is left out of :func:`find`; :func:`scan` returns
those too, each with the reason. Every file is opened only after it resolved inside the
listed folder it was found in (the hub cache's snapshot-to-blob links are inside it).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnviz.models import families
from attnviz.models.checkpoint import (
    CheckpointError,
    allowed_root,
    inside,
    max_bytes,
    open_folder,
)

__all__ = ["MAX_LOADED", "ModelEntry", "Skipped", "clear", "find", "hub_cache", "load", "scan"]

#: Models kept loaded at once (each up to ATTNVIZ_MODEL_MAX_GB); the oldest goes first.
MAX_LOADED = 2


@dataclass(frozen=True)
class ModelEntry:
    """A model folder found on disk, read as far as its headers."""

    name: str  # "org/name" (hub; "org/name@rev" when several revisions), else the folder
    path: Path  # the folder with config.json
    family: str  # config.json's model_type
    kind: str  # "encoder", "decoder" or "encoder-decoder"
    params: int  # parameters stored (from the safetensors headers)
    bytes: int  # their size in float32
    too_large: bool  # over ATTNVIZ_MODEL_MAX_GB (load refuses it)
    root: Path = field(repr=False, compare=False)  # the listed folder it was found in


@dataclass(frozen=True)
class Skipped:
    """A folder :func:`find` left out, and why."""

    path: Path
    reason: str


def hub_cache() -> Path:
    """The hub cache folder (``HF_HUB_CACHE``, ``HF_HOME/hub``, ``~/.cache/huggingface/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def _roots(dirs: Sequence[str | Path] | None) -> list[Path]:
    if dirs is not None:
        return [Path(d).expanduser() for d in dirs]
    extra = os.environ.get("ATTNVIZ_MODELS", "")
    return [hub_cache(), *(Path(p).expanduser() for p in extra.split(os.pathsep) if p)]


def _folders(root: Path) -> Iterator[tuple[str, Path]]:
    """(name, folder) of every model folder of ``root``: hub repos' snapshots and plain
    folders one level down (hidden ones and the hub's datasets and spaces left out)."""
    for child in sorted(root.iterdir()):
        if child.name.startswith("."):
            continue
        if child.name.startswith("models--"):
            repo = child.name.removeprefix("models--").replace("--", "/")
            snaps = sorted((child / "snapshots").glob("*"))
            for s in snaps:
                yield (repo if len(snaps) == 1 else f"{repo}@{s.name[:12]}"), s
        elif not child.name.startswith(("datasets--", "spaces--")) and child.is_dir():
            yield child.name, child


def _entry(name: str, folder: Path, root: Path) -> ModelEntry:
    ckpt = open_folder(folder, root)
    kind = families.kind_of(ckpt.model_type, folder / "config.json")
    big = ckpt.bytes > max_bytes()
    return ModelEntry(name, folder, ckpt.model_type, kind, ckpt.params, ckpt.bytes, big, root)


def scan(dirs: Sequence[str | Path] | None = None) -> tuple[list[ModelEntry], list[Skipped]]:
    """The models :func:`find` lists, and the folders left out with their reasons."""
    found, skipped = [], []
    for root in _roots(dirs):
        try:
            folders = list(_folders(root)) if root.is_dir() else []
        except OSError as exc:  # an unreadable listed folder
            skipped.append(Skipped(root, str(exc)))
            continue
        for name, folder in folders:
            try:
                inside(folder, root)
                found.append(_entry(name, folder, root))
            except (CheckpointError, OSError) as exc:
                skipped.append(Skipped(folder, str(exc)))
    return found, skipped


def find(dirs: Sequence[str | Path] | None = None) -> list[ModelEntry]:
    """The models in the hub cache and the ``ATTNVIZ_MODELS`` folders (or in ``dirs``)."""
    return scan(dirs)[0]


# --------------------------------------------------------------------------- loading

_loaded: OrderedDict[Path, Any] = OrderedDict()
_locks: dict[Path, threading.Lock] = {}
_guard = threading.Lock()  # held only to look up the cache, never while loading


def _folder_and_root(target: ModelEntry | str | Path) -> tuple[Path, Path | None]:
    if isinstance(target, ModelEntry):
        return target.path, target.root
    path = Path(target).expanduser()
    if ".." in path.parts:
        raise CheckpointError(f"{target}: a model path may not contain '..'")
    for root in _roots(None):  # under a listed folder: its files must stay in that folder
        if Path(os.path.abspath(path)).is_relative_to(os.path.abspath(root)):
            return path, root
    return path, None  # elsewhere: the folder itself (or its hub repo) is the root


def load(target: ModelEntry | str | Path) -> Any:
    """The model of an entry of :func:`find` or of a folder, built once per process
    (the last :data:`MAX_LOADED` are kept). A folder under a listed folder (the hub cache,
    ``ATTNVIZ_MODELS``) may not link out of it; any other folder not out of itself. A
    model over the size limit raises before its weights are read. Two threads loading the
    same model wait for one load; another model's load does not wait."""
    folder, root = _folder_and_root(target)
    # the path's own rule first, cached or not: a link out of a listed folder is refused
    # even when its target was loaded before by its own path
    allowed_root(folder, root)
    key = folder.resolve()
    with _guard:
        if key in _loaded:
            _loaded.move_to_end(key)
            return _loaded[key]
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        with _guard:
            if key in _loaded:
                return _loaded[key]
        ckpt = open_folder(folder, root)
        ckpt.check_size()
        model = families.build(ckpt)
        with _guard:
            _loaded[key] = model
            while len(_loaded) > MAX_LOADED:
                _loaded.popitem(last=False)
    return model


def clear() -> None:
    """Forget the loaded models."""
    with _guard:
        _loaded.clear()
