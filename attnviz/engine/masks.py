"""The mask kinds, written once: :data:`KINDS`.

Each :class:`MaskKind` holds every fact about one kind of mask: its name (the URL's
``?mask=``), its label, the engine's builder, its parameters (each a URL key with its
range and default), its NumPy code line and a one-sentence explanation. The sidebar and
its links, Compare's ``b_`` controls, the code box, the presets, the exercises and the
Masking page read this table; adding a kind is one entry here and its builder in
:mod:`attnviz.engine`.

    from attnviz import masks
    masks.build("padding", 6, pad=2)     # (6, 6) bool, True = may attend
    masks.code("padding", 6, pad=2)      # the NumPy line that makes the same mask
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnviz import engine

__all__ = ["KINDS", "NAMES", "PARAMS", "MaskKind", "Param", "build", "code", "params_of"]


@dataclass(frozen=True)
class Param:
    """An integer parameter of a mask kind, bound to the URL under ``key``."""

    key: str  # URL key (``?pad=2``) and keyword of the builder and the code line
    label: str  # the sidebar's label
    short: str  # Compare's short label ("padding k")
    default: int
    lo: int  # the least value; the greatest is N (a larger value uses N, with a notice)
    doc: str  # the README's "values" column
    over_n: str  # the notice for a value above N: "{value}" and "{n}" are filled in


@dataclass(frozen=True)
class MaskKind:
    """One kind of mask: everything the app says and does about it."""

    name: str  # the URL's value (``?mask=causal``)
    label: str  # the human name (export caption, README)
    builder: Callable[..., np.ndarray] | None  # engine builder (n, *params); None: no mask
    params: tuple[Param, ...]
    # (variable name, n, **params) -> one NumPy statement, shown in the code box: run with
    # only ``np`` defined it sets the variable (``mask`` in the box) to the builder's mask
    # (tests/engine/test_masks.py, test_the_code_line_is_the_builders_mask)
    code: Callable[..., str] | None
    comment: str  # the code line's comment; "{n}" and the parameters are filled in
    explain: str  # one sentence: what the mask hides (the sidebar's help, the Masking page)
    # the exercise "how many nonzero weights has row i?" under this kind: (n, i, count,
    # _=translate, **params) -> (the rule in the question, why the answer is right), each
    # text passed through ``_`` before its numbers are filled in (attnviz.classroom.exercises
    # passes the language's gettext; the texts are in the catalogs); None: not drawn
    exercise: Callable[..., tuple[str, str]] | None = None


# --------------------------------------------------------------------------- the code lines


def _causal_code(m: str, n: int) -> str:
    return f"{m} = np.tril(np.ones(({n}, {n}), bool))"


def _padding_code(m: str, n: int, pad: int) -> str:
    return f"{m} = np.ones(({n}, {n}), bool); {m}[:, {n - pad}:] = False"


def _window_code(m: str, n: int, window: int) -> str:
    return f"{m} = np.tri({n}, {n}, 0, bool) & ~np.tri({n}, {n}, -{window}, bool)"


def _prefix_code(m: str, n: int, prefix: int) -> str:
    return f"{m} = np.tril(np.ones(({n}, {n}), bool)); {m}[:, :{prefix}] = True"


# --------------------------------------------------------------------------- the exercises


def _same(text: str) -> str:
    return text


def _causal_exercise(
    n: int, i: int, count: int, _: Callable[[str], str] = _same
) -> tuple[str, str]:
    rule = _("a **causal** mask (token i may only attend to tokens j ≤ i)")
    why = _("Under the causal mask row {i} keeps keys 0…{i}: **{count}** keys.")
    return rule, why.format(i=i, count=count)


def _padding_exercise(
    n: int, i: int, count: int, pad: int, _: Callable[[str], str] = _same
) -> tuple[str, str]:
    rule = _(
        "a **padding** mask: the last {pad} of the {n} tokens are padding, and no query "
        "may attend to a padding key"
    )
    why = _(
        "Keys {first}…{last} are padding and masked in every row (the softmax gives "
        "them e^(−∞) = 0), so row {i} keeps the {real} real keys: **{count}**."
    )
    return rule.format(pad=pad, n=n), why.format(
        first=n - pad, last=n - 1, i=i, real=n - pad, count=count
    )


# --------------------------------------------------------------------------- the table

# fmt: off
_KINDS: tuple[MaskKind, ...] = (
    MaskKind("none", "none", None, (), None, "", "no mask: every query sees every key"),
    MaskKind("causal", "causal", engine.causal_mask, (), _causal_code,
             "causal: key j <= query i", "causal: token i sees tokens 0..i",
             exercise=_causal_exercise),
    MaskKind("padding", "padding (last k tokens)", engine.padding_mask,
             (Param("pad", "k — padding tokens at the end", "padding k", 1, 0,
                    "padding: the last `pad` tokens are padding",
                    "Only {n} tokens: all of them are padding (k = {value} is more than N)."),),
             _padding_code, "last {pad} = padding",
             "padding: nobody attends to the last k tokens", exercise=_padding_exercise),
    MaskKind("window", "sliding window (last w tokens)", engine.sliding_window_mask,
             (Param("window", "w — window: each token sees the last w tokens", "window w", 2,
                    1, "sliding window: query i sees keys i − window < j ≤ i (1..N)",
                    "Only {n} tokens: a window of {value} is more than N; using window = "
                    "{n} (the causal mask)."),),
             _window_code, "window: key i-{window} < j <= query i",
             "window: token i sees the last w tokens, i-w+1..i (Mistral, Gemma)"),
    MaskKind("prefix", "prefix LM (first p tokens seen by all)", engine.prefix_mask,
             (Param("prefix", "p — prefix: tokens every token sees", "prefix p", 2, 0,
                    "prefix LM: every query sees keys j < prefix, after it causal (0..N)",
                    "Only {n} tokens: a prefix of {value} is more than N; using prefix = "
                    "{n} (every token sees every key)."),),
             _prefix_code, "prefix LM: keys j < {prefix} for all, then causal",
             "prefix: every token sees the first p tokens, then causal (T5, PaLM)"),
)
# fmt: on

#: Mask kind name -> :class:`MaskKind`, in the sidebar's order.
KINDS: dict[str, MaskKind] = {k.name: k for k in _KINDS}
#: The kind names, in order ("none" first).
NAMES: tuple[str, ...] = tuple(KINDS)
#: Every kind's parameters, in order: URL key -> (kind name, :class:`Param`).
PARAMS: dict[str, tuple[str, Param]] = {p.key: (k.name, p) for k in _KINDS for p in k.params}


def kind(name: str) -> MaskKind:
    """The kind called ``name``; a ValueError names the kinds there are."""
    if name not in KINDS:
        raise ValueError(f"mask kind must be one of {', '.join(NAMES)}, got {name!r}")
    return KINDS[name]


def params_of(name: str, values: dict, n: int, clamp: bool = True) -> dict[str, int]:
    """The parameters of kind ``name`` from ``values`` (missing ones: the default), each
    at most ``n`` unless ``clamp`` is False."""
    got = {p.key: int(values.get(p.key, p.default)) for p in kind(name).params}
    return {k: min(v, n) for k, v in got.items()} if clamp else got


def build(name: str, n: int, clamp: bool = True, **values: int) -> np.ndarray | None:
    """The (n, n) boolean mask of kind ``name`` (True = may attend); None for "none".
    Parameters above N use N (as the app does, with a notice) unless ``clamp`` is False;
    the engine's builder checks the rest and raises ValueError."""
    k = kind(name)
    p = params_of(name, values, n, clamp)
    return None if k.builder is None else k.builder(n, *p.values())


def code(name: str, n: int, var: str = "mask", comment: bool = True, **values: int) -> str:
    """The NumPy statement that makes the mask of kind ``name`` in variable ``var`` ("" for
    "none"), with its comment unless ``comment`` is False."""
    k = kind(name)
    if k.code is None:
        return ""
    p = params_of(name, values, n)
    line = k.code(var, n, **p)
    return line + (f"  # {k.comment.format(n=n, **p)}" if comment and k.comment else "")
