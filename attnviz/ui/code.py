"""The code box: NumPy lines that recompute the current view, built from templates, and
:func:`lazy_box`, the closed box a page's extras (code, exports, worked example) are drawn
in only while open.

One template per part (the softmax, the input X, the weights, one head, every head, the
output) and one per page for what that page adds (:data:`PAGE_EXTRAS`); the view's
settings fill them in. Tests execute the result and compare it with the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import Any

import streamlit as st

from attnviz.engine import masks
from attnviz.i18n import _
from attnviz.ui import pages
from attnviz.ui.state import View

SOFTMAX = """\
import numpy as np


def softmax_rows(S):
    m = S.max(axis=1, keepdims=True)
    m[np.isinf(m)] = 0  # a fully masked row (all -inf) gives weights 0, not NaN
    E = np.exp(S - m)
    s = E.sum(axis=1, keepdims=True)
    return E / np.where(s == 0, 1, s)

"""

PRESET_QKV = """\
from attnviz import presets
p = presets.get("$preset")
Q, K, V = p.q, p.k, p.v  # this notebook gives Q, K and V directly"""

PRESET_X = """\
from attnviz import presets
p = presets.get("$preset")
X, P = p.x, p.params  # the notebook's X (N, D) and weights
W_q, W_k, W_v, W_o = P.w_q, P.w_k, P.w_v, P.w_o
b_q, b_k, b_v, b_o = (0.0 if b is None else b for b in (P.b_q, P.b_k, P.b_v, P.b_o))"""

INPUT = {
    "random": "X = np.random.default_rng($seed).standard_normal(($n, $d))  # (N, D)",
    "text": "from attnviz.teaching.inputs import text_input  # fixed embedding per token\n"
    "X = text_input($text, $d).x  # (N, D) = ($n, $d)",
    "upload": "X = np.loadtxt($upload_name, delimiter=',')  # your CSV: (N, D) = ($n, $d) "
    "(drop header/label columns if it has them)",
}

#: How each init draws a (D, D) matrix and a length-D bias.
DRAW = {
    "normal": ("rng.standard_normal(($d, $d))", "rng.standard_normal($d)"),
    "uniform": ("rng.random(($d, $d))", "rng.random($d)"),
    "xavier": (
        "rng.uniform(-np.sqrt(6 / ($d + $d)), np.sqrt(6 / ($d + $d)), ($d, $d))",
        "rng.uniform(-1 / np.sqrt($d), 1 / np.sqrt($d), $d)",
    ),
}

WEIGHTS = """\
rng = np.random.default_rng($seed1)  # the weights: $init init
W_q, W_k, W_v = ($matrix for _ in range(3))  # (D, D) each
$biases"""

BIASES = """\
b_q, b_k, b_v = ($vector for _ in range(3))
W_o = $matrix
b_o = $vector"""

NO_BIASES = """\
b_q = b_k = b_v = b_o = 0.0
W_o = $matrix"""

PROJECT = """
Q, K, V = X @ W_q + b_q, X @ W_k + b_k, X @ W_v + b_v  # (N, D) each"""

SCORES = {
    "1/√d_k": "S = Qh @ Kh.T / np.sqrt($dk)  # scores (N, N), d_k = D / heads = $dk",
    "none": "S = Qh @ Kh.T  # scores (N, N), not scaled",
    "custom": "S = Qh @ Kh.T * $factor  # scores (N, N), custom factor",
}

APPLY_MASK = "S = np.where(mask, S, -np.inf)  # masked scores are -inf\n"

HEAD = """
h, d_k = $head, $dk  # head $head of $h: columns h*d_k .. (h+1)*d_k
Qh, Kh, Vh = (M[:, h * d_k:(h + 1) * d_k] for M in (Q, K, V))
$scores
${mask}A = softmax_rows(S)  # weights (N, N), each row sums to 1
out = A @ Vh  # this head's output (N, d_k)

# every head, concatenated, then the output projection:
heads = []
for h in range($h):
    Qh, Kh, Vh = (M[:, h * d_k:(h + 1) * d_k] for M in (Q, K, V))
    $score
${loop_mask}    heads.append(softmax_rows(S) @ Vh)
concat = np.concatenate(heads, axis=1)  # (N, D)
$output"""

OUTPUT = {
    "qkv": "Y = concat  # this notebook has no output projection",
    "preset": "Y = concat if W_o is None else concat @ W_o + b_o  # the layer's output",
    "layer": "Y = concat @ W_o + b_o  # the layer's output (N, D)",
}

COLUMNS = "\n\n# UDL book layout (tokens as columns): X.T, Q.T, A.T (keys x queries), Y.T"

POSITIONS_NOTE = (
    "\n# with positions: X + E and X[perm] + E, E = sinusoidal(N, D): not equal any more"
)

#: What each page adds to the layer's code (filled with the page's own values), by the
#: page's slug in :data:`attnviz.ui.pages.PAGES` (tests/ui/test_pages.py checks them).
PAGE_EXTRAS = {
    "masking": """\
$masks
A_causal = softmax_rows(np.where(causal, S, -np.inf))  # S unmasked, as above""",
    "permutation": """\
# every layer output above is Y; now shuffle the tokens and compare
perm = np.array($perm)
X_p = X[perm]  # rerun the code above with X = X_p to get Y_p;
# then np.abs(Y_p - Y[perm]).max() is ~1e-15 (no mask)$positions""",
    "scaling": """\
# 1. variance of q·k against d_k
rng = np.random.default_rng($seed)
for d in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]:
    q, k = rng.standard_normal((1000, d)), rng.standard_normal((1000, d))
    dots = (q * k).sum(axis=1)
    print(d, dots.var(), (dots / np.sqrt(d)).var())

# 2. softmax of the notebook's logits under a factor
z = np.array($logits)
for c in (1.0, $factor):
    e = np.exp(c * z - (c * z).max()); print(c, e / e.sum())""",
    "notebooks": """\
from attnviz import presets
for name in presets.names():
    print(name, [c.passed for c in presets.get(name).check()])""",
}


def _fill(template: str, **values: object) -> str:
    return Template(template).substitute(values)


def _input(view: View) -> str:
    s = view.settings
    if s.source == "preset":
        return _fill(PRESET_QKV if view.params is None else PRESET_X, preset=s.preset)
    x = _fill(INPUT[s.source], seed=s.seed, n=s.n, d=s.d, text=repr(s.text),
              upload_name=repr(s.upload_name))  # fmt: skip
    matrix, vector = (_fill(t, d=s.d) for t in DRAW[s.init])
    biases = _fill(BIASES if s.bias else NO_BIASES, matrix=matrix, vector=vector)
    weights = _fill(WEIGHTS, seed1=s.seed + 1, init=s.init, matrix=matrix, biases=biases)
    return x + "\n" + weights


def code_lines(view: View, head: int = 0) -> str:
    """NumPy lines that recompute the current view (X, Q, K, V, one head's S, A, output).

    The code only needs NumPy (plus attnviz for typed text and presets) and ends with
    ``S``, ``A`` and ``out`` of head ``head`` and the layer's ``Y``; tests execute it.
    """
    s, r = view.settings, view.result
    n, dk = r.n_tokens, r.queries.shape[-1]
    scores = _fill(SCORES[s.scale_mode], dk=dk, factor=repr(s.factor))
    mask = masks.code(s.mask_kind, n, **dict(s.mask_params))  # the registry's line
    if mask:
        mask += "\n" + APPLY_MASK
    qkv = s.source == "preset" and view.params is None
    output = OUTPUT["qkv" if qkv else "preset" if s.source == "preset" else "layer"]
    head_code = _fill(
        HEAD,
        head=head,
        dk=dk,
        h=r.num_heads,
        scores=scores,
        mask=mask,
        score=scores.split("  #")[0],
        loop_mask="    S = np.where(mask, S, -np.inf)\n" if mask else "",
        output=output,
    )
    code = SOFTMAX + "\n" + _input(view) + ("" if qkv else "\n" + PROJECT) + "\n" + head_code
    return code + (COLUMNS if s.layout == "columns" else "")


def page_extra(page: str, **values: object) -> str:
    """The lines that ``page`` (a slug of :data:`attnviz.ui.pages.PAGES`) adds to the code
    box, filled with its values."""
    slug = pages.page(page).slug
    if slug not in PAGE_EXTRAS:
        raise KeyError(f"the page {slug!r} adds no lines to the code box (code.PAGE_EXTRAS)")
    return _fill(PAGE_EXTRAS[slug], **values)


CODE_BOX_KEY = "code_box"  # the expander's state: open or closed, kept across pages


def code_box(view: View, head: int = 0, extra: str = "") -> None:
    """The NumPy lines that reproduce the current view, in an expander drawn only while
    open (an opening reruns the page): a closed box sends no ``st.code``, so a first visit
    does not load Streamlit's syntax highlighter (1.56 MB, ~0.4 s of the browser's main
    thread), which a plain app does not pay either."""
    lazy_code_box(
        _("NumPy code that reproduces this view"),
        CODE_BOX_KEY,
        lambda: code_lines(view, head) + (("\n\n" + extra) if extra else ""),
    )


def lazy_box(label: str, key: str) -> Any:
    """A closed expander of key ``key`` that reruns the page when opened, and None while it
    is closed: what goes in it is drawn and sent only while it is open (a closed box costs
    an N move nothing; the export box's ten buttons took ~10 ms of the playground's rerun)."""
    box = st.expander(label, expanded=False, key=key, on_change="rerun")
    return None if box.open is False else box


def lazy_code_box(label: str, key: str, code: Callable[[], str]) -> None:
    """An expander of key ``key`` whose code, ``code()``, is built and sent only while it
    is open (opening it reruns the page): the code box of every page."""
    box = lazy_box(":material/code: " + label, key)
    if box is not None:
        with box:
            # wrapped: a scroll box would be a region a keyboard cannot reach (WCAG 2.1.1)
            st.code(code(), language="python", wrap_lines=True)
