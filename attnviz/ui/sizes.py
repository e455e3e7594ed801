"""The sizes' rules, at the bottom of the ui package (no Streamlit, no other ui module).

The largest N and D, the defaults of D and heads, and which head counts a width allows:
the controls' table (:mod:`attnviz.ui.controls`) and the callbacks that keep ``heads`` a
divisor of ``D`` (:mod:`attnviz.ui.callbacks`) both read them from here.
"""

from __future__ import annotations

from attnviz.engine import limits

N_MAX = limits.N_MAX  # the one table of N's limits (attnviz.engine.limits)
D_MAX = limits.D_MAX
#: The defaults of the ``D`` and ``heads`` controls.
D_DEFAULT = 8
HEADS_DEFAULT = 2


def divisors(d: int) -> list[int]:
    """The divisors of ``d`` in increasing order: the valid head counts for width D."""
    return [h for h in range(1, d + 1) if d % h == 0]


def nearest_divisor(d: int, heads: int) -> int:
    """The divisor of ``d`` closest to ``heads`` (the smaller one on a tie)."""
    return min(divisors(d), key=lambda h: (abs(h - heads), h))


def default_heads(d: int) -> int:
    """The head count a width ``d`` starts with: the divisor nearest the default."""
    return nearest_divisor(d, HEADS_DEFAULT)
