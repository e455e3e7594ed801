"""How a model page speaks of models, in the shown language (:mod:`attnviz.ui.picker`): a
found model's size, parameters and shape (layers × heads); by kind ("encoder", "decoder"),
the page's title and how its attention works, what a found model's page leaves out, and a
bundled model's page name and text box help."""

from __future__ import annotations

from typing import Any

from attnviz.i18n import N_, _, fmt
from attnviz.models.catalog import ModelEntry
from attnviz.models.checkpoint import max_bytes

__all__ = [
    "BOX_HELP",
    "BUNDLED_PAGE",
    "HOW",
    "ONLY",
    "TITLES",
    "describe",
    "params",
    "shape",
    "size",
    "upper_first",
]


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


#: A page with a bundled model, by kind: its name in "... cannot run on this machine", its
#: text box's help.
BUNDLED_PAGE = {"encoder": N_("real-model page"), "decoder": N_("decoder page")}
BOX_HELP = {
    "encoder": N_("Up to 512 word pieces, [CLS] and [SEP] included."),
    "decoder": N_("Up to {n} tokens. No start token is added (as the model's file says)."),
}


#: The page's title for a found model: the encoder page's, the decoder page's (English:
#: ``_(TITLES[kind])`` where shown).
TITLES = {"encoder": N_("Real model: {name}"), "decoder": N_("Real model: a decoder ({name})")}
HOW = {
    "encoder": N_("Every token sees every token (no mask), as on the MiniLM-L6 page."),
    "decoder": N_(
        "**Causal attention:** each token sees only itself and the tokens before "
        "it (the masking page's triangle); at the end, the model guesses the next token."
    ),
}


#: What a found model's page leaves out (the views that read the bundled model's parts).
ONLY = {
    "encoder": N_(
        "For {name} the page shows the grid, one head with the arithmetic of a clicked cell, "
        "the exports and the Heads section. The page's other views for {bundled} (q, k, v of "
        "one token, random weights, head types, the shapes table, the room's questions) read "
        "that model's own parts, which attnviz keeps for the bundled model only."
    ),
    "decoder": N_(
        "For {name} the page shows the grid, one head with the arithmetic of a clicked cell, "
        "the next token, generation step by step, the exports and the Heads section. The "
        "page's other views for {bundled} (q, k, v of one token, random weights, rotary "
        "positions, the shapes table, the room's questions) read that model's own parts, "
        "which attnviz keeps for the bundled model only."
    ),
}
