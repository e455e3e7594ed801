"""A small GGUF reader in NumPy: metadata, tensors and the block formats SmolLM2 uses.

GGUF (llama.cpp's file format, version 2 or 3) is a header, key/value metadata, a table
of tensors (name, shape, type, offset) and the tensor data, aligned. This module reads
what attnviz needs without the ``gguf`` package: the metadata into Python values, the
tensors as NumPy views of a memory map, and :func:`dequantize` for F32, F16, Q8_0 and
Q4_1 blocks. The ``gguf`` package (llama.cpp's reader) is the reference in the tests; it
takes about 3 s on this file because it builds an object per string of the vocabulary,
this reader about 0.1 s.

Shapes: GGUF lists dimensions fastest first (ne[0] = columns), so a tensor with
dims (576, 1536) is a NumPy array of shape (1536, 576): nn.Linear's (out, in).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["GGUFFile", "TensorInfo", "dequantize", "read"]

_MAGIC = b"GGUF"
# metadata value types
_SCALARS = {
    0: "<u1",
    1: "<i1",
    2: "<u2",
    3: "<i2",
    4: "<u4",
    5: "<i4",
    6: "<f4",
    7: "?",
    10: "<u8",
    11: "<i8",
    12: "<f8",
}
_STRING, _ARRAY = 8, 9
# tensor types: name, values per block, bytes per block
GGML_TYPES = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    3: ("Q4_1", 32, 20),
    8: ("Q8_0", 32, 34),
}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # NumPy order (slowest first)
    type_name: str
    data: NDArray[np.uint8]  # the raw bytes (a view of the memory map)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass(frozen=True)
class GGUFFile:
    path: Path
    version: int
    metadata: dict[str, Any]
    tensors: dict[str, TensorInfo]


class _Cursor:
    def __init__(self, buf: memoryview) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str) -> Any:
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def string(self) -> str:
        n = self.take("<Q")
        s = bytes(self.buf[self.pos : self.pos + n]).decode("utf-8", errors="replace")
        self.pos += n
        return s

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            dt = np.dtype(_SCALARS[vtype])
            v = np.frombuffer(self.buf, dt, 1, self.pos)[0]
            self.pos += dt.itemsize
            return v.item()
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            etype, count = self.take("<I"), self.take("<Q")
            if etype in _SCALARS:  # one NumPy view for a whole numeric array
                dt = np.dtype(_SCALARS[etype])
                a = np.frombuffer(self.buf, dt, count, self.pos).copy()
                self.pos += dt.itemsize * count
                return a
            if etype == _STRING:  # the vocabulary: ~50k strings, one small loop
                out = []
                buf, pos = self.buf, self.pos
                unpack = struct.Struct("<Q").unpack_from
                for _ in range(count):
                    (n,) = unpack(buf, pos)
                    pos += 8
                    out.append(str(buf[pos : pos + n], "utf-8", "replace"))
                    pos += n
                self.pos = pos
                return out
            return [self.value(etype) for _ in range(count)]
        raise ValueError(f"unknown GGUF metadata value type {vtype} at byte {self.pos}")


def read(path: str | Path) -> GGUFFile:
    """Parse a GGUF file; tensor data stay in a read-only memory map (no copy)."""
    path = Path(path)
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    buf = memoryview(mm)
    if bytes(buf[:4]) != _MAGIC:
        raise ValueError(f"{path} is not a GGUF file (it does not start with b'GGUF')")
    c = _Cursor(buf)
    c.pos = 4
    version = c.take("<I")
    if version not in (2, 3):
        raise ValueError(f"{path}: GGUF version {version} is not supported (2 or 3 are)")
    n_tensors, n_kv = c.take("<Q"), c.take("<Q")
    meta: dict[str, Any] = {}
    for _ in range(n_kv):
        key = c.string()
        meta[key] = c.value(c.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        n_dims = c.take("<I")
        dims = [c.take("<Q") for _ in range(n_dims)]
        ttype, offset = c.take("<I"), c.take("<Q")
        infos.append((name, tuple(reversed(dims)), ttype, offset))
    align = int(meta.get("general.alignment", 32))
    start = -(-c.pos // align) * align
    tensors = {}
    for name, shape, ttype, offset in infos:
        if ttype not in GGML_TYPES:
            raise ValueError(f"{path}: tensor {name} has unsupported type {ttype}")
        tname, per_block, block_bytes = GGML_TYPES[ttype]
        n = int(np.prod(shape))
        nbytes = n // per_block * block_bytes
        a = start + offset
        tensors[name] = TensorInfo(name, shape, tname, mm[a : a + nbytes])
    return GGUFFile(path, version, meta, tensors)


def dequantize(t: TensorInfo, dtype: type = np.float32) -> NDArray[np.floating]:
    """The tensor's values in ``dtype``, shape ``t.shape``.

    Q4_1 block (32 values, 20 bytes): scale d and minimum m (float16), then 16 bytes of
    4-bit q: value j < 16 is d * (low nibble of byte j) + m, value 16 + j the high nibble.
    Q8_0 block (32 values, 34 bytes): scale d (float16), then 32 int8: d * q.
    """
    raw = t.data
    if t.type_name == "F32":
        out = raw.view("<f4").astype(dtype)  # (n,)
    elif t.type_name == "F16":
        out = raw.view("<f2").astype(dtype)  # (n,)
    elif t.type_name == "Q8_0":
        blocks = raw.reshape(-1, 34)  # (B, 34)
        d = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (B, 1)
        q = blocks[:, 2:].view(np.int8).astype(np.float32)  # (B, 32)
        out = (q * d).astype(dtype, copy=False)
    elif t.type_name == "Q4_1":
        blocks = raw.reshape(-1, 20)  # (B, 20)
        dm = blocks[:, :4].copy().view("<f2").astype(np.float32)  # (B, 2): d, m
        qs = blocks[:, 4:]  # (B, 16)
        q = np.empty((blocks.shape[0], 32), np.float32)  # (B, 32)
        np.bitwise_and(qs, 0x0F, out=q[:, :16], casting="unsafe")
        np.right_shift(qs, 4, out=q[:, 16:], casting="unsafe")
        q *= dm[:, :1]
        q += dm[:, 1:]
        out = q.astype(dtype, copy=False)
    else:  # pragma: no cover - read() refuses other types
        raise ValueError(f"cannot dequantize {t.type_name}")
    return out.reshape(t.shape)  # (B*32,) or (B, 32) -> (rows, columns), slowest first
