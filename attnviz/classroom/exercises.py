"""Exercises that check themselves: predict a number of attention, then check it.

Pure NumPy (no streamlit, no plotly), built on :mod:`attnviz.engine`. A seed gives the
same set to a whole class::

    from attnviz import exercises
    items = exercises.generate(seed=0, count=8)   # deterministic for a seed
    e = items[0]
    e.kind, e.prompt, e.answer, e.check(" 2"), e.explanation, e.hint

Every matrix shown is made of small integers or one-decimal values, so that the answer
computed on paper from the numbers shown agrees with the exact answer within the
question's stated tolerance. ``e.data`` holds the numbers (arrays and parameters) so
that the answer can be recomputed independently.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from attnviz import engine, i18n, toys
from attnviz.classroom import exercises_cross
from attnviz.classroom.exercise_kit import (  # noqa: F401 - public names of attnviz.classroom.exercises
    CHOICES,
    SHAPE_KINDS,
    TITLES,
    Exercise,
    _block,
    _dot_terms,
    _ints,
    _vec,
    bmatrix,
    choice_label,
    parse_number,
    parse_shape,
    tex,
)
from attnviz.engine import masks
from attnviz.i18n import N_, _
from attnviz.teaching import latex

#: The kinds, in the order :func:`generate` cycles through them (self-attention's, then
#: cross-attention's: :mod:`attnviz.classroom.exercises_cross`).
KINDS = ("argmax", "weight", "score", "mask", "shape", "scaling", "heads", *exercises_cross.KINDS)
COUNT_MAX = 50
SEED_MAX = 2**32 - 1
#: The Learned attention page's kinds (:func:`learned`; :func:`generate` does not make them).
LEARNED_KINDS = ("circuit", "timing")
#: The induction score at which :func:`learned`'s "timing" says a head has formed.
FORMED = 0.5


# --------------------------------------------------------------------------- kinds


def _argmax(rng: np.random.Generator) -> Exercise:
    while True:
        n, d = int(rng.integers(3, 6)), int(rng.integers(2, 4))
        q, k = _ints(rng, (n, d)), _ints(rng, (n, d))
        i = int(rng.integers(0, n))
        w = engine.softmax(engine.attention_scores(q, k, scale=True))
        raw = q[i] @ k.T
        top = np.sort(raw)[::-1]
        if top[0] > top[1]:  # no tie: one right answer
            break
    j = int(np.argmax(w[i]))
    prompt = (
        _("Queries and keys of {n} tokens (d_k = {d}):").format(n=n, d=d)
        + _block(bmatrix(q, name="Q"), bmatrix(k, name="K"))
        + _(
            "Which key does **query {i}** (row {i} of Q, counting from 0) attend to most? "
            "Answer with the key's row number j (counting from 0)."
        ).format(i=i)
    )
    softmax_of = f"$\\mathrm{{softmax}}(q_{i} \\cdot k_j / \\sqrt{{{d}}})$"
    expl = (
        _(
            "The weights of row {i} are {softmax_of}; the softmax and the positive "
            "scale keep the order, so the largest dot product wins:"
        ).format(i=i, softmax_of=softmax_of)
        + "\n\n"
        + "\n".join(
            f"- $q_{i} \\cdot k_{jj} = {_dot_terms(q[i], k[jj], 0)} = {int(raw[jj])}$"
            for jj in range(n)
        )
        + "\n\n"
        + _("The largest is key **{j}** (weight {w}).").format(j=j, w=i18n.fmt(w[i, j], ".2f"))
    )
    hint = _(
        "Compute the dot product of row {i} of Q with every row of K; the softmax does not "
        "change which one is largest."
    ).format(i=i)
    return Exercise("argmax", prompt, j, expl, hint, data={"Q": q, "K": k, "i": i})


def _weight(rng: np.random.Generator) -> Exercise:
    n, d = int(rng.integers(3, 5)), 4
    q, k = _ints(rng, (n, d), -1, 1), _ints(rng, (n, d), -1, 1)
    i, j = int(rng.integers(0, n)), int(rng.integers(0, n))
    s = engine.attention_scores(q, k, scale=True)
    w = engine.softmax(s)
    a = float(w[i, j])
    prompt = (
        _("Queries and keys of {n} tokens (d_k = {d}, scores scaled by 1/√d_k = 1/2):").format(
            n=n, d=d
        )
        + _block(bmatrix(q, name="Q"), bmatrix(k, name="K"))
        + _(
            "What is the attention weight {a_ij} (query {i}, key {j}, counting from 0) "
            "after the softmax? Two decimals (±0.01)."
        ).format(a_ij=f"$a_{{{i},{j}}}$", i=i, j=j)
    )
    exps = " + ".join(f"e^{{{tex(v, 1)}}}" for v in s[i])
    expl = (
        _("Scores of row {i}: {s_ij} = ").format(i=i, s_ij=f"$s_{{{i},j}} = q_{i} \\cdot k_j / 2$")
        + _vec(s[i], 1)
        # $$ on lines of their own: a display (Streamlit's Markdown reads $$...$$ on one
        # line as inline math, its fraction in text size)
        + f".\n\n$$\na_{{{i},{j}}} = \\frac{{e^{{{tex(s[i, j], 1)}}}}}{{{exps}}} = "
        f"{tex(a, 4)} \\approx {tex(a, 2)}\n$$\n\n"
        + _("Whole row: {row} (it sums to 1).").format(row=_vec(w[i], 2))
    )
    hint = _(
        "First the scores of row {i}: {q_dot_k} for every j, divided by √4 = 2. "
        "Then exp of each, and {a_ij}."
    ).format(
        i=i,
        q_dot_k=f"$q_{i} \\cdot k_j$",
        a_ij=f"$a_{{{i},{j}}} = e^{{s_{{{i},{j}}}}} / \\sum_j e^{{s_{{{i},j}}}}$",
    )
    return Exercise(
        "weight", prompt, a, expl, hint, tolerance=0.01, data={"Q": q, "K": k, "i": i, "j": j}
    )


def _score(rng: np.random.Generator) -> Exercise:
    d = int(rng.integers(2, 5))
    q = np.round(rng.uniform(-1, 1, size=d), 1)
    k = np.round(rng.uniform(-1, 1, size=d), 1)
    s = float(engine.attention_scores(q[None, :], k[None, :], scale=True)[0, 0])
    dot = float(q @ k)
    prompt = (
        _("A query and a key with d_k = {d}:").format(d=d)
        + _block(bmatrix(q, 1, name="q_i"), bmatrix(k, 1, name="k_j"))
        + _("What is the scaled score {score}? Two decimals (±0.01).").format(
            score=r"$q_i \cdot k_j / \sqrt{d_k}$"
        )
    )
    expl = f"$q_i \\cdot k_j = {_dot_terms(q, k, 1)} = {tex(dot, 2)}$\n\n" + _(
        "{root}, and {quotient}."
    ).format(
        root=f"$\\sqrt{{{d}}} = {tex(math.sqrt(d), 4)}$",
        quotient=f"${tex(dot, 2)} / {tex(math.sqrt(d), 4)} = {tex(s, 4)} \\approx {tex(s, 2)}$",
    )
    hint = _("Multiply the vectors element by element, add up, then divide by √{d}.").format(d=d)
    return Exercise("score", prompt, s, expl, hint, tolerance=0.01, data={"q": q, "k": k})


def _mask(rng: np.random.Generator) -> Exercise:
    n = int(rng.integers(4, 7))
    kinds = [k for k in masks.KINDS.values() if k.exercise is not None]
    kind = kinds[int(rng.integers(0, len(kinds)))]
    # each parameter from 1 to n - 2 (a padding of k = 1 .. n - 2 tokens)
    params = {p.key: int(rng.integers(max(p.lo, 1), n - 1)) for p in kind.params}
    mask = masks.build(kind.name, n, **params)
    i = int(rng.integers(0, n))
    x = rng.normal(size=(n, 4))
    s = engine.attention_scores(x, x, scale=True)
    w = engine.softmax(engine.apply_mask(s, mask))
    count = int(np.count_nonzero(w[i] > 0))
    rule, why = kind.exercise(n, i, count, _=_, **params)  # in the language's words
    prompt = _(
        "Self-attention over N = {n} tokens with {rule}. How many **nonzero weights** does "
        "row {i} (query {i}, counting from 0) have after the softmax?"
    ).format(n=n, rule=rule, i=i)
    expl = why + " " + _("The softmax gives every kept key a positive weight.")
    hint = _("Masked scores become −∞ before the softmax; e^(−∞) = 0, every other weight is > 0.")
    data = {"n": n, "mask_kind": kind.name, "pad": params.get("pad", 0), **params, "i": i}
    return Exercise("mask", prompt, count, expl, hint, data=data)


#: The shape question's three arrays, their words and hints (translated where used).
_SHAPE_QUESTION = {
    "Q_h": N_("the queries of one head, **Q_h**"),
    "weights": N_("the attention **weights** of all heads together (heads first)"),
    "concat": N_("the **concatenation** of the heads' outputs (before W_O)"),
}
_SHAPE_HINT = {
    "Q_h": N_("Q is N × D; the heads split its columns evenly."),
    "weights": N_("One weight for every (query, key) pair, in every head."),
    "concat": N_("The heads' outputs are put side by side, column blocks of D / heads."),
}
_SHAPE_EXPLANATION = {
    "Q_h": N_(
        "Q = X W_Q is N × D = {n} × {d}; each head takes D / heads = {d}/{heads} = "
        "{dh} columns: Q_h is **{n} × {dh}**."
    ),
    "weights": N_(
        "Each head has an N × N = {n} × {n} matrix of weights (one row per query, "
        "one column per key); {heads} heads: **{heads} × {n} × {n}**."
    ),
    "concat": N_(
        "Each head's output is N × D/heads = {n} × {dh}; side by side, {heads} of "
        "them give **{n} × {d}** (N × D)."
    ),
}


def _shape(rng: np.random.Generator) -> Exercise:
    n = int(rng.integers(2, 7))
    heads = int(rng.choice([2, 3, 4]))
    d = heads * int(rng.integers(1, 3))
    what = ("Q_h", "weights", "concat")[int(rng.integers(0, 3))]
    x = rng.normal(size=(n, d))
    res = engine.multi_head_attention(x, engine.AttentionParams.random(d, seed=0), num_heads=heads)
    shape = {
        "Q_h": res.queries.shape[1:],
        "weights": res.weights.shape,
        "concat": res.concat.shape,
    }[what]
    prompt = _(
        "Multi-head self-attention with N = {n} tokens, model width D = {d} and "
        "{heads} heads (W_Q, W_K, W_V are D × D). What is the shape of {question}? "
        "Write it like (4, 2)."
    ).format(n=n, d=d, heads=heads, question=_(_SHAPE_QUESTION[what]))
    dh = d // heads
    expl = _(_SHAPE_EXPLANATION[what]).format(n=n, d=d, heads=heads, dh=dh)
    hint = _(_SHAPE_HINT[what])
    answer = "(" + ", ".join(map(str, shape)) + ")"
    return Exercise(
        "shape", prompt, answer, expl, hint, data={"n": n, "d": d, "heads": heads, "what": what}
    )


def _scaling(rng: np.random.Generator) -> Exercise:
    while True:
        n = int(rng.integers(3, 6))
        s = np.round(rng.uniform(-2, 2, size=n), 1)
        if np.ptp(s) >= 0.5:
            break
    c1 = float(rng.choice([0.5, 1.0]))
    grows = bool(rng.integers(0, 2))
    c2 = c1 * 2 if grows else c1 / 2
    h1 = float(engine.row_entropy(engine.softmax(c1 * s)))
    h2 = float(engine.row_entropy(engine.softmax(c2 * s)))
    answer = "rise" if h2 > h1 else "fall"
    change = (
        _(
            "The weights are softmax(c · s). The scale factor c goes from {c1} to {c2} "
            "(it grows). Does the **entropy** of the row's weights **rise** or **fall**?"
        )
        if grows
        else _(
            "The weights are softmax(c · s). The scale factor c goes from {c1} to {c2} "
            "(it shrinks). Does the **entropy** of the row's weights **rise** or **fall**?"
        )
    )
    prompt = (
        _("The scores of one row, before the scale factor:")
        + _block(bmatrix(s, 1, name="s"))
        + change.format(c1=i18n.fmt(c1, "g"), c2=i18n.fmt(c2, "g"))
    )
    w1, w2 = engine.softmax(c1 * s), engine.softmax(c2 * s)
    row = _("- c = {c}: weights {weights}, entropy {h} bits")
    expl = (
        _(
            "A larger c stretches the gaps between the scores, so the softmax gets peakier (lower "
            "entropy); a smaller c flattens it towards uniform (higher entropy)."
        )
        + "\n\n"
        + row.format(c=i18n.fmt(c1, "g"), weights=_vec(w1, 2), h=i18n.fmt(h1, ".3f"))
        + "\n"
        + row.format(c=i18n.fmt(c2, "g"), weights=_vec(w2, 2), h=i18n.fmt(h2, ".3f"))
        + "\n\n"
        + (_("The entropy **rises**.") if answer == "rise" else _("The entropy **falls**."))
    )
    hint = _("Think of c → ∞ (one-hot weights) and c → 0 (uniform weights).")
    return Exercise("scaling", prompt, answer, expl, hint, data={"s": s, "c1": c1, "c2": c2})


def _heads(rng: np.random.Generator) -> Exercise:
    while True:
        n, h = int(rng.integers(3, 6)), int(rng.integers(2, 4))
        s = rng.normal(size=(h, n, n))
        prev = int(rng.integers(0, h))
        s[prev] += 3.0 * np.eye(n, k=-1)
        w = np.round(engine.softmax(s), 1)
        w[:, :, -1] = np.round(1.0 - w[:, :, :-1].sum(axis=-1), 1)  # rows sum to 1 as shown
        if (w < 0).any():
            continue
        mean_prev = np.array([np.mean(np.diagonal(w[hh], offset=-1)) for hh in range(h)])
        order = np.sort(mean_prev)[::-1]
        if order[0] - order[1] >= 0.1:
            break
    best = int(np.argmax(mean_prev))
    prompt = (
        _(
            "The attention weights of {h} heads over {n} tokens (row i = query i, column j = "
            "key j):"
        ).format(h=h, n=n)
        + _block(*(bmatrix(w[hh], 1, name=f"A_{hh}") for hh in range(h)))
        + _(
            "Which head attends most to the **previous token** (key i − 1 from query i, "
            "averaged over the rows that have one)? Answer with the head's number (counting "
            "from 0)."
        )
    )
    lines = []
    for hh in range(h):
        diag = np.diagonal(w[hh], offset=-1)
        terms = i18n.number(" + ".join(latex.number(v, 1) for v in diag))
        mean = i18n.fmt(mean_prev[hh], ".2f")
        lines.append(
            "- "
            + _("head {h}: ({terms}) / {count} = {mean}").format(
                h=hh, terms=terms, count=n - 1, mean=mean
            )
        )
    expl = (
        _("The previous-token weights are the diagonal just below the main one ({a}):").format(
            a="$a_{i,i-1}$"
        )
        + "\n\n"
        + "\n".join(lines)
        + "\n\n"
        + _("Head **{best}** has the largest mean.").format(best=best)
    )
    hint = _("Read the diagonal just below the main diagonal of each matrix and average it.")
    return Exercise("heads", prompt, best, expl, hint, data={"weights": w})


_MAKERS = {
    "argmax": _argmax,
    "weight": _weight,
    "score": _score,
    "mask": _mask,
    "shape": _shape,
    "scaling": _scaling,
    "heads": _heads,
    **exercises_cross.MAKERS,
}


def generate(seed: int = 0, count: int = 8) -> list[Exercise]:
    """``count`` exercises for ``seed``: the same seed gives the same set. The kinds cycle
    through :data:`KINDS` (all of them in the first ``len(KINDS)``)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not 0 <= int(seed) <= SEED_MAX:
        raise ValueError(f"seed must be from 0 to {SEED_MAX}, got {seed}")
    if isinstance(count, bool) or not isinstance(count, int | np.integer):
        raise ValueError(f"count must be an integer, got {count!r}")
    if not 1 <= int(count) <= COUNT_MAX:
        raise ValueError(f"count must be from 1 to {COUNT_MAX}, got {count}")
    return [
        _MAKERS[KINDS[i % len(KINDS)]](np.random.default_rng([int(seed), i]))
        for i in range(int(count))
    ]


def generated(seed: int, count: int, lang: str | None = None) -> tuple[Exercise, ...]:
    """:func:`generate`'s set, made once per process and language and kept (a live class's
    questions, read by every student's page and every check): its texts are in ``lang``
    (default: the shown language); its answers are the same in every language."""
    return _generated(seed, count, lang or i18n.current())


@functools.lru_cache(maxsize=64)
def _generated(seed: int, count: int, lang: str) -> tuple[Exercise, ...]:
    with i18n.use(lang):
        return tuple(generate(seed=seed, count=count))


def lesson_item(kind: str, seed: int | None) -> str:
    """A lesson's typed question as a live class stores it: ``"weight@3"`` (its kind, and
    the seed of the set it is drawn from, as the lesson's tour draws it)."""
    if kind not in KINDS:
        raise ValueError(f"a class's lesson question is one of {KINDS}, got {kind!r}")
    return f"{kind}@{int(seed or 0)}"


def of_class(
    seed: int, count: int, items: tuple[str, ...] = (), lang: str | None = None
) -> tuple[Exercise, ...]:
    """A live class's questions in ``lang`` (default: the shown language): a lesson's
    ``items`` (:func:`lesson_item`) first, each the exercise of its kind in the set of its
    seed (the one the lesson's tour shows), then :func:`generated`'s ``count - len(items)``
    questions of ``seed``. Without items, :func:`generated`'s set."""
    return _of_class(seed, count, tuple(items), lang or i18n.current())


@functools.lru_cache(maxsize=64)
def _of_class(seed: int, count: int, items: tuple[str, ...], lang: str) -> tuple[Exercise, ...]:
    out = []
    for item in items:
        kind, _at, of = item.partition("@")
        if kind not in KINDS or not of.isdigit():
            raise ValueError(f"a class's lesson question is kind@seed (weight@3), got {item!r}")
        out.append(_generated(int(of), len(KINDS), lang)[KINDS.index(kind)])
    rest = count - len(items)
    return tuple(out) + (_generated(seed, rest, lang) if rest > 0 else ())


def grade(seed: int, count: int, item: int, answer: str, items: tuple[str, ...] = ()) -> bool:
    """Whether ``answer`` is right for question ``item`` of the set ``(seed, count)`` (a
    lesson's class: ``items`` first, :func:`of_class`): the live class's grading
    (:class:`attnviz.classroom.ClassStore` is given it). The same in every language: the
    answers and their checks do not depend on it."""
    return of_class(seed, count, items, i18n.SOURCE)[item].check(answer)


def answer_key_rows(items: list[Exercise]) -> list[dict[str, str]]:
    """One row per exercise: number, kind, answer (as written), tolerance (machine-readable:
    the CSV's columns and values stay English, numbers with a point)."""
    return [
        {
            "number": str(i + 1),
            "kind": e.kind,
            "answer": e.answer_text,
            "tolerance": f"±{e.tolerance:g}" if e.tolerance else "exact",
        }
        for i, e in enumerate(items)
    ]


def answer_key_markdown(seed: int, items: list[Exercise]) -> str:
    """The teacher's answer key: every question, its answer and the explanation."""
    out = ["# " + _("attnviz exercises, seed {seed}: answer key").format(seed=seed), ""]
    for i, e in enumerate(items):
        tol = f" (±{i18n.fmt(e.tolerance, 'g')})" if e.tolerance else ""
        out += [
            f"## {i + 1}. {e.title}",
            "",
            e.prompt,
            "",
            "**" + _("Answer: {answer}").format(answer=e.answer_shown) + f"**{tol}",
            "",
            e.explanation,
            "",
        ]
    return "\n".join(out)


def answer_key_csv(items: list[Exercise]) -> str:
    """The answer key as CSV (number, kind, answer, tolerance)."""
    rows = answer_key_rows(items)
    lines = ["number,kind,answer,tolerance"]
    for r in rows:
        ans = r["answer"]
        if "," in ans:
            ans = '"' + ans + '"'
        lines.append(f"{r['number']},{r['kind']},{ans},{r['tolerance']}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- learned


def learned(jobs: toys.JobScores) -> list[Exercise]:
    """The Learned attention page's two questions about an induction run's job scores
    (``toys.job_scores("induction", run)``): which layer holds the induction heads
    ("circuit": always layer 1, the explanation gives the run's scores), and the step at
    which the first of them reaches an induction score of :data:`FORMED` ("timing", read
    off the chart: within a tolerance of :func:`_timing_tolerance` steps). Their texts are
    in the shown language (a cache of them is keyed by it)."""
    if not isinstance(jobs, toys.JobScores) or jobs.jobs != ("previous", "induction"):
        raise ValueError("expected the JobScores of an induction run (jobs previous, induction)")
    formed = jobs.first_step_above(FORMED)[1]  # (H,) -1: never
    formed = formed[formed >= 0]
    items = [_circuit(jobs)]
    if formed.size:
        items.append(_timing(jobs, int(formed.min())))
    return items


def _circuit(jobs: toys.JobScores) -> Exercise:
    """Which layer holds the induction head (always layer 1)."""
    end = jobs.scores[-1]  # (L, H)
    h = end.shape[1]
    best = int(np.argmax(end[1]))
    return Exercise(
        kind="circuit",
        prompt=_(
            "The model has two layers of two heads, and nothing else: no MLP. At step 0 no "
            "head has a job yet. **Which layer will hold the induction head**, the head "
            "whose query, on the second copy of a token, looks at the token right *after* "
            "the first copy? Predict, then move the step slider."
        ),
        answer="layer 1",
        explanation=_(
            "**Layer 1.** A query finds a key by what the key holds. To look at the token "
            'after the earlier copy of *me*, the key must hold "the token before me", and '
            "no token's own embedding holds that: layer 0's previous-token head writes it "
            "into the residual stream, and only layer 1 reads that stream. In this run, "
            "head {head} (layer 1) ends with an induction score of {score}; "
            "the layer-0 heads' previous-token scores end at {previous} at best."
        ).format(
            head=h + best,
            score=i18n.fmt(end[1, best], ".2f"),
            previous=i18n.fmt(end[0].max(), ".2f"),
        ),
        hint=_(
            "What must the key of the token after the first copy hold, so that the query "
            "can find it? Which layer can already read that?"
        ),
    )


def _timing(jobs: toys.JobScores, first: int) -> Exercise:
    """At which step the first induction head reaches :data:`FORMED` (``first``)."""
    tol = _timing_tolerance(jobs.steps, first)
    formed = i18n.number(str(FORMED))
    return Exercise(
        kind="timing",
        prompt=_(
            "On the job-score chart, **at which training step does the first "
            "induction head reach an induction score of {formed}**? (Within "
            "{tol} steps.) Compare it with the loss curve."
        ).format(formed=formed, tol=tol),
        answer=first,
        tolerance=float(tol),
        explanation=_(
            "Step **{first}**: the first checkpoint at which a layer-1 head scores "
            "{formed} or more. It is inside the sudden drop of the loss (the phase "
            "change): the loss falls when the induction head forms, because only it "
            "predicts the second copy."
        ).format(first=first, formed=formed),
        hint=_(
            "Follow a layer-1 line (induction score) up to {formed} and read the step "
            "below it; the step slider snaps to the checkpoints."
        ).format(formed=formed),
        data={"steps": jobs.steps, "scores": jobs.scores},
    )


def _timing_tolerance(steps: np.ndarray, step: int) -> int:
    """How far a step read off the chart may be: 25 steps, or the gap between the
    checkpoints around ``step`` if wider."""
    i = int(np.flatnonzero(steps == step)[0])
    gap = max(int(steps[i] - steps[max(i - 1, 0)]), int(steps[min(i + 1, len(steps) - 1)] - step))
    return max(25, gap)
