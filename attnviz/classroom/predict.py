"""Predict, then reveal: questions about the view on screen, answered from the engine's
result (pure NumPy, no Streamlit). The live class stores them (:meth:`ClassStore.ask`).

- :func:`top_key`: "Which key does query i attend to most (head h)?": the argmax of row i
  of head h's weights; choices are the keys.
- :func:`top_source`: cross-attention's "Which source token does target token i attend to
  most (head h)?": :func:`top_key` over the source's tokens, said in the target's and the
  source's words.
- :func:`previous_head`: "Which head looks at the previous token?": the head whose mean
  weight on key i-1 (over the queries i >= 1) is largest; choices are the heads (numbered
  from 0, or from 1 as the real-model pages number them).
- :func:`induction_head`: "Which head is an induction head?": the head of largest
  induction score (the weight on the token after the earlier copy of the query's token);
  choices are the heads.
- :func:`sharper_row`: "Which is sharper: row i not scaled, or scaled by 1/√d_k?": the
  row of lower entropy; choices are the two charts.
- :func:`moved_row`: "After the shuffle, which row of attention(P·X) is the old output
  row i?": the row equal to it; choices are the rows.

:func:`top_key` with a ``mask`` offers only the keys the query may see (the masking page).

A question without a single answer (a tie, a fully masked row, one token or one head)
raises ``ValueError`` naming why: the room is not asked something the chart cannot settle.

Prompts, choices and those reasons are in the shown language (the teacher's, who asks);
``answer`` is an index into ``choices`` and ``kind``/``detail`` are identifiers, the same in
every language.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from attnviz import i18n
from attnviz.i18n import N_, _, ngettext
from attnviz.models import head_patterns
from attnviz.teaching.token_text import visible

#: Two weights closer than this are a tie: no single right answer.
TIE = 1e-6
LABEL_CHARS = 16


@dataclass(frozen=True)
class Question:
    """What :meth:`attnviz.classroom.ClassStore.ask` stores: ``answer`` indexes
    ``choices``; ``detail`` says what to outline (``query``/``key``/``head``)."""

    kind: str
    prompt: str
    choices: tuple[str, ...]
    answer: int
    detail: dict[str, int] = field(default_factory=dict)
    why: str = ""  #: the answer explained from the view's numbers (shown once answered)


def _listed(names: Sequence[str], values: Sequence[float]) -> str:
    """ "head 0: 0.12 · head 1: 0.87": each choice with its number, in the shown language."""
    return " · ".join(
        _("{name}: {value}").format(name=n, value=i18n.fmt(v, ".2f"))
        for n, v in zip(names, values, strict=True)
    )


def _weights(weights: ArrayLike) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 3 or w.shape[1] == 0 or w.shape[2] == 0:
        raise ValueError(f"weights must be (heads, N, M) with N, M >= 1, got shape {w.shape}")
    return w


def _single_top(values: np.ndarray, what: str) -> int:
    """The index of the largest value; ValueError if the top two are a tie."""
    order = np.argsort(-values, kind="stable")
    best = int(order[0])
    if values.size > 1 and values[best] - values[order[1]] < TIE:
        raise ValueError(
            _("{what}: no single answer ({a} and {b} tie)").format(
                what=what, a=i18n.fmt(values[best], ".4f"), b=i18n.fmt(values[order[1]], ".4f")
            )
        )
    return best


def _check_index(w: np.ndarray, head: int, query: int) -> None:
    h, n = w.shape[:2]
    if not (0 <= head < h and 0 <= query < n):
        raise ValueError(
            _("head must be 0..{h} and query 0..{n}, got {head}, {query}").format(
                h=h - 1, n=n - 1, head=head, query=query
            )
        )


def _key_name(j: int, labels: Sequence[str] | None, noun: str = N_("key {j}")) -> str:
    """A key as a choice: "key 3 (cat)"; ``noun``: another ``N_``-marked name of it."""
    said = f" ({visible(labels[j])[:LABEL_CHARS]})" if labels is not None else ""
    return _(noun).format(j=j) + said


def top_key(
    weights: ArrayLike,
    head: int,
    query: int,
    labels: Sequence[str] | None = None,
    mask: ArrayLike | None = None,
    where: str = "",
    noun: str = N_("key {j}"),
) -> Question:
    """Which key query ``query`` attends to most in head ``head`` (weights (H, N, M)).
    ``mask`` (N, M), True = may attend: only the query's visible keys are choices (a query
    that sees one key has nothing to predict); ``where`` ends the prompt (", causal mask");
    ``noun``: how a choice names key ``{j}`` (``N_``-marked)."""
    w = _weights(weights)  # (H, N, M)
    _check_index(w, head, query)
    row = w[head, query]  # (M,)
    if not row.any():
        raise ValueError(
            _("query {query} attends to no key (every key is masked)").format(query=query)
        )
    keys = np.arange(w.shape[2])  # (M,) the keys offered
    if mask is not None:
        visible = np.asarray(mask, dtype=bool)
        if visible.shape != w.shape[1:]:
            raise ValueError(f"mask must be (N, M) = {w.shape[1:]}, got shape {visible.shape}")
        keys = keys[visible[query]]
        if keys.size < 2:
            raise ValueError(
                ngettext(
                    "query {query} may see {n} key under this mask: nothing to predict",
                    "query {query} may see {n} keys under this mask: nothing to predict",
                    int(keys.size),
                ).format(query=query, n=int(keys.size))
            )
    what = _("query {query} in head {head}").format(query=query, head=head)
    key = int(keys[_single_top(row[keys], what)])
    why = ""  # one key (M = 1): no other weight to compare it with
    if keys.size > 1:
        second = float(np.sort(row[keys])[-2])
        why = _(
            "In head {head}, row {query} of the weights is largest at key {key}: {w} (the next "
            "largest is {second}). The key whose score q·k is largest gets the largest weight."
        ).format(
            head=head, query=query, key=key, w=i18n.fmt(row[key], ".2f"),
            second=i18n.fmt(second, ".2f"),
        )  # fmt: skip
    return Question(
        "top_key",
        _("Which key does query {query} attend to most (head {head}{where})?").format(
            query=query, head=head, where=where
        ),
        tuple(_key_name(int(j), labels, noun) for j in keys),
        int(np.flatnonzero(keys == key)[0]),
        {"query": query, "head": head, "key": key},
        why,
    )


def top_source(
    weights: ArrayLike,
    head: int,
    query: int,
    target_labels: Sequence[str] | None,
    source_labels: Sequence[str] | None,
    mask: ArrayLike | None = None,
) -> Question:
    """Cross-attention's :func:`top_key`: ``weights`` (H, T target tokens, S source tokens);
    the choices are the source's tokens (those ``mask`` (T, S) lets query ``query`` see),
    the prompt names the target token that asks."""
    q = top_key(weights, head, query, source_labels, mask=mask, noun=N_("source token {j}"))
    said = "" if not target_labels else f" ({visible(target_labels[query])[:LABEL_CHARS]})"
    prompt = _(
        "Which source token does target token {query}{said} attend to most (head {head})?"
    ).format(query=query, said=said, head=head)
    return Question(q.kind, prompt, q.choices, q.answer, q.detail, q.why)


def previous_scores(weights: ArrayLike) -> np.ndarray:
    """(H,) each head's mean weight of query i on key i-1, over i = 1..N-1."""
    w = _weights(weights)  # (H, N, M)
    n = min(w.shape[1], w.shape[2])
    if n < 2:
        raise ValueError(_("a previous token needs N >= 2 tokens, got {n}").format(n=n))
    i = np.arange(1, n)
    return w[:, i, i - 1].mean(axis=1)  # (H,)


def previous_head(weights: ArrayLike, where: str = "") -> Question:
    """Which head looks at the previous token most (mean weight on key i-1), the heads
    numbered from 0 as on every page; ``where`` ends the prompt (" in layer 3")."""
    w = _weights(weights)
    if w.shape[0] < 2:
        raise ValueError(_("asking which head needs 2 heads or more, got {h}").format(h=w.shape[0]))
    scores = previous_scores(w)
    head = _single_top(scores, _("the heads' previous-token weights"))
    why = _(
        "Each head's mean weight on the previous token (query i on key i − 1): {scores}. "
        "Head {head} puts the most there."
    ).format(scores=_listed(_heads(w.shape[0]), scores), head=head)
    return Question(
        "previous_head",
        _("Which head{where} looks at the previous token most?").format(where=where),
        _heads(w.shape[0]),
        head,
        {"head": head},
        why,
    )


def induction_head(weights: ArrayLike, ids: ArrayLike, where: str = "") -> Question:
    """Which head is an induction head: the largest mean weight, over the queries whose
    token came before, on the key right after that earlier copy
    (:func:`attnviz.models.head_patterns.scores`' induction score; ``ids`` (N,) the tokens
    the weights (H, N, N) were computed on). ``detail``: the head, and when every such cell
    lies one offset below the diagonal (a sequence repeated once), ``back`` (that offset)
    and ``first`` (the first such query), which :func:`answer_cells` outlines."""
    w = _weights(weights)
    if w.shape[0] < 2:
        raise ValueError(_("asking which head needs 2 heads or more, got {h}").format(h=w.shape[0]))
    if w.shape[1] != w.shape[2]:
        raise ValueError(f"weights must be (heads, N, N), got shape {w.shape}")
    ids = np.asarray(ids).ravel()
    cells = head_patterns.cell_masks(ids)["induction"]  # (N, N) 0/1
    if not cells.any():
        raise ValueError(_("no token repeats: there is no earlier copy to look after"))
    score = head_patterns.scores(w[None], ids)["induction"][0]  # (H,)
    head = _single_top(score, _("the heads' induction scores"))
    detail = {"head": head}
    q, k = np.nonzero(cells)
    if np.unique(q - k).size == 1:
        detail.update(back=int(q[0] - k[0]), first=int(q.min()))
    why = _(
        "Each head's induction score (its mean weight, on a repeated token, on the token "
        "after the earlier copy): {scores}. Head {head} scores highest."
    ).format(scores=_listed(_heads(w.shape[0]), score), head=head)
    return Question(
        "induction_head",
        _(
            "Which head{where} is an induction head: on a repeated token, it looks at the "
            "token after the earlier copy?"
        ).format(where=where),
        _heads(w.shape[0]),
        head,
        detail,
        why,
    )


def entropy(row: np.ndarray) -> float:
    """Shannon entropy of a row of weights, in bits (0 log 0 = 0)."""
    p = row[row > 0]
    return float(-(p * np.log2(p)).sum())


def _heads(h: int) -> tuple[str, ...]:
    """The choices "head 0" .. "head h-1"."""
    return tuple(_("head {i}").format(i=i) for i in range(h))


#: The two charts of :func:`sharper_row`, in their order on the scaling page (``N_``-marked:
#: :func:`sharper_choices` is them in the shown language).
SHARPER_CHOICES = (N_("not scaled (× 1)"), N_("scaled by 1/√d_k"))


def sharper_choices() -> tuple[str, str]:
    """:data:`SHARPER_CHOICES` in the shown language."""
    return (_(SHARPER_CHOICES[0]), _(SHARPER_CHOICES[1]))


def sharper_row(
    unscaled: ArrayLike,
    scaled: ArrayLike,
    head: int,
    query: int,
    names: tuple[str, str] | None = None,
    prompt: str = "",
) -> Question:
    """Which of row ``query`` of head ``head``'s weights is sharper (lower entropy): not
    scaled (chart 0) or scaled (chart 1). Weights (H, N, M) each, of the same input.
    ``names`` (default :func:`sharper_choices`) and ``prompt``: another pair of charts (the
    Compare page's views A and B)."""
    a, b = _weights(unscaled), _weights(scaled)  # (H, N, M) each
    if a.shape != b.shape:
        raise ValueError(f"both weights must have one shape, got {a.shape} and {b.shape}")
    _check_index(a, head, query)
    if not a[head, query].any():
        raise ValueError(
            _("query {query} attends to no key (every key is masked)").format(query=query)
        )
    ent = np.array([entropy(a[head, query]), entropy(b[head, query])])  # (2,) bits
    chart = _single_top(-ent, _("row {query}'s entropies (bits)").format(query=query))
    choices = names if names is not None else sharper_choices()
    why = _(
        "The entropy of row {query}'s weights, in bits: {entropies}. The lower the entropy, "
        "the more the weight sits on few keys: the sharper row."
    ).format(query=query, entropies=_listed(choices, ent))
    return Question(
        "sharper_row",
        prompt
        or _("Which row {query} is sharper (head {head}): not scaled, or scaled by 1/√d_k?").format(
            query=query, head=head
        ),
        choices,
        chart,
        {"query": query, "head": head, "chart": chart},
        why,
    )


#: Two output rows closer than this (largest difference) are the same row moved.
SAME_ROW = 1e-9


def moved_row(out: ArrayLike, out_of_permuted: ArrayLike, row: int) -> Question:
    """After the shuffle, which row of attention(P·X) (``out_of_permuted`` (N, D)) equals
    row ``row`` of attention(X) (``out`` (N, D))? None does with positional encodings (the
    symmetry is broken), two do with two equal tokens: ValueError then."""
    a, b = np.asarray(out, dtype=np.float64), np.asarray(out_of_permuted, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 2:
        raise ValueError(f"outputs must be two (N, D) with N >= 2, got {a.shape} and {b.shape}")
    n = a.shape[0]
    if not 0 <= row < n:
        raise ValueError(f"row must be 0..{n - 1}, got {row}")
    scale = max(float(np.abs(a).max()), 1.0)
    gap = np.abs(b - a[row]).max(axis=1) / scale  # (N,) relative difference per row
    same = np.flatnonzero(gap < SAME_ROW)
    if same.size == 0:
        raise ValueError(
            _(
                "no row of attention(P·X) equals old row {row} (closest differs by "
                "{gap}): the attention is not equivariant here"
            ).format(row=row, gap=i18n.fmt(gap.min(), ".2g"))
        )
    if same.size > 1:
        raise ValueError(
            _("rows {rows} all equal old row {row}: no single answer").format(
                rows=same.tolist(), row=row
            )
        )
    new = int(same[0])
    return Question(
        "moved_row",
        _("After the shuffle, which row of attention(P·X) is the old output row {row}?").format(
            row=row
        ),
        tuple(_("row {i}").format(i=i) for i in range(n)),
        new,
        {"query": new, "old": row},
        _(
            "Self-attention treats its tokens as a set: shuffling the rows of X shuffles the "
            "output's rows the same way, so old row {row} is now row {new}."
        ).format(row=row, new=new),
    )


#: The kinds whose answer is a whole row of a chart (:func:`answer_row`).
ROW_KINDS = ("sharper_row", "moved_row")
KINDS = ("top_key", "previous_head", "induction_head", *ROW_KINDS)


def answer_cells(kind: str, detail: dict[str, int], n: int) -> list[tuple[int, int]]:
    """The (query, key) cells that show a revealed answer on head ``detail["head"]``'s
    weights: the top key's cell, or the previous-token diagonal (i, i-1)."""
    if kind == "top_key":
        return [(detail["query"], detail["key"])]
    if kind == "previous_head":
        return [(i, i - 1) for i in range(1, n)]
    if kind == "induction_head":  # one offset below the diagonal, from the second copy on
        if "back" not in detail:
            return []
        return [(i, i - detail["back"]) for i in range(detail["first"], n)]
    raise ValueError(
        f"a view question's cells are of 'top_key', 'previous_head' or 'induction_head', "
        f"got {kind!r}"
    )


def answer_row(kind: str, detail: dict[str, int]) -> int:
    """The row that shows a revealed row answer (:data:`ROW_KINDS`): row ``query`` of the
    chart ``detail["chart"]`` (sharper_row) or of the shuffled outputs (moved_row)."""
    if kind not in ROW_KINDS:
        raise ValueError(f"a row answer's kind is one of {ROW_KINDS}, got {kind!r}")
    return detail["query"]
