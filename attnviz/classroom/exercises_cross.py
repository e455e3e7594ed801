"""Cross-attention's exercises: a target of T tokens asks, a source of S tokens answers.

Two kinds, made by :func:`attnviz.classroom.exercises.generate` after self-attention's seven (and
graded by :func:`attnviz.classroom.exercises.grade` like them):

- ``cross_shape``: the shape of the weights of every head (H, T, S), of one head's keys
  (S, D/H) or of the output (T, D), given N_src, N_tgt, D and the heads;
- ``cross_argmax``: given the target's queries Q (T × d_k) and the source's keys K (S ×
  d_k) in small integers, which source token target query i attends to most.

Pure NumPy on :mod:`attnviz.engine`.
"""

from __future__ import annotations

import numpy as np

from attnviz import engine, i18n
from attnviz.classroom.exercise_kit import Exercise, _block, _dot_terms, _ints, bmatrix
from attnviz.i18n import N_, _

#: The kinds, in the order :func:`attnviz.classroom.exercises.generate` makes them.
KINDS = ("cross_shape", "cross_argmax")


#: The shape question's three arrays: their words, explanations and hints (translated where
#: used; the explanations' placeholders are filled after).
_QUESTION = {
    "weights": N_("the attention **weights** of all heads together (heads first)"),
    "K_h": N_("the **keys of one head**, K_h"),
    "output": N_("the **output** of the layer (after W_O)"),
}
_EXPLANATION = {
    "weights": N_(
        "Each head has one row per target token (its queries) and one column per "
        "source token (the keys): N_tgt × N_src = {n_tgt} × {n_src}; {heads} heads: "
        "**{heads} × {n_tgt} × {n_src}**. Not square: the two sequences differ."
    ),
    "K_h": N_(
        "K = X_src W_K comes from the **source**: N_src × D = {n_src} × {d}; one head "
        "takes D / heads = {d}/{heads} = {dh} columns: K_h is **{n_src} × {dh}**."
    ),
    "output": N_(
        "One output row per **target** token (the queries ask, the output answers "
        "each of them): the heads' outputs side by side are N_tgt × D, and W_O keeps D: "
        "**{n_tgt} × {d}**."
    ),
}
_HINT = {
    "weights": N_("A row per query, a column per key: which sequence gives Q, which gives K?"),
    "K_h": N_("K is made from the source; the heads split its columns evenly."),
    "output": N_("One output per query: which sequence gives the queries?"),
}


def cross_shape(rng: np.random.Generator) -> Exercise:
    """The shape of a cross-attention array, given the two lengths, D and the heads."""
    while True:
        n_src, n_tgt = int(rng.integers(3, 9)), int(rng.integers(2, 8))
        if n_src != n_tgt:  # two lengths: the question is which goes where
            break
    heads = int(rng.choice([2, 3, 4]))
    d = heads * int(rng.integers(1, 4))
    what = ("weights", "K_h", "output")[int(rng.integers(0, 3))]
    dh = d // heads
    x_t, x_s = rng.normal(size=(n_tgt, d)), rng.normal(size=(n_src, d))
    res = engine.cross_attention(
        x_t, x_s, engine.AttentionParams.random(d, seed=0), num_heads=heads
    )
    shape = {"weights": res.weights.shape, "K_h": res.keys.shape[1:], "output": res.output.shape}
    prompt = _(
        "A decoder's cross-attention: its target of **N_tgt = {n_tgt}** tokens attends to an "
        "encoder's source of **N_src = {n_src}** tokens; model width D = {d}, {heads} heads "
        "(W_Q, W_K, W_V, W_O are D × D). What is the shape of {question}? Write it like "
        "(4, 2)."
    ).format(n_tgt=n_tgt, n_src=n_src, d=d, heads=heads, question=_(_QUESTION[what]))
    expl = _(_EXPLANATION[what]).format(n_tgt=n_tgt, n_src=n_src, d=d, heads=heads, dh=dh)
    hint = _(_HINT[what])
    answer = "(" + ", ".join(map(str, shape[what])) + ")"
    data = {"n_src": n_src, "n_tgt": n_tgt, "d": d, "heads": heads, "what": what}
    return Exercise("cross_shape", prompt, answer, expl, hint, data=data)


def cross_argmax(rng: np.random.Generator) -> Exercise:
    """Which source token target query i attends to most, from small Q (target) and K
    (source)."""
    while True:
        t, s, d = int(rng.integers(2, 5)), int(rng.integers(3, 6)), int(rng.integers(2, 4))
        q, k = _ints(rng, (t, d)), _ints(rng, (s, d))
        i = int(rng.integers(0, t))
        raw = q[i] @ k.T  # (S,)
        top = np.sort(raw)[::-1]
        if t != s and top[0] > top[1]:  # two lengths, one right answer
            break
    w = engine.softmax(engine.attention_scores(q, k, scale=True))  # (T, S)
    j = int(np.argmax(w[i]))
    prompt = (
        _(
            "Cross-attention: the target's queries Q ({t} target tokens) and the source's keys "
            "K ({s} source tokens), d_k = {d}:"
        ).format(t=t, s=s, d=d)
        + _block(bmatrix(q, name="Q"), bmatrix(k, name="K"))
        + _(
            "Which **source token** does **target query {i}** (row {i} of Q, counting from 0) "
            "attend to most? Answer with the source token's row j of K (counting from 0)."
        ).format(i=i)
    )
    softmax_of = f"$\\mathrm{{softmax}}(q_{i} \\cdot k_j / \\sqrt{{{d}}})$"
    expl = (
        _(
            "Row {i} of the weights is {softmax_of} over the {s} source tokens; the softmax "
            "keeps the order, so the largest dot product wins:"
        ).format(i=i, softmax_of=softmax_of, s=s)
        + "\n\n"
        + "\n".join(
            f"- $q_{i} \\cdot k_{jj} = {_dot_terms(q[i], k[jj], 0)} = {int(raw[jj])}$"
            for jj in range(s)
        )
        + "\n\n"
        + _("The largest is source token **{j}** (weight {w}).").format(
            j=j, w=i18n.fmt(w[i, j], ".2f")
        )
    )
    hint = _(
        "Dot row {i} of Q with every row of K (the source has {s} tokens, so {s} dot "
        "products); the softmax does not change which is largest."
    ).format(i=i, s=s)
    return Exercise("cross_argmax", prompt, j, expl, hint, data={"Q": q, "K": k, "i": i})


#: kind -> its maker (a function of a seeded generator).
MAKERS = {"cross_shape": cross_shape, "cross_argmax": cross_argmax}
