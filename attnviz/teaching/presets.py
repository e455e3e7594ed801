"""The five seed notebooks as presets, with the values they print.

A :class:`Preset` knows its tokens, its input (or Q, K, V), its parameters, its heads,
its scaling and its mask; :meth:`Preset.run` computes the attention with
:mod:`attnviz.engine` and :meth:`Preset.check` compares the result with every value
the notebook prints (an :class:`Expected` each), so that the app can show "expected
vs computed" with a pass/fail mark.

The printed values below are transcribed from the notebooks' printed output (in
``shared/seeds/``), never computed with attnviz. Each :class:`Expected` says which run
settings it needs (``scale``, ``mask``), which result field it compares (``output``,
``weights``, ...) in which layout (``"row"``, or ``"columns"``: the UDL book's D x N
layout of :func:`attnviz.engine.to_columns`), and a tolerance that matches the
notebook's printed precision (half a unit of its last printed digit).

Use::

    from attnviz import presets
    presets.names()                                   # ['udl-self-attention', ...]
    p = presets.get("numerical-example")
    res = p.run(mask="causal")                        # an AttentionResult
    [c.passed for c in p.check()]                     # all True
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np

from attnviz import i18n
from attnviz.engine import (
    AttentionParams,
    AttentionResult,
    Scale,
    attention_from_qkv,
    loop_attention,
    masks,
    merge_heads,
    multi_head_attention,
    softmax,
    to_columns,
)
from attnviz.engine.core import Array
from attnviz.i18n import _, pgettext

__all__ = [
    "NAMES",
    "CheckResult",
    "Expected",
    "Layout",
    "MaskName",
    "Preset",
    "get",
    "names",
    "scale_words",
]

#: A kind of attnviz.engine.masks.KINDS without parameters: "none", "causal".
MaskName = str
#: "row": one token per row (attnviz); "columns": the UDL book's one token per column.
Layout = Literal["row", "columns"]
#: The mask kinds a preset runs under: those of attnviz.engine.masks without parameters.
_MASKS = tuple(name for name, kind in masks.KINDS.items() if not kind.params)


def scale_words(scale: Scale) -> str:
    """A run's scaling in words: True -> "scores ÷ √d_k", False -> "not scaled", a factor
    c -> "scores × c" (in the shown language)."""
    if scale is True:
        return _("scores ÷ √d_k")
    if scale is False:
        return _("not scaled")
    return _("scores × {factor}").format(factor=i18n.fmt(float(scale), "g"))


def _decimals(n: int) -> float:
    """Absolute tolerance of a value printed with ``n`` decimals: half a unit of the last."""
    return 0.5 * 10.0**-n + 1e-12


#: Relative tolerance of numpy's scientific notation (8 digits after the point).
_SCI8 = 0.5e-8 + 1e-12


def _printed(text: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array from a notebook's printout, pasted verbatim (brackets and all)."""
    clean = text.replace("[", " ").replace("]", " ").replace(",", " ")
    return np.array([float(t) for t in clean.split()]).reshape(shape)


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True, eq=False)
class Expected:
    """One value printed by a notebook and where attnviz computes it.

    Attributes:
        label: what it is, in the notebook's words.
        value: the printed value, transcribed.
        field: the :class:`~attnviz.engine.AttentionResult` attribute compared
            ("output", "weights", "scores", "queries", "x", ...), in ``layout``.
        layout: "row", or "columns" (:func:`~attnviz.engine.to_columns`).
        head: index into the head axis of the field, or None for the whole field.
        scale, mask: run settings (None = the preset's own).
        tolerance: absolute tolerance; ``rtol``: relative tolerance (for values printed
            in scientific notation). Passes when |computed - value| <= tolerance +
            rtol * |value| everywhere.
        derive: if given, the computed value is ``derive(preset)`` instead of a field
            of a run (for values such as a variance or a softmax of the notebook's own
            numbers); ``field`` then only describes it.
    """

    label: str
    value: Array
    field: str = "output"
    layout: Layout = "row"
    head: int | None = None
    scale: Scale | None = None
    mask: MaskName | None = None
    tolerance: float = _decimals(8)
    rtol: float = 0.0
    derive: Callable[[Preset], Array] | None = dataclasses.field(default=None, repr=False)

    def __post_init__(self) -> None:
        v = np.array(self.value, dtype=np.float64)
        v.setflags(write=False)
        object.__setattr__(self, "value", v)

    @property
    def settings(self) -> str:
        """The run settings in words, for display (in the shown language; the field and the
        mask are the code's names)."""
        parts = [self.field]
        if self.head is not None:
            parts.append(_("head {head}").format(head=self.head))
        parts.append(_("row layout") if self.layout == "row" else _("columns layout"))
        if self.scale is not None:
            parts.append(scale_words(self.scale))
        if self.mask is not None:
            parts.append(_("mask: {mask}").format(mask=self.mask))
        return pgettext("list separator", ", ").join(parts)


@dataclass(frozen=True, eq=False)
class CheckResult:
    """Expected (printed) vs computed for one :class:`Expected`."""

    label: str
    expected: Array
    computed: Array
    max_abs_error: float
    tolerance: float
    rtol: float
    passed: bool
    settings: str = ""


# --------------------------------------------------------------------------- preset


@dataclass(frozen=True, eq=False)
class Preset:
    """A seed notebook's attention computation.

    Either ``x`` (N, D) with ``params`` (self-attention of x), or ``q``, ``k``, ``v``
    used directly (the numerical example of ``004_…``). ``scale`` and ``mask`` are
    the notebook's settings; :meth:`run` may override them.
    """

    name: str
    title: str
    notebook: str
    description: str
    tokens: list[str]
    x: Array | None
    params: AttentionParams | None
    q: Array | None = None
    k: Array | None = None
    v: Array | None = None
    num_heads: int = 1
    scale: Scale = True
    mask: MaskName = "none"
    expected: tuple[Expected, ...] = ()

    def __post_init__(self) -> None:
        for name in ("x", "q", "k", "v"):
            a = getattr(self, name)
            if a is not None:
                a = np.array(a, dtype=np.float64)
                a.setflags(write=False)
                object.__setattr__(self, name, a)
        if (self.x is None) == (self.q is None):
            raise ValueError(f"preset {self.name!r} needs either x and params or q, k, v")
        if self.mask not in _MASKS:
            raise ValueError(f"mask must be one of {_MASKS}, got {self.mask!r}")

    @property
    def n_tokens(self) -> int:
        """N, the number of tokens."""
        return int((self.x if self.x is not None else self.q).shape[0])

    @property
    def d_model(self) -> int:
        """D, the width of each token (of q for presets given Q, K, V)."""
        return int((self.x if self.x is not None else self.q).shape[1])

    def mask_array(self, mask: MaskName | None = None) -> np.ndarray | None:
        """The boolean (N, N) mask for ``mask`` ("none" -> None, "causal")."""
        m = self.mask if mask is None else mask
        if m not in _MASKS:
            raise ValueError(f"mask must be one of {_MASKS} (or None), got {m!r}")
        return masks.build(m, self.n_tokens)

    def run(self, scale: Scale | None = None, mask: MaskName | None = None) -> AttentionResult:
        """The attention of this preset; ``scale`` and ``mask`` override its settings."""
        s = self.scale if scale is None else scale
        m = self.mask_array(mask)
        if self.x is not None:
            return multi_head_attention(
                self.x, self.params, num_heads=self.num_heads, scale=s, mask=m
            )
        return attention_from_qkv(self.q, self.k, self.v, num_heads=self.num_heads, scale=s, mask=m)

    def check(self) -> list[CheckResult]:
        """Every printed value of the notebook against attnviz's computation."""
        runs: dict[tuple, AttentionResult] = {}
        out = []
        for e in self.expected:
            if e.derive is not None:
                computed = np.asarray(e.derive(self), dtype=np.float64)
            else:
                key = (repr(e.scale), e.mask)
                if key not in runs:
                    runs[key] = self.run(scale=e.scale, mask=e.mask)
                res = runs[key]
                view = to_columns(res) if e.layout == "columns" else res
                computed = np.asarray(getattr(view, e.field), dtype=np.float64)
                if e.head is not None:
                    computed = computed[e.head]
            out.append(_compare(e, computed))
        return out


def _compare(e: Expected, computed: Array) -> CheckResult:
    if computed.shape != e.value.shape:
        return CheckResult(
            e.label, e.value, computed, float("inf"), e.tolerance, e.rtol, False, e.settings
        )
    err = np.abs(computed - e.value)
    ok = bool(np.all(err <= e.tolerance + e.rtol * np.abs(e.value)))
    return CheckResult(
        e.label, e.value, computed, float(err.max(initial=0.0)), e.tolerance, e.rtol, ok, e.settings
    )


# --------------------------------------------------------------------------- 003: UDL 12.1


def _udl_self_attention() -> Preset:
    n, d = 3, 4
    rng = np.random.RandomState(3)  # the notebook's np.random.seed(3)
    cols = [rng.normal(size=(d, 1)) for _i in range(n)]  # the notebook's all_x
    x = np.hstack(cols).T  # (N, D)
    rng = np.random.RandomState(0)  # np.random.seed(0)
    omega_q, omega_k, omega_v = (rng.normal(size=(d, d)) for _i in range(3))
    beta_q, beta_k, beta_v = (rng.normal(size=(d, 1)) for _i in range(3))
    params = AttentionParams(
        w_q=omega_q.T, w_k=omega_k.T, w_v=omega_v.T,
        b_q=beta_q.ravel(), b_k=beta_k.ravel(), b_v=beta_v.ravel(),
    )  # fmt: skip
    printed_x = [
        [1.78862847, -0.2773882, -0.04381817],
        [0.43650985, -0.35475898, -0.47721803],
        [0.09649747, -0.08274148, -1.31386475],
        [-1.8634927, -0.62700068, 0.88462238],
    ]
    x_prime = [  # x_prime_n_true, one row per token
        [0.94744244, -0.24348429, -0.91310441, -0.44522983],
        [1.64201168, -0.08470004, 4.02764044, 2.18690791],
        [1.61949281, -0.06641533, 3.96863308, 2.15858316],
    ]
    loop_attentions = [  # "Attentions for output n", one row per output n
        [1.24326146e-13, 9.98281489e-01, 1.71851130e-03],
        [2.79525306e-12, 5.85506360e-03, 9.94144936e-01],
        [0.00505708, 0.00654776, 0.98839516],
    ]
    exp_values = [
        [4.66985467e-14, 2.21621546e-09, 1.67867896e00],
        [3.74967746e-01, 4.64218522e00, 2.17350530e00],
        [6.45495599e-04, 7.88207480e02, 3.28094170e02],
    ]
    denom = [3.75613241e-01, 7.92849665e02, 3.31946354e02]
    attentions = [
        [1.24326146e-13, 2.79525306e-12, 5.05707907e-03],
        [9.98281489e-01, 5.85506360e-03, 6.54776072e-03],
        [1.71851130e-03, 9.94144936e-01, 9.88395160e-01],
    ]
    big_x_prime = [
        [0.94744244, 1.64201168, 1.61949281],
        [-0.24348429, -0.08470004, -0.06641533],
        [-0.91310441, 4.02764044, 3.96863308],
        [-0.44522983, 2.18690791, 2.15858316],
    ]
    scaled_exp_values = [
        [2.16098465e-07, 4.70766976e-05, 1.29563844e00],
        [6.12346100e-01, 2.15457309e00, 1.47428128e00],
        [2.54066054e-02, 2.80750330e01, 1.81133699e01],
    ]
    scaled_denom = [0.63775292, 30.22965321, 20.88328965]
    scaled_attentions = [
        [3.38843552e-07, 1.55730194e-06, 6.20418746e-02],
        [9.60161968e-01, 7.12734969e-02, 7.05962187e-02],
        [3.98376935e-02, 9.28724946e-01, 8.67361907e-01],
    ]
    scaled_x_prime = [
        [0.97411966, 1.59622051, 1.32638014],
        [-0.23738409, -0.09516106, 0.13062402],
        [-0.72333202, 3.70194096, 3.02371664],
        [-0.34413007, 2.01339538, 1.6902419],
    ]
    # permuted_outputs[i], for the i-th of itertools.permutations(range(3)); the sixth
    # is cut off in the notebook's printout.
    permuted_outputs = [
        [
            [0.97411966, 1.59622051, 1.32638014],
            [-0.23738409, -0.09516106, 0.13062402],
            [-0.72333202, 3.70194096, 3.02371664],
            [-0.34413007, 2.01339538, 1.6902419],
        ],
        [
            [0.97411966, 1.32638014, 1.59622051],
            [-0.23738409, 0.13062402, -0.09516106],
            [-0.72333202, 3.02371664, 3.70194096],
            [-0.34413007, 1.6902419, 2.01339538],
        ],
        [
            [1.59622051, 0.97411966, 1.32638014],
            [-0.09516106, -0.23738409, 0.13062402],
            [3.70194096, -0.72333202, 3.02371664],
            [2.01339538, -0.34413007, 1.6902419],
        ],
        [
            [1.59622051, 1.32638014, 0.97411966],
            [-0.09516106, 0.13062402, -0.23738409],
            [3.70194096, 3.02371664, -0.72333202],
            [2.01339538, 1.6902419, -0.34413007],
        ],
        [
            [1.32638014, 0.97411966, 1.59622051],
            [0.13062402, -0.23738409, -0.09516106],
            [3.02371664, -0.72333202, 3.70194096],
            [1.6902419, -0.34413007, 2.01339538],
        ],
    ]
    # The second permutation's printed attentions (columns follow the permuted tokens).
    permuted_attentions_1 = [
        [3.38843552e-07, 6.20418746e-02, 1.55730194e-06],
        [3.98376935e-02, 8.67361907e-01, 9.28724946e-01],
        [9.60161968e-01, 7.05962187e-02, 7.12734969e-02],
    ]

    def loop_weights(p: Preset) -> Array:
        r = p.run(scale=False)
        weights, _out = loop_attention(r.queries[0], r.keys[0], r.values[0], scale=False)
        return weights  # (N queries, N keys): row n is "Attentions for output n"

    def exp_scores(scale: bool) -> Callable[[Preset], Array]:
        def f(p: Preset) -> Array:
            return np.exp(to_columns(p.run(scale=scale)).scores[0])  # (keys, queries)

        return f

    def denominators(scale: bool) -> Callable[[Preset], Array]:
        def f(p: Preset) -> Array:
            return np.exp(to_columns(p.run(scale=scale)).scores[0]).sum(axis=0)

        return f

    perms = list(itertools.permutations(range(n)))

    def permuted(i: int, what: str) -> Callable[[Preset], Array]:
        def f(p: Preset) -> Array:
            res = multi_head_attention(p.x[list(perms[i])], p.params, scale=True)
            view = getattr(to_columns(res), what)
            return view[0] if what == "weights" else view  # weights: (H=1, N, N)

        return f

    expected = (
        Expected(_("inputs X (D x N)"), printed_x, field="x", layout="columns"),
        Expected(
            _("loop form: attentions for output n (one row per output)"), loop_attentions,
            field="weights", derive=loop_weights, rtol=_SCI8, tolerance=_decimals(8),
        ),
        Expected(_("x_prime_n_true (unscaled, one row per token)"), x_prime, scale=False),
        Expected(
            _("exp_values (unscaled)"), exp_values, field="scores", layout="columns",
            derive=exp_scores(False), tolerance=0.0, rtol=_SCI8,
        ),
        Expected(
            _("denom (unscaled)"), denom, field="scores", layout="columns",
            derive=denominators(False), tolerance=0.0, rtol=_SCI8,
        ),
        Expected(
            _("attentions (unscaled)"), attentions, field="weights", layout="columns", head=0,
            scale=False, tolerance=0.0, rtol=_SCI8,
        ),
        Expected(_("X_prime (unscaled)"), big_x_prime, layout="columns", scale=False),
        Expected(
            _("exp_values (scaled by 1/sqrt(D))"), scaled_exp_values, field="scores",
            layout="columns", derive=exp_scores(True), tolerance=0.0, rtol=_SCI8,
        ),
        Expected(
            _("denom (scaled)"), scaled_denom, field="scores", layout="columns",
            derive=denominators(True),
        ),
        Expected(
            _("attentions (scaled)"), scaled_attentions, field="weights", layout="columns",
            head=0, scale=True, tolerance=0.0, rtol=_SCI8,
        ),
        Expected(_("X_prime (scaled)"), scaled_x_prime, layout="columns", scale=True),
        *(
            Expected(
                _("permuted_outputs[{i}]: input columns permuted by {perm}").format(
                    i=i, perm=perms[i]
                ), out,
                layout="columns", derive=permuted(i, "output"),
            )
            for i, out in enumerate(permuted_outputs)
        ),
        Expected(
            _("attentions for the input permuted by {perm}").format(perm=perms[1]),
            permuted_attentions_1,
            field="weights", layout="columns", derive=permuted(1, "weights"),
            tolerance=0.0, rtol=_SCI8,
        ),
    )  # fmt: skip
    return Preset(
        name="udl-self-attention",
        title=_("Self-attention from scratch (UDL notebook 12.1)"),
        notebook="003_8e978064b845029d.txt",
        description=_(
            "Three tokens of width 4 with random queries, keys and values, computed first "
            "one token at a time and then as matrices. Without scaling one weight per "
            "query is almost 1; dividing by sqrt(D) softens them, and permuting the "
            "tokens only permutes the outputs."
        ),
        tokens=[f"x{i}" for i in range(n)],
        x=x,
        params=params,
        num_heads=1,
        scale=False,
        expected=expected,
    )


# --------------------------------------------------------------------------- 000: UDL 12.2


def _udl_multihead() -> Preset:
    n, d, h = 6, 8, 2
    hd = d // h
    big_x = np.random.RandomState(3).normal(size=(d, n))  # (D, N), one token per column
    rng = np.random.RandomState(0)  # np.random.seed(0)
    heads = []
    for _i in range(h):
        omega_q, omega_k, omega_v = (rng.normal(size=(hd, d)) for _i in range(3))
        beta_q, beta_k, beta_v = (rng.normal(size=(hd, 1)) for _i in range(3))
        heads.append((omega_q, omega_k, omega_v, beta_q, beta_k, beta_v))
    omega_c = rng.normal(size=(d, d))
    # Head h takes the h-th contiguous block of columns (row layout): w = [Ω_1ᵀ | Ω_2ᵀ].
    w_q, w_k, w_v = (np.hstack([hp[i].T for hp in heads]) for i in range(3))  # (D, D)
    b_q, b_k, b_v = (np.concatenate([hp[i].ravel() for hp in heads]) for i in range(3, 6))
    params = AttentionParams(w_q=w_q, w_k=w_k, w_v=w_v, b_q=b_q, b_k=b_k, b_v=b_v, w_o=omega_c.T)
    printed_x = [
        [1.789, 0.437, 0.096, -1.863, -0.277, -0.355],
        [-0.083, -0.627, -0.044, -0.477, -1.314, 0.885],
        [0.881, 1.71, 0.05, -0.405, -0.545, -1.546],
        [0.982, -1.101, -1.185, -0.206, 1.486, 0.237],
        [-1.024, -0.713, 0.625, -0.161, -0.769, -0.23],
        [0.745, 1.976, -1.244, -0.626, -0.804, -2.419],
        [-0.924, -1.024, 1.124, -0.132, -1.623, 0.647],
        [-0.356, -1.743, -0.597, -0.589, -0.874, 0.03],
    ]
    true_values = [
        [-21.207, -5.373, -20.933, -9.179, -11.319, -17.812],
        [-1.995, 7.906, -10.516, 3.452, 9.863, -7.24],
        [5.479, 1.115, 9.244, 0.453, 5.656, 7.089],
        [-7.413, -7.416, 0.363, -5.573, -6.736, -0.848],
        [-11.261, -9.937, -4.848, -8.915, -13.378, -5.761],
        [3.548, 10.036, -2.244, 1.604, 12.113, -2.557],
        [4.888, -5.814, 2.407, 3.228, -4.232, 3.71],
        [1.248, 18.894, -6.409, 3.224, 19.717, -5.629],
    ]
    expected = (
        Expected("X (D x N)", printed_x, field="x", layout="columns", tolerance=_decimals(3)),
        Expected(
            _("True values: X_prime (D x N)"), true_values, layout="columns",
            tolerance=_decimals(3),
        ),
    )  # fmt: skip
    return Preset(
        name="udl-multihead",
        title=_("Multi-head self-attention (UDL notebook 12.2)"),
        notebook="000_48da6c17fd3f97f5.txt",
        description=_(
            "Six tokens of width 8 and two heads, each with its own queries, keys and "
            "values of width 4; the heads' outputs are stacked and mixed by Ω_c. Each "
            "head scales by 1/sqrt(D/H) = 1/2, its own width."
        ),
        tokens=[f"x{i}" for i in range(n)],
        x=big_x.T,
        params=params,
        num_heads=h,
        scale=True,
        expected=expected,
    )


# --------------------------------------------------------------------------- 001: NumPy MHA

#: The notebook's printed "Attention output" (H, N, d_k) and "Combined" (N, D), twice:
#: its step-by-step run and its full function (each with unseeded weights).
_NB001_ATTENTION_OUTPUTS = (
    _printed(
        """
 [[[0.19643224 0.16312995 0.15375897 0.26000008]
  [3.71027252 2.80866658 2.94323139 4.8826525 ]
  [0.21987734 0.18066746 0.17116901 0.2915263 ]
  [4.46956723 3.41398518 3.57380655 5.86625016]]

 [[0.03972046 0.12436724 0.09192507 0.10893019]
  [1.41702041 4.03827238 2.97508027 3.66383149]
  [0.05124659 0.15832554 0.11787337 0.13909673]
  [2.34771594 6.67622039 4.87923675 6.07384234]]]
""",
        (2, 4, 4),
    ),
    _printed(
        """
 [[[0.34340241 0.17350628 0.31006168 0.30325394]
  [6.14475502 3.03911896 5.48529832 5.38118869]
  [0.15726633 0.08049152 0.14221146 0.13916164]
  [5.17095368 2.5563167  4.62136053 4.53183084]]

 [[0.07575317 0.08867292 0.11741894 0.09710465]
  [5.03603849 5.95313578 7.51012616 5.80497877]
  [0.17809756 0.20787699 0.27220411 0.222202  ]
  [1.94520672 2.2917526  2.92319917 2.29732966]]]
""",
        (2, 4, 4),
    ),
)
_NB001_COMBINED = (
    _printed(
        """
 [[0.19643224 0.16312995 0.15375897 0.26000008 0.03972046 0.12436724
  0.09192507 0.10893019]
 [3.71027252 2.80866658 2.94323139 4.8826525  1.41702041 4.03827238
  2.97508027 3.66383149]
 [0.21987734 0.18066746 0.17116901 0.2915263  0.05124659 0.15832554
  0.11787337 0.13909673]
 [4.46956723 3.41398518 3.57380655 5.86625016 2.34771594 6.67622039
  4.87923675 6.07384234]]
""",
        (4, 8),
    ),
    _printed(
        """
 [[0.34340241 0.17350628 0.31006168 0.30325394 0.07575317 0.08867292
  0.11741894 0.09710465]
 [6.14475502 3.03911896 5.48529832 5.38118869 5.03603849 5.95313578
  7.51012616 5.80497877]
 [0.15726633 0.08049152 0.14221146 0.13916164 0.17809756 0.20787699
  0.27220411 0.222202  ]
 [5.17095368 2.5563167  4.62136053 4.53183084 1.94520672 2.2917526
  2.92319917 2.29732966]]
""",
        (4, 8),
    ),
)
#: The notebook's printed x (its np.random.rand draw, unseeded).
_NB001_X = _printed(
    """
[[0.25956222 0.98277522 0.17384214 0.69557968 0.14521894 0.76165535
  0.36051313 0.01817976]
 [0.62865045 0.11134285 0.81020522 0.63884798 0.23628508 0.54954327
  0.89199386 0.94937864]
 [0.79526722 0.22907666 0.72682005 0.0978701  0.12811503 0.41897402
  0.16488601 0.43543915]
 [0.23793443 0.74085503 0.62276851 0.97132178 0.58277127 0.2088883
  0.99396971 0.70441528]]
""",
    (4, 8),
)
#: Our seed for the weights, which the notebook draws without a seed.
NUMPY_MULTIHEAD_SEED = 0


def _numpy_multihead() -> Preset:
    params = AttentionParams.random(
        8, seed=NUMPY_MULTIHEAD_SEED, init="uniform", bias=False, out_proj=True
    )

    def merged(i: int) -> Callable[[Preset], Array]:
        def f(p: Preset) -> Array:
            return merge_heads(_NB001_ATTENTION_OUTPUTS[i])

        return f

    labels = (
        _("Combined = heads concatenated (step by step)"),
        _("Combined = heads concatenated (full function)"),
    )
    expected = tuple(
        Expected(
            label, _NB001_COMBINED[i], field="concat", derive=merged(i), tolerance=0.0,
        )
        for i, label in enumerate(labels)
    )  # fmt: skip
    return Preset(
        name="numpy-multihead",
        title=_("Multi-head attention in NumPy (Kaggle notebook)"),
        notebook="001_4766a0dd0e855590.txt",
        description=_(
            "Four tokens of width 8 and two heads with uniform random weights, no biases "
            "and an output projection W_O. The notebook's softmax normalises over the "
            "queries (axis=1) instead of the keys; attnviz normalises over the keys, so "
            "each row of weights sums to 1. Its weights have no seed: we draw our own."
        ),
        tokens=[f"t{i + 1}" for i in range(4)],
        x=_NB001_X,
        params=params,
        num_heads=2,
        scale=True,
        expected=expected,
    )


# --------------------------------------------------------------------------- 002: scaling


#: torch.manual_seed(123); torch.rand(3, 2) three times (W_query, W_key, W_value), as
#: float32 values written out exactly (tests check them against torch).
#: The notebook's SelfAttention_v2 output (nn.Linear weights) is NOT reproduced: neither the
#: RNG continuing after v1 nor a fresh torch.manual_seed(123) or (789) gives its printed
#: values, so its weights are unknown and it is not a golden value here.
_NB002_W_QUERY = (
    (float.fromhex("0x1.2f37f8p-2"), float.fromhex("0x1.087adap-1")),
    (float.fromhex("0x1.01b5f8p-2"), float.fromhex("0x1.608a84p-1")),
    (float.fromhex("0x1.2efdc0p-4"), float.fromhex("0x1.bba8c4p-1")),
)
_NB002_W_KEY = (
    (float.fromhex("0x1.17b730p-3"), float.fromhex("0x1.a3c110p-4")),
    (float.fromhex("0x1.78f298p-3"), float.fromhex("0x1.73f0d4p-1")),
    (float.fromhex("0x1.42d1ecp-2"), float.fromhex("0x1.5fcc72p-1")),
)
_NB002_W_VALUE = (
    (float.fromhex("0x1.35cd60p-4"), float.fromhex("0x1.92b708p-3")),
    (float.fromhex("0x1.440180p-2"), float.fromhex("0x1.9b61c4p-2")),
    (float.fromhex("0x1.e5a7e0p-4"), float.fromhex("0x1.a7a05ep-1")),
)
_NB002_INPUTS = (
    (0.43, 0.15, 0.89),  # Your
    (0.55, 0.87, 0.66),  # journey
    (0.57, 0.85, 0.64),  # starts
    (0.22, 0.58, 0.33),  # with
    (0.77, 0.25, 0.10),  # one
    (0.05, 0.80, 0.55),  # step
)
_NB002_LOGITS = (0.1, -0.2, 0.3, -0.4, -0.3)


def _scaling_demo() -> Preset:
    params = AttentionParams(
        w_q=np.array(_NB002_W_QUERY), w_k=np.array(_NB002_W_KEY), w_v=np.array(_NB002_W_VALUE)
    )
    v1_output = [
        [0.2996, 0.8053],
        [0.3061, 0.8210],
        [0.3058, 0.8203],
        [0.2948, 0.7939],
        [0.2927, 0.7891],
        [0.2990, 0.8040],
    ]
    var_before_5, var_after_5 = 4.971412062399333, 0.9942824124798666
    var_before_100, var_after_100 = 97.12069181019781, 0.9712069181019781

    def softmax_times(factor: float) -> Callable[[Preset], Array]:
        def f(p: Preset) -> Array:
            return softmax(np.array(_NB002_LOGITS) * factor)

        return f

    expected = (
        Expected(
            _("SelfAttention_v1 output (torch.manual_seed(123))"), v1_output,
            tolerance=_decimals(4),
        ),
        Expected(
            _("Softmax without scaling"), [0.2359, 0.1748, 0.2881, 0.1431, 0.1581],
            field="softmax", derive=softmax_times(1.0), tolerance=_decimals(4),
        ),
        Expected(
            _("Softmax with scaling (x8)"), [0.1639, 0.0149, 0.8116, 0.0030, 0.0067],
            field="softmax", derive=softmax_times(8.0), tolerance=_decimals(4),
        ),
        Expected(
            _("variance after scaling (dim=5) = before / 5"), var_after_5, field="variance",
            derive=lambda p: np.float64(var_before_5 / 5), tolerance=0.0, rtol=1e-15,
        ),
        Expected(
            _("variance after scaling (dim=100) = before / 100"), var_after_100, field="variance",
            derive=lambda p: np.float64(var_before_100 / 100), tolerance=0.0, rtol=1e-15,
        ),
    )  # fmt: skip
    return Preset(
        name="scaling-demo",
        title=_('Why scale by sqrt(d_k)? ("Your journey starts with one step")'),
        notebook="002_384587bb4f98dbe6.txt",
        description=_(
            "Six words with 3-d embeddings and one head of width 2 (uniform random "
            "weights, no bias, no output projection). Multiplying the scores by a large "
            "factor makes the softmax pick one word; dividing by sqrt(d_k) keeps the "
            "variance of the scores near 1."
        ),
        tokens=["Your", "journey", "starts", "with", "one", "step"],
        x=np.array(_NB002_INPUTS),
        params=params,
        num_heads=1,
        scale=True,
        expected=expected,
    )


# --------------------------------------------------------------------------- 004: numbers


def _numerical_example() -> Preset:
    length, dk, dv = 4, 8, 8
    rng = np.random.RandomState(42)  # np.random.seed(42)
    q = rng.randn(length, dk)
    k = rng.randn(length, dk)
    v = rng.randn(length, dv)
    printed_q = _printed(
        """
 [[ 0.49671415 -0.1382643   0.64768854  1.52302986 -0.23415337 -0.23413696
   1.57921282  0.76743473]
 [-0.46947439  0.54256004 -0.46341769 -0.46572975  0.24196227 -1.91328024
  -1.72491783 -0.56228753]
 [-1.01283112  0.31424733 -0.90802408 -1.4123037   1.46564877 -0.2257763
   0.0675282  -1.42474819]
 [-0.54438272  0.11092259 -1.15099358  0.37569802 -0.60063869 -0.29169375
  -0.60170661  1.85227818]]
""",
        (4, 8),
    )
    printed_k = _printed(
        """
 [[-0.01349722 -1.05771093  0.82254491 -1.22084365  0.2088636  -1.95967012
  -1.32818605  0.19686124]
 [ 0.73846658  0.17136828 -0.11564828 -0.3011037  -1.47852199 -0.71984421
  -0.46063877  1.05712223]
 [ 0.34361829 -1.76304016  0.32408397 -0.38508228 -0.676922    0.61167629
   1.03099952  0.93128012]
 [-0.83921752 -0.30921238  0.33126343  0.97554513 -0.47917424 -0.18565898
  -1.10633497 -1.19620662]]
""",
        (4, 8),
    )
    qkt = _printed(
        """
array([[-2.72357421,  0.40818741,  2.39601116, -1.18323729],
       [ 5.60012069,  1.1597874 , -4.7248515 ,  2.43859568],
       [ 1.03699903, -3.70553788, -3.0399309 ,  0.04345596],
       [ 0.09460324,  2.97027193,  0.43247995, -0.80026704]])
""".replace("array(", "").replace(")", ""),
        (4, 4),
    )
    attention = _printed(
        """
[[0.08431243 0.25513027 0.51521078 0.14534652]
 [0.64059204 0.1332861  0.01664257 0.2094793 ]
 [0.47006414 0.08789379 0.11121405 0.33082801]
 [0.17794451 0.49185018 0.20052305 0.12968226]]
""",
        (4, 4),
    )
    new_values = _printed(
        """
 [[-0.1308104   0.77212573  0.10108921  0.16807328 -0.46588684 -0.43681263
   0.46851458 -0.42075407]
 [ 0.40109276  1.19080398 -0.35037302  0.94668908  0.08274232 -0.53010106
   0.17683369  0.41923385]
 [ 0.17910025  0.98456145 -0.06763014  0.80678092 -0.14453166 -0.49373081
   0.15002954  0.10067088]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]]
""",
        (4, 8),
    )
    masked_new_values = _printed(
        """
 [[ 0.81252582  1.35624003 -0.07201012  1.0035329   0.36163603 -0.64511975
   0.36139561  1.53803657]
 [ 0.66641301  1.39213367 -0.51081002  0.97225045  0.31434319 -0.58550834
   0.31495603  0.93081668]
 [ 0.52954961  1.21756173 -0.14905901  0.7267579   0.1310981  -0.57583252
   0.41805381  0.87397953]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]]
""",
        (4, 8),
    )

    def score_variance(scale: bool) -> Callable[[Preset], Array]:
        def f(p: Preset) -> Array:
            return np.float64(np.var(p.run(scale=scale, mask="none").scores[0]))

        return f

    expected = (
        Expected("Q", printed_q, field="queries", head=0),
        Expected("K", printed_k, field="keys", head=0),
        Expected("np.matmul(q, k.T)", qkt, field="scores", head=0, scale=False, mask="none"),
        Expected(
            _("variance before scaling"), 6.8375652409831655, field="scores",
            derive=score_variance(False), tolerance=0.0, rtol=1e-12,
        ),
        Expected(
            _("variance after scaling"), 0.8546956551228956, field="scores",
            derive=score_variance(True), tolerance=0.0, rtol=1e-12,
        ),
        Expected(_("Attetion vector"), attention, field="weights", head=0, scale=True, mask="none"),
        Expected(_("New values"), new_values, scale=True, mask="none"),
        Expected(_("Masked new values"), masked_new_values, scale=True, mask="causal"),
    )  # fmt: skip
    return Preset(
        name="numerical-example",
        title=_("Self-attention by the numbers (4 words, d_k = 8)"),
        notebook="004_11f195323bc79550.txt",
        description=_(
            "Four words with random queries, keys and values of width 8, used directly. "
            "Dividing the scores by sqrt(8) shrinks their variance about 8 times; the "
            "causal mask lets each word attend only to itself and the words before it."
        ),
        tokens=[f"w{i + 1}" for i in range(length)],
        x=None,
        params=None,
        q=q,
        k=k,
        v=v,
        num_heads=1,
        scale=True,
        expected=expected,
    )


# --------------------------------------------------------------------------- registry

_BUILDERS: dict[str, Callable[[], Preset]] = {
    "udl-self-attention": _udl_self_attention,
    "udl-multihead": _udl_multihead,
    "numpy-multihead": _numpy_multihead,
    "scaling-demo": _scaling_demo,
    "numerical-example": _numerical_example,
}
NAMES: tuple[str, ...] = tuple(_BUILDERS)


def names() -> list[str]:
    """The preset names, in the order of the notebooks' story."""
    return list(NAMES)


@cache
def _build(name: str, lang: str) -> Preset:
    # np.random.RandomState(seed) draws what the notebooks' np.random.seed(seed) does,
    # without touching numpy's global RNG. Built once per language: its title,
    # description and labels are in ``lang``.
    with i18n.use(lang):
        return _BUILDERS[name]()


def get(name: str) -> Preset:
    """The preset called ``name``, its words in the shown language; ValueError listing the
    valid names otherwise."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown preset {name!r}; valid names: {', '.join(NAMES)}")
    return _build(name, i18n.current())
