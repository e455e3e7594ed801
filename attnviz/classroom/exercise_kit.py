"""What every exercise is made of: the :class:`Exercise` and its checking (numbers, shapes,
words), the titles and choices of each kind, and the LaTeX the prompts are written in.

The generators are :mod:`attnviz.classroom.exercises` (self-attention, the Learned attention page)
and :mod:`attnviz.classroom.exercises_cross` (cross-attention); every public name here is also
importable from :mod:`attnviz.classroom.exercises`. Pure NumPy.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from attnviz import i18n
from attnviz.i18n import N_, _
from attnviz.teaching import latex

#: Each choice question's options: the answer VALUES (compared with what a student sends,
#: stored in a class's database), English whatever the language; shown with
#: :func:`choice_label`.
CHOICES = {"scaling": ("rise", "fall"), "circuit": ("layer 0", "layer 1")}
#: How each choice is shown (translated with ``_()`` where it is shown).
CHOICE_LABELS = {
    "rise": N_("rise"),
    "fall": N_("fall"),
    "layer 0": N_("layer 0"),
    "layer 1": N_("layer 1"),
}
#: The kinds whose answer is a shape such as "(2, 7, 4)".
SHAPE_KINDS = ("shape", "cross_shape")
#: Each kind's title as a student reads it (a page shows "3. One scaled score", not "score").
#: Marked with ``N_``: :attr:`Exercise.title` translates them.
TITLES = {
    "argmax": N_("Which key wins"),
    "weight": N_("One attention weight"),
    "score": N_("One scaled score"),
    "mask": N_("Weights under a mask"),
    "shape": N_("The weights' shape"),
    "scaling": N_("Scaling and entropy"),
    "heads": N_("Which head looks back"),
    "circuit": N_("Where the induction head is"),
    "timing": N_("When the induction head forms"),
    "cross_shape": N_("The cross weights' shape"),
    "cross_argmax": N_("Which source token wins"),
}


def choice_label(choice: str) -> str:
    """A choice VALUE of :data:`CHOICES` as shown in the shown language ("rise" -> "sube"
    in Spanish); a value not in :data:`CHOICE_LABELS` as it is."""
    return _(CHOICE_LABELS[choice]) if choice in CHOICE_LABELS else choice


@dataclass(frozen=True)
class Exercise:
    """One question. ``answer`` is exact; :meth:`check` accepts it within ``tolerance``
    (0 for integers and words)."""

    kind: str
    prompt: str
    answer: int | float | str
    explanation: str
    hint: str
    tolerance: float = 0.0
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The options of a choice question (None: type a number or a shape)."""
        return CHOICES.get(self.kind)

    @property
    def title(self) -> str:
        """The question's title for a student (:data:`TITLES`, in the shown language)."""
        return _(TITLES[self.kind]) if self.kind in TITLES else self.kind.capitalize()

    @property
    def choice_labels(self) -> tuple[str, ...] | None:
        """The options as shown (:func:`choice_label`), in the order of :attr:`choices`."""
        return None if self.choices is None else tuple(map(choice_label, self.choices))

    @property
    def answer_text(self) -> str:
        """The answer as a student would write it (with a point: the answer key's CSV and
        the grading read it; :attr:`answer_shown` is the one for prose)."""
        if isinstance(self.answer, float):
            return f"{self.answer:.2f}"
        return str(self.answer)

    @property
    def answer_shown(self) -> str:
        """The answer as shown to a person in the shown language: "0,84" in Spanish, a
        choice by its label (:func:`choice_label`)."""
        if isinstance(self.answer, float):
            return i18n.fmt(self.answer, ".2f")
        if self.choices is not None and isinstance(self.answer, str):
            return choice_label(self.answer)
        return str(self.answer)

    def check(self, value: object) -> bool:
        """True if ``value`` is right within the stated tolerance. Never raises."""
        try:
            return self._check(value)
        except Exception:  # noqa: BLE001 - junk input is simply wrong
            return False

    def _check(self, value: object) -> bool:
        if isinstance(self.answer, str):
            if not isinstance(value, str):
                if self.kind in SHAPE_KINDS and isinstance(value, tuple | list):
                    value = "x".join(str(int(v)) for v in value if _is_int(v))
                else:
                    return False
            if self.kind in SHAPE_KINDS:
                got = parse_shape(value)
                return got is not None and got == parse_shape(self.answer)
            return _word(value) == self.answer
        x = parse_number(value)
        if x is None:
            return False
        if isinstance(self.answer, int) and not self.tolerance:
            return x == self.answer
        return abs(x - self.answer) <= self.tolerance + 1e-9


def _is_int(v: object) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


#: What a typed number's decimal sign may be besides the point: the comma ("0,25", as in
#: Spanish), the Arabic decimal separator ("٠٫٢٥"), the full-width point and comma.
_DECIMAL_SIGNS = str.maketrans({",": ".", "\u066b": ".", "\uff0e": ".", "\uff0c": "."})


def parse_number(value: object) -> float | None:
    """A finite number from an int, float or a string such as ``" 0.25"`` (or ``"0,25"``,
    ``"٠٫٢٥"``: :data:`_DECIMAL_SIGNS`); None for anything else (bools, NaN, inf, words,
    empty)."""
    if isinstance(value, bool | np.bool_) or value is None:
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        x = float(value)
    elif isinstance(value, str):
        s = value.strip().replace("−", "-").translate(_DECIMAL_SIGNS)
        if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", s):
            return None
        x = float(s)
    else:
        return None
    return x if math.isfinite(x) else None


#: The commas and brackets of other scripts, read as "," "(" ")": the Arabic comma "،",
#: the full-width ones "，（）" of Chinese input methods.
_SHAPE_SIGNS = str.maketrans({"\u060c": ",", "\uff0c": ",", "\uff08": "(", "\uff09": ")"})


def parse_shape(value: str) -> tuple[int, ...] | None:
    """``"(4, 2)"``, ``"4x2"``, ``"4×2"``, ``"[4,2]"``, ``"4 by 2"``, ``"(4، 2)"``,
    ``"（4，2）"`` -> ``(4, 2)``; None if not a shape."""
    s = value.translate(_SHAPE_SIGNS).strip().lower().strip("()[] ")
    parts = [p for p in re.split(r"\s*(?:,|x|×|\*|by)\s*|\s+", s) if p != ""]
    if not parts or not all(re.fullmatch(r"\d{1,4}", p) for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _word(value: str) -> str:
    """A typed word as a choice VALUE: English synonyms, and a choice's label in any
    language attnviz speaks ("sube" -> "rise"), so that grading does not depend on the
    language of whoever grades."""
    w = value.strip().lower().rstrip(".!。")
    w = {"rises": "rise", "falls": "fall", "up": "rise", "down": "fall"}.get(w, w)
    return _labels_to_values(tuple(i18n.available())).get(w, w)


@lru_cache(maxsize=8)
def _labels_to_values(languages: tuple[str, ...]) -> dict[str, str]:
    """Each choice's label, lower-cased, in every language of ``languages`` -> its value
    (a label that two values share in some language is left out)."""
    seen: dict[str, set[str]] = {}
    for code in languages:
        for value, label in CHOICE_LABELS.items():
            seen.setdefault(i18n.gettext_for(code, label).strip().lower(), set()).add(value)
    return {label: values.pop() for label, values in seen.items() if len(values) == 1}


# --------------------------------------------------------------------------- formatting


def tex(v: float, decimals: int) -> str:
    """A number of an exercise's LaTeX, rounded to ``decimals``, with the shown language's
    decimal sign: "0.35" in en, "0{,}35" in es (braced, so that TeX puts no space after
    it; the phone page's MathML reads it as one number)."""
    s = i18n.number(latex.number(v + 0.0, decimals))
    dec = i18n.decimal_sign(i18n.current())
    return s if dec == "." else s.replace(dec, "{" + dec + "}")


def bmatrix(a: np.ndarray, decimals: int = 0, name: str | None = None) -> str:
    """A LaTeX ``bmatrix`` of a 1-D or 2-D array (numbers rounded to ``decimals``)."""
    a = np.atleast_2d(np.asarray(a, dtype=float))
    rows = [" & ".join(tex(v, decimals) for v in row) for row in a]
    body = r"\begin{bmatrix} " + r" \\ ".join(rows) + r" \end{bmatrix}"
    return f"{name} = {body}" if name else body


def _block(*parts: str) -> str:
    return "\n$$\n" + r" \qquad ".join(parts) + "\n$$\n"


def _vec(a: np.ndarray, decimals: int = 0) -> str:
    """A vector in an explanation's prose, "(0.05, 0.36)": its numbers with the shown
    language's decimal sign, "; " between them where that sign is a comma ("(0,05; 0,36)"),
    and isolated in a right-to-left language (its order is the vector's)."""
    numbers = [i18n.number(latex.number(v + 0.0, decimals)) for v in np.asarray(a, dtype=float)]
    between = "; " if i18n.decimal_sign(i18n.current()) == "," else ", "
    return i18n.isolated(f"({between.join(numbers)})")


def _factor(v: float, decimals: int) -> str:
    s = tex(v, decimals)
    return f"({s})" if s.startswith("-") else s


def _dot_terms(q: np.ndarray, k: np.ndarray, decimals: int) -> str:
    """LaTeX ``1 \\cdot 2 + (-1) \\cdot 0``: negative factors in parentheses."""
    return " + ".join(
        f"{_factor(a, decimals)} \\cdot {_factor(b, decimals)}" for a, b in zip(q, k, strict=True)
    )


def _ints(rng: np.random.Generator, shape: tuple[int, ...], lo: int = -2, hi: int = 2):
    return rng.integers(lo, hi + 1, size=shape).astype(float)
