"""attnviz.models.gguf_file on small GGUF files written here byte by byte: the header, the
metadata's value types, the tensors' shapes (NumPy order) and each tensor type's values, and
the refusals (not a GGUF file, an unsupported version or tensor type)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from attnviz.models import gguf_file


def _str(s: str) -> bytes:
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _write(path, tensors, meta=(), version=3, align=32) -> None:
    """tensors: (name, dims in GGUF order (fastest first), type id, raw bytes)."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(meta))
    for key, vtype, payload in meta:
        head += _str(key) + struct.pack("<I", vtype) + payload
    offset, data = 0, b""
    for name, dims, ttype, raw in tensors:
        head += _str(name) + struct.pack("<I", len(dims))
        head += b"".join(struct.pack("<Q", d) for d in dims)
        head += struct.pack("<IQ", ttype, offset)
        pad = -len(raw) % align
        data += raw + b"\0" * pad
        offset += len(raw) + pad
    head += b"\0" * (-len(head) % align)
    path.write_bytes(head + data)


def test_metadata_and_float_tensors_read_back(tmp_path):
    a = np.arange(6, dtype="<f4").reshape(2, 3)  # (rows, columns): GGUF dims (3, 2)
    h = np.array([0.5, -2.0, 1.25, 3.0], "<f2")
    meta = [
        ("general.name", 8, _str("tiny")),
        ("llama.block_count", 4, struct.pack("<I", 30)),
        ("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
        ("flags", 7, b"\x01"),
        ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2) + _str("a") + _str("bc")),
        ("ids", 9, struct.pack("<IQ", 5, 3) + np.array([1, -2, 3], "<i4").tobytes()),
    ]
    path = tmp_path / "tiny.gguf"
    _write(path, [("a", (3, 2), 0, a.tobytes()), ("h", (4,), 1, h.tobytes())], meta)
    f = gguf_file.read(path)
    assert f.version == 3
    assert f.metadata["general.name"] == "tiny" and f.metadata["llama.block_count"] == 30
    assert f.metadata["llama.rope.freq_base"] == 10000.0 and f.metadata["flags"] is True
    assert f.metadata["tokenizer.ggml.tokens"] == ["a", "bc"]
    np.testing.assert_array_equal(f.metadata["ids"], [1, -2, 3])
    assert f.tensors["a"].shape == (2, 3) and f.tensors["a"].type_name == "F32"
    np.testing.assert_array_equal(gguf_file.dequantize(f.tensors["a"]), a)
    np.testing.assert_array_equal(gguf_file.dequantize(f.tensors["h"], np.float64), h)


def test_q8_0_and_q4_1_blocks_dequantize_by_their_formulas(tmp_path):
    rng = np.random.default_rng(0)
    q8 = rng.integers(-128, 128, 32).astype(np.int8)
    d8 = np.float16(0.125)
    q4 = rng.integers(0, 16, 32).astype(np.uint8)
    d4, m4 = np.float16(0.5), np.float16(-1.0)
    packed = (q4[:16] | (q4[16:] << 4)).astype(np.uint8)  # value j: low nibble, 16 + j: high
    raw8 = np.array([d8], "<f2").tobytes() + q8.tobytes()
    raw4 = np.array([d4, m4], "<f2").tobytes() + packed.tobytes()
    path = tmp_path / "quant.gguf"
    _write(path, [("q8", (32,), 8, raw8), ("q4", (32,), 3, raw4)])
    f = gguf_file.read(path)
    np.testing.assert_allclose(gguf_file.dequantize(f.tensors["q8"]), q8 * np.float32(d8))
    np.testing.assert_allclose(gguf_file.dequantize(f.tensors["q4"]), q4 * np.float32(d4) + m4)


def test_refusals_name_the_file_and_the_problem(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + bytes(40))
    with pytest.raises(ValueError, match="not a GGUF file"):
        gguf_file.read(bad)
    old = tmp_path / "old.gguf"
    _write(old, [], version=1)
    with pytest.raises(ValueError, match="version 1 is not supported"):
        gguf_file.read(old)
    q5 = tmp_path / "q5.gguf"
    _write(q5, [("w", (32,), 6, bytes(22))])
    with pytest.raises(ValueError, match="tensor w has unsupported type 6"):
        gguf_file.read(q5)
