"""The sidebar controls, declared once, and the sidebar that walks them.

:data:`CONTROLS` is the single table of the shared controls: key, label, widget kind,
range or options, default, help, the rule a link's value must satisfy, what derives it
(typed text, a preset, an upload) and when it is shown. From it come the sidebar
(:func:`sidebar`), the link validation and its warnings, :data:`DEFAULTS`, :data:`KEYS`,
the frozen :class:`Settings` and the README's control table (:func:`markdown_table`, a
test compares the two). Adding a control is one entry here (plus, if it has a ``field``,
that field written out in :class:`Settings`, and its use in the engine call,
:func:`attnviz.ui.state.compute`). A mask kind's parameters are not written here: each
:class:`attnviz.engine.masks.Param` becomes a number control, shown when its kind is chosen, whose
value goes to :attr:`Settings.mask_params`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz import engine, i18n
from attnviz.engine import masks
from attnviz.i18n import N_, _
from attnviz.teaching import inputs
from attnviz.ui import callbacks
from attnviz.ui.sizes import D_DEFAULT, D_MAX, HEADS_DEFAULT, N_MAX, divisors
from attnviz.viz.style import WEIGHT_RANGES

SEED_MAX = 2**31 - 1
SOURCES = ("random", "text", "preset", "upload")
SCALES = ("none", "1/√d_k", "custom")
MASKS = masks.NAMES
INITS = ("normal", "uniform", "xavier")
LAYOUTS = ("rows", "columns")
BIND = "query-params"

#: Human names of option values (the export caption and the README use them), English:
#: ``_(LABELS[key][value])`` where one is shown.
LABELS = {
    "source": {
        "random": N_("random"),
        "text": N_("typed text"),
        "preset": N_("notebook preset"),
        "upload": N_("CSV upload"),
    },
    "scale": {"none": N_("none (× 1)"), "1/√d_k": "1/√d_k", "custom": N_("custom factor")},
    "mask": {k.name: k.label for k in masks.KINDS.values()},
    "init": {"normal": N_("normal N(0,1)"), "uniform": N_("uniform [0,1)"), "xavier": "xavier"},
    "layout": {
        "rows": N_("tokens as rows (PyTorch)"),
        "columns": N_("tokens as columns (UDL book)"),
    },
    "wrange": {"fixed": N_("0 to 1"), "matrix": N_("each matrix's own range")},
}

#: Widget kind -> the name the README's table gives it.
KINDS = {
    "radio": "radio",
    "select": "selectbox",
    "slider": "slider",
    "number": "number",
    "toggle": "toggle",
    "text": "text input",
    "upload": "file uploader",
}


@dataclass(frozen=True)
class Control:
    """One sidebar control. ``options`` may depend on the values drawn before it."""

    key: str
    label: str
    kind: str  # a key of KINDS
    section: str
    default: Any
    doc: str  # the README's "values" column
    rule: str | Callable[[dict], str] = ""  # what a link's value must be
    field: str | None = None  # the Settings field (None: not part of Settings)
    type: Any = str  # the Settings field's type
    options: tuple | Callable[[dict], list] | None = None
    lo: Any = None
    hi: Any = None
    step: Any = None
    help: str | None = None
    when: tuple[str, str] | None = None  # (key, value): shown only then
    hidden: Any = "default"  # the value while not shown ("default": the default)
    derived_by: tuple[str, ...] = ()  # inputs (sources) that set it
    disabled_by: tuple[str, ...] = ()  # sources under which it is fixed
    bind: bool = True  # bound to the URL
    horizontal: bool = False
    on_change: Callable[[], None] | None = None
    after: str | None = None  # the check after the widget (a key of walker.AFTER)
    box: bool = False  # a slider with a number box beside it (the same value, typed)
    mask_param: bool = False  # a mask kind's parameter (masks.PARAMS): in Settings.mask_params

    def shown(self, values: dict) -> bool:
        return self.when is None or values.get(self.when[0]) == self.when[1]

    def hidden_value(self) -> Any:
        return self.default if self.hidden == "default" else self.hidden

    def option_list(self, values: dict) -> list:
        return list(self.options(values) if callable(self.options) else self.options)

    def rule_text(self, values: dict) -> str:
        """The link rule in the shown language."""
        return self.rule(values) if callable(self.rule) else translated(self.rule)

    def label_text(self) -> str:
        """The label in the shown language (``label`` is the English, as the README's)."""
        return translated(self.label)

    def section_text(self) -> str:
        return translated(self.section)

    def help_text(self) -> str | None:
        return None if self.help is None else translated(self.help)


#: English texts filled from a marked template (or joined from marked parts) -> how to
#: say them in the shown language (:func:`translated`).
_FILLED: dict[str, Callable[[], str]] = {}


def filled(template: str, **values: Any) -> str:
    """``template`` (marked with ``N_``) filled in English; :func:`translated` says it in
    the shown language."""
    text = template.format(**values)
    _FILLED[text] = lambda: _(template).format(**values)
    return text


def _joined(parts: list[str], sep: str = " · ") -> str:
    """Marked ``parts`` joined in English; :func:`translated` joins their translations."""
    text = sep.join(parts)
    _FILLED[text] = lambda: sep.join(_(p) for p in parts)
    return text


def translated(text: str) -> str:
    """A text of the table (a label, a help, a section, a rule) in the shown language."""
    say = _FILLED.get(text)
    return say() if say is not None else _(text)


def sources(values: dict) -> list[str]:
    return [s for s in SOURCES if s != "preset" or callbacks.preset_names()]


def _heads_rule(values: dict) -> str:
    d = values.get("D", DEFAULTS["D"])
    return _("a divisor of D={d} ({values})").format(d=d, values=", ".join(map(str, divisors(d))))


# --------------------------------------------------------------------------- the table

_UPLOAD_MB = inputs.MAX_UPLOAD_BYTES // 2**20
_SOURCE_HELP = N_(
    "random: X ~ N(0,1) with the seed · typed text: each word is a token with a fixed "
    "embedding · preset: a seed notebook's numbers · CSV: your own X"
)
_INIT_HELP = N_(
    "How W_q, W_k, W_v, W_O (and the biases) are drawn from seed + 1. **normal**: N(0, 1), "
    "as in the UDL notebooks; each Q, K entry then has variance ≈ D, so the scores are "
    "large and the softmax is almost one-hot. **uniform**: U[0, 1), as np.random.rand / "
    "torch.rand in the other notebooks (all positive weights). **xavier** (default): Glorot "
    "uniform U(±√(6 / (D + D))), a usual choice for attention projections: Q and K entries "
    "keep variance ≈ 1 and the weights show graded, soft attention. Presets use their "
    "notebook's own weights."
)
_INIT_DOC = (
    "`xavier` (default: Q, K entries of variance ≈ 1, soft weights), `normal` (N(0,1) as in "
    "the UDL notebooks: scores of ±10, near one-hot weights), `uniform` (U[0,1))"
)
_DERIVED_N = ("text", "preset", "upload")

# One entry per control, in sidebar order: key, label, widget kind, section, default, then
# what the README says of its values, the link rule, the Settings field and the rest.
# fmt: off
CONTROLS: tuple[Control, ...] = (
    Control("source", N_("Where X comes from: random · text · preset · upload (CSV)"), "radio",
            N_("Input X"), "random", "`random`, `text`, `preset`, `upload` (the input X)",
            rule=filled(N_("one of {values}"), values=", ".join(SOURCES)), field="source",
            options=sources, on_change=callbacks.on_source_change, help=_SOURCE_HELP),
    Control("text", N_("Text (words and punctuation become tokens)"), "text", N_("Input X"),
            "the cat sat on the mat because it was tired",
            "the sentence (source `text`): each token gets a fixed embedding",
            rule=N_("some text"), field="text", when=("source", "text"), after="text"),
    Control("preset", N_("Notebook preset"), "select", N_("Input X"), None,
            "a name from `attnviz.teaching.presets.names()` (source `preset`)",
            rule=N_("the name of a notebook preset"), field="preset", type=str | None,
            options=callbacks.preset_names, when=("source", "preset"), hidden=None,
            on_change=callbacks.on_preset_change, after="preset"),
    Control("upload", N_("CSV of X: one row per token, one column per feature (optional "
            "header row and first column of token labels)"), "upload", N_("Input X"), None,
            "a CSV of X, one row per token (not in the URL)", when=("source", "upload"),
            bind=False, after="upload",
            help=filled(N_("Up to {mb} MB (a 512 × 128 X is about 0.7 MB)."), mb=_UPLOAD_MB)),
    Control("N", N_("N — number of tokens"), "slider", N_("Sizes"), 6,
            f"tokens, 1..{N_MAX} (set by the input for text, presets, uploads); the box "
            "beside the slider takes a typed value",
            rule=filled(N_("an integer from {lo} to {hi}"), lo=1, hi=N_MAX),
            field="n", type=int, lo=1, hi=N_MAX, derived_by=_DERIVED_N, box=True,
            help=N_("Drag the slider, or type a number in the box beside it. Set by the input "
            "for typed text, presets and CSV uploads.")),
    Control("D", N_("D — model width (features per token)"), "slider", N_("Sizes"), D_DEFAULT,
            f"model width, 1..{D_MAX}; the box beside the slider takes a typed value",
            rule=filled(N_("an integer from {lo} to {hi}"), lo=1, hi=D_MAX), field="d",
            type=int, lo=1, hi=D_MAX,
            derived_by=("preset", "upload"), on_change=callbacks.on_d_change, box=True,
            help=N_("Drag the slider, or type a number in the box beside it.")),
    Control("heads", N_("heads (divisors of D)"), "select", N_("Sizes"), HEADS_DEFAULT,
            "a divisor of D (changing D picks the nearest divisor)", rule=_heads_rule,
            field="heads", type=int, options=lambda v: divisors(v["D"]),
            derived_by=("preset",),
            help=N_("Each head gets D / heads columns of Q, K and V; only divisors of D are "
            "offered.")),
    Control("seed", N_("seed"), "number", N_("Sizes"), 0,
            "X ~ N(0,1) from `default_rng(seed)`, the weights from `seed + 1`",
            rule=filled(N_("an integer from {lo} to {hi}"), lo=0, hi=SEED_MAX), field="seed",
            type=int, lo=0, hi=SEED_MAX, step=1, disabled_by=("preset",),
            help=N_("X ~ N(0,1) from numpy.random.default_rng(seed); the weights from "
            "seed + 1.")),
    # xavier, not the notebooks' N(0,1): with N(0,1) weights the scores are ~±10 even at
    # N=6, D=8 and the softmax is nearly one-hot: the first view shows no soft attention.
    Control("init", N_("parameter initialisation"), "radio", N_("Sizes"), "xavier", _INIT_DOC,
            rule=filled(N_("one of {values}"), values=", ".join(INITS)), field="init",
            options=INITS, horizontal=True, disabled_by=("preset",), help=_INIT_HELP),
    Control("bias", N_("biases b_q, b_k, b_v, b_o"), "toggle", N_("Sizes"), True,
            "biases on/off", rule=N_("true or false"), field="bias", type=bool,
            disabled_by=("preset",)),
    Control("scale", N_("scale the scores QKᵀ by"), "radio", N_("Attention"), "1/√d_k",
            "`none`, `1/√d_k`, `custom`",
            rule=filled(N_("one of {values}"), values=", ".join(SCALES)),
            field="scale_mode", options=SCALES, horizontal=True),
    Control("factor", N_("factor (temperature T = 1 / factor)"), "number", N_("Attention"),
            8.0, "the custom factor (temperature = 1/factor)",
            rule=filled(N_("a number from {lo} to {hi}"), lo=-100, hi=100),
            field="factor", type=float, lo=-100.0, hi=100.0, step=0.5,
            when=("scale", "custom"), after="factor"),
    Control("mask", N_("mask"), "radio", N_("Attention"), "none",
            ", ".join(f"`{m}`" for m in MASKS),
            rule=filled(N_("one of {values}"), values=", ".join(MASKS)),
            field="mask_kind", options=MASKS, horizontal=True,
            help=_joined([k.explain for k in masks.KINDS.values() if k.builder])),
    # one number per mask parameter (masks.KINDS), shown when its kind is chosen
    *(Control(p.key, p.label, "number", N_("Attention"), p.default, p.doc,
              rule=filled(N_("an integer from {lo} to {hi}"), lo=p.lo, hi=N_MAX), type=int,
              lo=p.lo, hi=N_MAX, step=1, when=("mask", kind), after=p.key, mask_param=True)
      for kind, p in masks.PARAMS.values()),
    Control("layout", N_("layout: tokens as rows (PyTorch) or as columns (UDL book)"), "radio",
            N_("Attention"), "rows",
            "`rows` (tokens as rows, PyTorch) or `columns` (tokens as columns, UDL book)",
            rule=filled(N_("one of {values}"), values=", ".join(LAYOUTS)), field="layout",
            options=LAYOUTS,
            help=N_("PyTorch stores one token per row (X is N×D); the UDL book one token per "
            "column (X is D×N). Same numbers, transposed.")),
    Control("wrange", N_("weights' colour range"), "radio", N_("Attention"), "fixed",
            "`fixed` (0 to 1, every chart alike) or `matrix` (0 to each matrix's largest "
            "weight, said in its colour bar), on every page's weights",
            rule=filled(N_("one of {values}"), values=", ".join(WEIGHT_RANGES)),
            options=WEIGHT_RANGES, horizontal=True,
            help=N_("0 to 1 compares charts; at large N every weight is near 1/N and the rows "
            "are one dark block: each matrix's own range (0 to its largest weight, in its "
            "colour bar's title) shows them.")),
)
# fmt: on

BY_KEY = {c.key: c for c in CONTROLS}
#: Default values of the URL-bound controls (the preset's default is the first preset).
DEFAULTS: dict[str, Any] = {c.key: c.default for c in CONTROLS if c.bind and c.key != "preset"}
#: The sidebar keys bound to the URL.
KEYS = tuple(DEFAULTS) + ("preset",)


@dataclass(frozen=True)
class Settings:
    """The frozen settings of a view: one field per control that has a ``field``, in the
    order of :data:`CONTROLS` (``tests/ui/test_controls_settings.py`` checks names, order and types
    against the table), plus the uploaded file's name. Hashable and picklable, so that
    ``st.cache_data`` keys :func:`attnviz.ui.state.compute` by it."""

    source: str  # where X comes from: "random", "text", "preset", "upload" (URL key source)
    text: str  # the typed sentence (source "text")
    preset: str | None  # a name from attnviz.teaching.presets.names() (source "preset")
    n: int  # N, tokens (URL key N)
    d: int  # D, the model width (URL key D)
    heads: int  # H, a divisor of D
    seed: int  # X from default_rng(seed), the weights from seed + 1
    init: str  # the weights' initialisation: "normal", "uniform", "xavier"
    bias: bool  # biases b_q, b_k, b_v, b_o on or off
    scale_mode: str  # "none", "1/√d_k", "custom" (URL key scale)
    factor: float  # the custom factor (temperature 1 / factor)
    mask_kind: str  # a name of attnviz.engine.masks.KINDS: "none", "causal", ... (URL key mask)
    mask_params: tuple[tuple[str, int], ...]  # that kind's parameters: (("pad", 2),)
    layout: str  # "rows" (tokens as rows, PyTorch) or "columns" (UDL book)
    upload_name: str | None = None  # the uploaded CSV's file name (source "upload")

    @property
    def scale(self) -> engine.Scale:
        """The engine's ``scale`` argument: True (1/√d_k), False (none) or the factor."""
        return {"none": False, "1/√d_k": True}.get(self.scale_mode, float(self.factor))

    @property
    def d_head(self) -> int:
        return self.d // self.heads

    def __getattr__(self, name: str) -> int:
        """A mask parameter by its URL key (``s.pad``): its value in :attr:`mask_params`,
        else (another kind is chosen) its default, as a hidden control keeps it."""
        if name.startswith("__") or name not in masks.PARAMS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return dict(self.__dict__.get("mask_params", ())).get(name, masks.PARAMS[name][1].default)

    def mask(self) -> np.ndarray | None:
        """The (N, N) mask of :attr:`mask_kind` (True = may attend), or None."""
        return masks.build(self.mask_kind, self.n, **dict(self.mask_params))

    def value(self, key: str) -> Any:
        """The value of the control ``key`` (a field, or a mask parameter)."""
        return getattr(self, key if BY_KEY[key].mask_param else BY_KEY[key].field)

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, the mask's parameters by their URL keys (each of them: a
        hidden one at its default, as the sidebar keeps it) in place of ``mask_params``."""
        out: dict[str, Any] = {}
        for name, value in dataclasses.asdict(self).items():
            if name == "mask_params":
                out.update({key: getattr(self, key) for key in masks.PARAMS})
            else:
                out[name] = value
        return out


def mask_params(kind: str, values: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """:attr:`Settings.mask_params` of mask ``kind`` from control values (key -> value)."""
    return tuple((p.key, int(values[p.key])) for p in masks.kind(kind).params)


def replace(s: Settings, **changes: Any) -> Settings:
    """``s`` with ``changes``: Settings fields, or mask parameters by their URL keys
    (``replace(s, mask_kind="padding", pad=2)``). The mask's parameters are those of the
    new kind, each changed, kept from ``s`` or (not set before) its default."""
    params = {k: changes.pop(k) for k in list(changes) if k in masks.PARAMS}
    kind = changes.get("mask_kind", s.mask_kind)
    if params or "mask_params" not in changes:
        values = {**dict(changes.get("mask_params", s.mask_params)), **params}
        values = {p.key: values.get(p.key, p.default) for p in masks.kind(kind).params}
        changes["mask_params"] = mask_params(kind, values)
    return dataclasses.replace(s, **changes)


def markdown_table() -> str:
    """The README's control table, made from :data:`CONTROLS`."""
    rows = ["| key | widget | values |", "| --- | --- | --- |"]
    rows += [
        f"| `{c.key}` | {KINDS[c.kind]}{' + number box' if c.box else ''} | {c.doc} |"
        for c in CONTROLS
    ]
    return "\n".join(rows)


def option_label(key: str, value: Any) -> str | None:
    """Control ``key``'s option ``value`` by its label (:data:`LABELS`) in the shown
    language; None for a value without one (a number, a free text)."""
    label = LABELS.get(key, {}).get(value)
    return None if label is None else _(label)


def option_captions(words: dict[str, str] | None, opts: list) -> list[str] | None:
    """Outside English, a radio's options in the shown language (``words``: option ->
    English label), under each option: the options themselves stay the link's values
    (Streamlit writes the shown option into the link), so ``?source=random`` opens the same
    view in every language."""
    if i18n.current() == i18n.SOURCE or not words:
        return None
    return [_(words[o]) if o in words else "" for o in opts]
