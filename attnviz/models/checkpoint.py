"""A Hugging Face checkpoint folder read in NumPy: ``config.json``, ``*.safetensors``
(one file or shards listed in ``model.safetensors.index.json``) and ``tokenizer.json``.

A safetensors file is 8 bytes (the header's length n, little-endian), n bytes of JSON
(per tensor: ``dtype``, ``shape``, ``data_offsets`` [begin, end) counted from the end of the
header) and the data. :func:`read_header` reads the header alone, so a folder's parameter
count and size are known without reading a weight (:func:`open_folder`); the data are
memory-mapped and widened to float32 one tensor at a time when :class:`Weights` is read:

==========  =====================================================================
``F32``     the memory map itself, read-only (no copy)
``F16``     ``astype(float32)``
``BF16``    no NumPy dtype (``safetensors.numpy`` cannot load it): bfloat16 is the top
            16 bits of a float32, so the bits ``(uint16 << 16)`` are the float32, exactly
==========  =====================================================================

Every file is opened only after :func:`inside` checked that it resolves (symlinks
followed) into the folder's root: a symlink or a shard name pointing elsewhere is refused.
Every error is a :class:`CheckpointError` (a ValueError) naming the file or the value.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_GB",
    "Checkpoint",
    "CheckpointError",
    "TensorEntry",
    "TextTokenizer",
    "Weights",
    "expect",
    "inside",
    "max_bytes",
    "open_folder",
    "read_header",
]

#: The default size limit of a model, in GB of float32 weights (``ATTNVIZ_MODEL_MAX_GB``).
MAX_GB = 4.0
#: safetensors dtypes attnviz widens to float32: (NumPy dtype of the stored bits, bytes).
FLOATS = {"F32": ("<f4", 4), "F16": ("<f2", 2), "BF16": ("<u2", 2)}
#: Other dtypes a checkpoint may hold (buffers such as BERT's position_ids): not weights.
OTHERS = {"F64": 8, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}
INDEX = "model.safetensors.index.json"


class CheckpointError(ValueError):
    """A checkpoint folder attnviz cannot read; the message names the file or value."""


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of a safetensors header: where its bytes are, not the bytes."""

    name: str
    dtype: str  # "F32", "F16", "BF16", ...
    shape: tuple[int, ...]
    file: Path
    start: int  # absolute byte offsets in ``file``
    end: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def inside(path: Path, root: Path) -> Path:
    """``path`` resolved (symlinks followed), or a CheckpointError if that is not under
    ``root`` (resolved too)."""
    real, top = Path(path).resolve(), Path(root).resolve()
    if real != top and top not in real.parents:
        raise CheckpointError(f"{path} points outside {root} (to {real}); not read")
    return real


def read_header(path: Path) -> dict[str, TensorEntry]:
    """The tensors of one safetensors file by name; CheckpointError if the header is not
    JSON, a dtype is unknown or a tensor's bytes lie beyond the end of the file."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        n = int.from_bytes(head, "little") if len(head) == 8 else -1
        if n < 0 or 8 + n > size:
            raise CheckpointError(f"{path}: truncated safetensors file ({size} bytes, no header)")
        try:
            header = json.loads(f.read(n))
        except ValueError as exc:
            raise CheckpointError(f"{path}: the safetensors header is not JSON ({exc})") from None
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (b, e) = t["dtype"], tuple(int(s) for s in t["shape"]), t["data_offsets"]
        itemsize = FLOATS[dtype][1] if dtype in FLOATS else OTHERS.get(dtype)
        if itemsize is None:
            raise CheckpointError(f"{path}: tensor {name} has dtype {dtype}, not supported")
        if e - b != math.prod(shape) * itemsize or b < 0:
            raise CheckpointError(f"{path}: tensor {name} {shape} {dtype} has {e - b} bytes")
        if 8 + n + e > size:
            raise CheckpointError(
                f"{path}: truncated safetensors file: tensor {name} ends at byte {8 + n + e}, "
                f"the file has {size} bytes"
            )
        out[name] = TensorEntry(name, dtype, shape, path, 8 + n + b, 8 + n + e)
    return out


class Weights(Mapping[str, NDArray[np.float32]]):
    """The floating-point tensors of a checkpoint by their Hugging Face names, each
    widened to float32 when read (files memory-mapped, opened on first use)."""

    def __init__(self, entries: Mapping[str, TensorEntry]) -> None:
        self.entries = {k: t for k, t in entries.items() if t.dtype in FLOATS}
        self._maps: dict[Path, np.memmap] = {}

    def __getitem__(self, name: str) -> NDArray[np.float32]:
        t = self.entries[name]
        mm = self._maps.get(t.file)
        if mm is None:
            mm = self._maps[t.file] = np.memmap(t.file, dtype=np.uint8, mode="r")
        raw = mm[t.start : t.end].view(FLOATS[t.dtype][0]).reshape(t.shape)  # stored bits
        if t.dtype == "F32":
            return raw  # type: ignore[return-value]
        if t.dtype == "F16":
            return raw.astype(np.float32)
        # BF16: the top half of a float32; the bits copied into the high uint16 of each
        # zeroed float32 (little-endian: the second), one pass (a shift took two)
        out = np.zeros(t.shape, np.float32)
        out.view(np.uint16).reshape(-1, 2)[:, 1] = raw.reshape(-1)
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def where(self, name: str) -> Path:
        """The file that holds ``name``."""
        return self.entries[name].file


def expect(weights: Mapping[str, NDArray], name: str, shape: tuple[int, ...]) -> NDArray:
    """``weights[name]`` if it has ``shape`` (what config.json implies); else a
    CheckpointError naming the tensor, its file and both shapes."""
    where = getattr(weights, "where", None)
    try:
        w = weights[name]
    except KeyError:
        raise CheckpointError(f"the checkpoint has no tensor {name!r}") from None
    if tuple(w.shape) != tuple(shape):
        file = f"{where(name)}: " if where else ""
        raise CheckpointError(
            f"{file}tensor {name} has shape {tuple(w.shape)}, config.json implies {tuple(shape)}"
        )
    return w


def max_bytes() -> int:
    """The size limit in bytes of float32 weights: ``ATTNVIZ_MODEL_MAX_GB`` (GB = 10⁹
    bytes, default :data:`MAX_GB`)."""
    raw = os.environ.get("ATTNVIZ_MODEL_MAX_GB", "")
    try:
        gb = float(raw) if raw.strip() else MAX_GB
    except ValueError:
        raise CheckpointError(f"ATTNVIZ_MODEL_MAX_GB must be a number of GB, got {raw!r}") from None
    return int(gb * 1e9)


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint folder, its headers read, no weight read yet."""

    folder: Path
    root: Path  # every file read must resolve under it
    config: dict[str, Any]
    entries: dict[str, TensorEntry] = field(repr=False)
    tokenizer: Path | None

    @property
    def model_type(self) -> str:
        return str(self.config["model_type"])

    @property
    def params(self) -> int:
        """The floating-point parameters stored (tied weights once)."""
        return sum(t.size for t in self.entries.values() if t.dtype in FLOATS)

    @property
    def bytes(self) -> int:
        """The weights' size in float32, as attnviz holds them."""
        return 4 * self.params

    def check_size(self) -> None:
        """CheckpointError if the model is over the size limit (:func:`max_bytes`)."""
        limit = max_bytes()
        if self.bytes > limit:
            raise CheckpointError(
                f"{self.folder}: {self.params:,} parameters, {self.bytes / 1e9:.3g} GB in "
                f"float32, over the limit of {limit / 1e9:g} GB (ATTNVIZ_MODEL_MAX_GB)"
            )

    def weights(self) -> Weights:
        """The weights (after :meth:`check_size`), read when used."""
        self.check_size()
        return Weights(self.entries)


def _read_json(path: Path, root: Path) -> dict[str, Any]:
    try:
        data = json.loads(inside(path, root).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _weight_files(folder: Path, root: Path) -> list[Path]:
    """The safetensors files: the index's shards, else every ``*.safetensors``."""
    index = folder / INDEX
    if index.exists():
        names = sorted(set(_read_json(index, root).get("weight_map", {}).values()))
        files = [folder / n for n in names]
    else:
        files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise CheckpointError(f"{folder} has no *.safetensors file (.bin pickles are not read)")
    for f in files:
        inside(f, root)
        if not f.is_file():
            raise CheckpointError(f"{f} is missing (listed in {index.name})")
    return files


def allowed_root(folder: str | Path, root: str | Path | None = None) -> Path:
    """The folder every file of ``folder`` must resolve into (``root``; by default the
    folder itself, or for a hub snapshot its ``models--org--name``), once ``folder`` itself
    is checked to resolve into it (a CheckpointError if not)."""
    folder = Path(folder)
    if root is None:
        hub = folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--")
        root = folder.parent.parent if hub else folder
    inside(folder, Path(root))
    return Path(root)


def open_folder(folder: str | Path, root: str | Path | None = None) -> Checkpoint:
    """Read a checkpoint folder's config and safetensors headers (no weights).

    ``root``: the folder every file must resolve into (default: the folder itself, or for a
    hub snapshot ``models--org--name/snapshots/<rev>`` its ``models--org--name``, where
    the snapshot's symlinks point to ``blobs/``).
    """
    folder = Path(folder)
    root = allowed_root(folder, root)
    if not (folder / "config.json").is_file():
        raise CheckpointError(f"{folder} has no config.json")
    config = _read_json(folder / "config.json", root)
    if not isinstance(config.get("model_type"), str):
        raise CheckpointError(f"{folder / 'config.json'} has no model_type")
    entries: dict[str, TensorEntry] = {}
    for f in _weight_files(folder, root):
        entries.update(read_header(f))
    tok = folder / "tokenizer.json"
    tokenizer = inside(tok, root) if tok.is_file() else None
    return Checkpoint(folder, root, config, entries, tokenizer)


class TextTokenizer:
    """A folder's ``tokenizer.json`` read with ``tokenizers`` (truncation and padding off;
    the special tokens its post-processor adds, such as [CLS] and [SEP], added)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._tok: Any = None
        if path is not None:
            try:
                from tokenizers import Tokenizer
            except ImportError as exc:  # pragma: no cover - installed with the models
                raise CheckpointError(f"reading {path} needs the tokenizers package") from exc
            try:
                self._tok = Tokenizer.from_file(str(path))
            except Exception as exc:  # tokenizers raises its own Exception type
                raise CheckpointError(f"{path}: not a readable tokenizer ({exc})") from None
            self._tok.no_truncation()
            self._tok.no_padding()

    def encode(self, text: str) -> tuple[list[str], NDArray[np.int64]]:
        """(token texts, ids) of ``text``; CheckpointError without a tokenizer.json."""
        if self._tok is None:
            raise CheckpointError("this model folder has no tokenizer.json: give token ids")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("The text is empty: type a prompt or a sentence.")
        ids = np.asarray(self._tok.encode(text).ids, dtype=np.int64)  # (N,)
        return [self.text(i) for i in ids], ids

    def wrap(self) -> tuple[list[int], list[int]]:
        """The special ids the tokenizer puts before and after a text ([CLS] and [SEP], a
        start token), as ``(before, after)``; none without a tokenizer.json."""
        if self._tok is None:
            return [], []
        enc = self._tok.encode("x")
        special = enc.special_tokens_mask  # 1 for an id the post-processor added
        body = [i for i, s in enumerate(special) if not s] or [len(special)]
        return list(enc.ids[: body[0]]), list(enc.ids[body[-1] + 1 :])

    def text(self, token_id: int) -> str:
        """One token's text ("<id>" without a tokenizer)."""
        if self._tok is None:
            return f"<{int(token_id)}>"
        return self._tok.decode([int(token_id)], skip_special_tokens=False)
