"""Predict, then reveal on every page: each page's **Ask the room** questions about the
view on screen (:func:`attnviz.ui.predict.ask_room`), so that a page calls one function.
Nothing is drawn unless a teacher with an open class is presenting.

- :func:`playground`, :func:`multi_head`: "Which key does query i attend to most (head
  h)?" (the page's query picker) and "Which head looks at the previous token?".
- :func:`step_by_step`: on the "Softmax: weights" step, "Which key does query i attend
  to most (head h)?" (the query picked in the box).
- :func:`masking`: on each mask's step, the same question under that mask; the keys the
  mask hides are not choices (a query that sees one key is not asked).
- :func:`scaling`: "Which row i is sharper: not scaled or scaled by 1/√d_k?" (entropy).
- :func:`compare`: "Which row i is sharper: view A's or view B's?" (entropy).
- :func:`permutation`: "After the shuffle, which row of attention(P·X) is the old output
  row i?" (the row equal to it; none with positional encodings: the button says so).
- :func:`cross` (Cross-attention): "Which source token does target token i attend to
  most (head h)?" (the source's visible tokens are the choices).
- :func:`model_heads` (MiniLM, SmolLM2): "Which head of layer l looks at the previous
  token?" over the layer's heads, numbered from 1 as on those pages.
- :func:`learned` (Learned attention): "Which head looks at the previous token?" and, on
  the induction task, "Which head is an induction head?", over every head of every layer
  at the training step on screen.

The answers come from :mod:`attnviz.classroom.predict`; a page's chart names itself for the outline
with ``overlay=ui.Overlay(slug, view, ...)`` (the board's overlay hook,
:func:`attnviz.ui.predict.class_overlay`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnviz.classroom import predict
from attnviz.i18n import _
from attnviz.teaching.token_text import visible
from attnviz.ui.predict import QUERY_KEY, Ask, ask_box, ask_room, query_on_screen, top_key_ask


def _picked(n: int) -> int:
    return query_on_screen(n, QUERY_KEY)


def playground(settings: object, weights: np.ndarray, head: int, labels: Sequence[str]) -> None:
    """The playground's two questions (:func:`~attnviz.ui.predict.ask_box`): which key the
    query of the page's picker attends to most in ``head``, which head of ``weights`` (H,
    N, N) looks at the previous token."""
    ask_box("playground", settings, weights, head, query_on_screen(weights.shape[1]), labels)


def multi_head(settings: object, weights: np.ndarray, head: int, labels: Sequence[str]) -> None:
    """Multi-head's slides: the playground's two questions about ``head`` on screen."""
    ask_box("multi_head", settings, weights, head, query_on_screen(weights.shape[1]), labels)


def step_by_step(settings: object, weights: np.ndarray, head: int, labels: Sequence[str]) -> None:
    """The weights step's question: ``weights`` (H, N, N), ``head`` on screen."""
    n = weights.shape[1]
    ask_room(
        "step_by_step", settings, [top_key_ask(weights, head, _picked(n), labels)], pick_query=n
    )


def masking(
    view: object,
    name: str,
    weights: np.ndarray,
    mask: np.ndarray | None,
    head: int,
    labels: Sequence[str],
) -> None:
    """A mask's step: ``view`` (settings and step: each mask is its own view), ``name``
    ("causal"), the variant's ``weights`` (H, N, N) and ``mask`` (N, N) or None."""
    n = weights.shape[1]
    ask = top_key_ask(weights, head, _picked(n), labels, mask=mask, name=name)
    ask_room("masking", view, [ask], pick_query=n)


def scaling(settings: object, unscaled: np.ndarray, scaled: np.ndarray, head: int) -> None:
    """The scaled-vs-not pair: weights (H, N, N) each, ``head`` on screen."""
    n = unscaled.shape[1]
    query = _picked(n)
    ask = Ask(
        _("Which row {query} is sharper: not scaled, or scaled?").format(query=query),
        "sharper_row",
        lambda: predict.sharper_row(unscaled, scaled, head, query),
    )
    ask_room("scaling", settings, [ask], pick_query=n)


def compare(view: object, a: np.ndarray, b: np.ndarray, heads: tuple[int, int]) -> None:
    """Views A and B: ``view`` (both settings and heads), their head's weights (N, N) each,
    ``heads`` (A's, B's) on screen."""
    n = a.shape[0]
    query = _picked(n)
    prompt = _("Which row {query} is sharper: view A's (head {a}) or view B's (head {b})?").format(
        query=query, a=heads[0], b=heads[1]
    )
    choices = (_("view A"), _("view B"))
    ask = Ask(
        _("Which row {query} is sharper: A's or B's?").format(query=query),
        "sharper_row",
        lambda: predict.sharper_row(a[None], b[None], 0, query, choices, prompt),
    )
    ask_room("compare", view, [ask], pick_query=n)


def permutation(view: object, out: np.ndarray, out_of_permuted: np.ndarray) -> None:
    """``view`` (settings, shuffle seed, positions), the outputs (N, D) before and after."""
    n = out.shape[0]
    row = _picked(n)
    ask = Ask(
        _("After the shuffle, where is the old output row {row}?").format(row=row),
        "moved_row",
        lambda: predict.moved_row(out, out_of_permuted, row),
    )
    ask_room("permutation", view, [ask], pick_query=n, pick_label=_("old output row i"))


def cross(
    view: object,
    weights: np.ndarray,
    head: int,
    target_labels: Sequence[str],
    source_labels: Sequence[str],
    mask: np.ndarray | None = None,
) -> None:
    """The Cross-attention page: ``weights`` (H, T, S), ``head`` on screen, the source's
    padding ``mask`` (T, S) or None; ``view``: what makes the chart (both settings)."""
    t = weights.shape[1]
    i = _picked(t)
    target = visible(target_labels[i]) if i < len(target_labels) else str(i)
    ask = Ask(
        _("Which source token does target token {i} ({target}) attend to most?").format(
            i=i, target=target[:16]
        ),
        "top_key",
        lambda: predict.top_source(weights, head, i, target_labels, source_labels, mask=mask),
    )
    ask_room("cross", view, [ask], pick_query=t, pick_label=_("target token i of the question"))


def model_heads(page: str, view: object, weights: np.ndarray, layer: int) -> None:
    """A real model's layer: ``weights`` (H, N, N) of layer ``layer`` (from 0), heads
    numbered from 0 as on its page; ``view``: what makes the chart (prompt, layer)."""
    ask = Ask(
        _("Which head of layer {layer} looks at the previous token?").format(layer=layer),
        "previous_head",
        lambda: predict.previous_head(weights, where=_(" of layer {layer}").format(layer=layer)),
    )
    ask_room(page, view, [ask])


def learned(view: object, weights: np.ndarray, step: int, ids: np.ndarray | None = None) -> None:
    """The Learned attention page: ``weights`` (L·H, T, T) every head of every layer at
    training step ``step``, numbered across the layers as on that page; ``view``: what
    makes the chart (task, run, step); ``ids`` (T,): the tokens, for "which head is an
    induction head?" (the induction task)."""
    where = _(" at training step {step}").format(step=step)
    asks = [
        Ask(
            _("Which head looks at the previous token (step {step})?").format(step=step),
            "previous_head",
            lambda: predict.previous_head(weights, where=where),
        )
    ]
    if ids is not None:
        asks.append(
            Ask(
                _("Which head is an induction head (step {step})?").format(step=step),
                "induction_head",
                lambda: predict.induction_head(weights, ids, where=where),
            )
        )
    ask_room("learned", view, asks)
