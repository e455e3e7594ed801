"""Numbers and counts written the way a student reads them (pure Python, no NumPy needed).

The pages say what they measured in sentences, not in a test's output: ``0.84``, not
``8.41e-01``; ``2.2 × 10⁻¹⁶``, not ``2.2e-16``; ``1 other key``, not ``other 1 keys``.

- :func:`readable`: a number with ``sig`` significant digits in plain decimals while it is
  between 0.001 and a million (``0.84``, ``8.4``, ``841``), else as a power of ten.
- :func:`power_of_ten`: ``2.2 × 10⁻¹⁶`` (superscript exponent, typographic minus).
- :func:`rounding`: a difference that should be 0: ``exactly 0``, or its size followed by
  "(floating-point rounding)" while it is below ``tolerance``.
- :func:`plural`: ``1 key``, ``3 keys`` (the shown language's plural rules: ``ngettext``).

Numbers come with the shown language's decimal sign (``0,84`` in Spanish).
"""

from __future__ import annotations

import math

from attnviz import i18n
from attnviz.i18n import _, ngettext

__all__ = ["plural", "power_of_ten", "readable", "rounding"]

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
MINUS = "−"  #: the typographic minus sign (U+2212) of the exponents


def power_of_ten(x: float, sig: int = 2) -> str:
    """``x`` as ``m × 10ⁿ`` with ``sig`` significant digits in ``m``: 2.22e-16 -> "2.2 ×
    10⁻¹⁶", 1e-12 -> "1 × 10⁻¹²"; 0 -> "0"; not finite -> "∞", "−∞" or "NaN"."""
    x = float(x)
    if not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("∞" if x > 0 else MINUS + "∞")
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.{max(sig, 1) - 1}e}".split("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{_decimal(mantissa)} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _decimal(text: str) -> str:
    """A plain number written with a point, in the shown language's decimal sign."""
    return text.replace(".", i18n.decimal_sign(i18n.current()))


def readable(x: float, sig: int = 2) -> str:
    """``x`` with ``sig`` significant digits, in decimals from 0.001 to a million (8.41e-01
    -> "0.84", 3.14159 -> "3.1", 841.3 -> "841", 0.5 -> "0.5"), beyond that as a power of
    ten (2.2e-16 -> "2.2 × 10⁻¹⁶"); 0 (and -0) -> "0"."""
    x = float(x)
    if not math.isfinite(x) or x == 0:
        return power_of_ten(x, sig)
    size = abs(x)
    if not 1e-3 <= size < 1e6:
        return power_of_ten(x, sig)
    decimals = max(0, sig - 1 - math.floor(math.log10(size)))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if float(text) == 0 else _decimal(text)


def rounding(x: float, tolerance: float = 1e-9) -> str:
    """A difference that should be 0, in words: "exactly 0"; below ``tolerance``, its size
    and "(floating-point rounding)"; else its size alone (then it is a real difference)."""
    x = abs(float(x))
    if x == 0:
        return _("exactly 0")
    if x < tolerance:
        return _("{size} (floating-point rounding)").format(size=power_of_ten(x))
    return readable(x, 3)


def plural(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the word, singular for 1: plural(1, "key") -> "1 key", plural(3, "key")
    -> "3 keys", plural(2, "matrix", "matrices") -> "2 matrices". The word is the shown
    language's form for ``n`` (``ngettext(one, many, n)``: give both words as literals so
    that they reach the catalog; ``many`` left out is ``one + "s"``, English only)."""
    word = ngettext(one, many if many is not None else one + "s", n)
    return f"{n} {word}"
