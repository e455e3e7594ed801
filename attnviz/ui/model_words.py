"""How a model found on this machine is named on a model page: its size, its parameters,
its shape (layers × heads), in the shown language (:mod:`attnviz.ui.picker`)."""

from __future__ import annotations

from typing import Any

from attnviz.i18n import _, fmt
from attnviz.models.catalog import ModelEntry
from attnviz.models.checkpoint import max_bytes

__all__ = ["describe", "params", "shape", "size", "upper_first"]


def upper_first(text: str) -> str:
    """``text`` with its first letter upper case (the rest as it is)."""
    return text[:1].upper() + text[1:]


def size(n_bytes: int) -> str:
    """A size in bytes as MB, or GB from 100 MB on."""
    if n_bytes >= 1e8:
        return _("{n} GB").format(n=fmt(n_bytes / 1e9, ".1f"))
    return _("{n} MB").format(n=fmt(n_bytes / 1e6, ".1f"))


def params(n: int) -> str:
    """A count of parameters: "1.2 B", "135.0 M", "4.3 k"."""
    for unit, div in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{fmt(n / div, '.1f')} {unit}"
    return str(n)


def describe(entry: ModelEntry) -> str:
    """One line: name, family, parameters, size in float32 (and too large, if it is)."""
    text = _("{name} — {family}, {params} parameters, {size}").format(
        name=entry.name, family=entry.family, params=params(entry.params), size=size(entry.bytes)
    )
    too_large = _(" (too large: the limit is {size})").format(size=size(max_bytes()))
    return text + (too_large if entry.too_large else "")


def shape(model: Any) -> str:
    """ "2 layers × 4 heads" (and the key/value heads a grouped-query decoder shares)."""
    text = _("{layers} layers × {heads} heads").format(
        layers=model.num_layers, heads=model.num_heads
    )
    kv = getattr(model, "num_kv_heads", model.num_heads)
    sharing = _(" (sharing {kv} key/value heads)").format(kv=kv)
    return text + (sharing if kv != model.num_heads else "")
