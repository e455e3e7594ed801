"""What the Heads section of the model pages works on (:mod:`attnviz.ui.heads`
re-exports it): a page's :class:`ModelHeads` (its widget keys and how it runs the probe),
a probe run's :class:`ProbeSummary` (:func:`summarise`: the top heads of each pattern and
their weights only), and what each score means (:data:`MEANING`). No Streamlit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from attnviz.i18n import N_
from attnviz.models import head_patterns, head_probes
from attnviz.models.head_patterns import PATTERNS

#: The top heads of each pattern the section shows.
TOP = 3

#: What each score means, in plain words (the table's column help and the legend): marked
#: for the catalog, translated where shown (``_(MEANING[name])``).
MEANING = {
    "previous": N_("weight on the token just before"),
    "first": N_("weight on the first token (the ‘attention sink’: [CLS] in MiniLM)"),
    "self": N_("weight on the token itself"),
    "local": N_("weight on the 3 tokens before"),
    "duplicate": N_("weight on earlier copies of the same token"),
    "induction": N_("weight on the token that followed the earlier copy"),
}


@dataclass(frozen=True)
class ModelHeads:
    """What the section needs from a model page.

    ``prefix``: the page's widget-key prefix (``"rm"``, ``"dec"``); ``name``: the model
    as the page names it; ``causal``: a decoder (each token sees only earlier ones);
    ``layer_key`` / ``head_key``: the page's head-view sliders (values from 0, as on screen);
    ``probe``: (seed, length) -> :class:`~attnviz.models.head_probes.ProbeRun`;
    ``text_key``: the page's text box; ``repeat_text``: a prompt that repeats a phrase,
    offered in one click (where the model's induction heads show on a text of a student's
    length), or None.
    """

    prefix: str
    name: str
    causal: bool
    layer_key: str
    head_key: str
    probe: Callable[[int, int], head_probes.ProbeRun] = field(compare=False)
    text_key: str | None = None
    repeat_text: str | None = None


@dataclass(frozen=True, eq=False)
class ProbeSummary:
    """What the page keeps of a probe run (small, so that ``st.cache_data`` copies it
    quickly): tokens, ids, ``length`` and ``start`` as in ProbeRun, the scores, the top
    heads of each pattern, and the weights (N, N) of those heads only."""

    tokens: list[str]
    ids: np.ndarray
    length: int
    start: int
    scores: dict[str, np.ndarray]
    top: dict[str, list[tuple[int, int, float]]]
    weights: dict[tuple[int, int], np.ndarray]


def summarise(run: head_probes.ProbeRun, k: int = TOP) -> ProbeSummary:
    """The ``k`` top heads of every pattern, with their weights on the probe."""
    top = {name: head_patterns.top_heads(run.scores[name], k) for name in PATTERNS}
    picked = {(lay, h) for heads in top.values() for lay, h, _ in heads}
    return ProbeSummary(
        tokens=list(run.tokens),
        ids=run.ids,
        length=run.length,
        start=run.start,
        scores=run.scores,
        top=top,
        weights={lh: np.asarray(run.attentions[lh], dtype=np.float32) for lh in sorted(picked)},
    )
