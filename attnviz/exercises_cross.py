"""Cross-attention's exercises: a target of T tokens asks, a source of S tokens answers.

Two kinds, made by :func:`attnviz.exercises.generate` after self-attention's seven (and
graded by :func:`attnviz.exercises.grade` like them):

- ``cross_shape``: the shape of the weights of every head (H, T, S), of one head's keys
  (S, D/H) or of the output (T, D), given N_src, N_tgt, D and the heads;
- ``cross_argmax``: given the target's queries Q (T × d_k) and the source's keys K (S ×
  d_k) in small integers, which source token target query i attends to most.

Pure NumPy on :mod:`attnviz.engine`.
"""

from __future__ import annotations

import numpy as np

from attnviz import engine
from attnviz.exercise_kit import Exercise, _block, _dot_terms, _ints, bmatrix

#: The kinds, in the order :func:`attnviz.exercises.generate` makes them.
KINDS = ("cross_shape", "cross_argmax")


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
    question = {
        "weights": "the attention **weights** of all heads together (heads first)",
        "K_h": "the **keys of one head**, K_h",
        "output": "the **output** of the layer (after W_O)",
    }[what]
    prompt = (
        f"A decoder's cross-attention: its target of **N_tgt = {n_tgt}** tokens attends to an "
        f"encoder's source of **N_src = {n_src}** tokens; model width D = {d}, {heads} heads "
        f"(W_Q, W_K, W_V, W_O are D × D). What is the shape of {question}? Write it like "
        "(4, 2)."
    )
    expl = {
        "weights": f"Each head has one row per target token (its queries) and one column per "
        f"source token (the keys): N_tgt × N_src = {n_tgt} × {n_src}; {heads} heads: "
        f"**{heads} × {n_tgt} × {n_src}**. Not square: the two sequences differ.",
        "K_h": f"K = X_src W_K comes from the **source**: N_src × D = {n_src} × {d}; one head "
        f"takes D / heads = {d}/{heads} = {dh} columns: K_h is **{n_src} × {dh}**.",
        "output": f"One output row per **target** token (the queries ask, the output answers "
        f"each of them): the heads' outputs side by side are N_tgt × D, and W_O keeps D: "
        f"**{n_tgt} × {d}**.",
    }[what]
    hint = {
        "weights": "A row per query, a column per key: which sequence gives Q, which gives K?",
        "K_h": "K is made from the source; the heads split its columns evenly.",
        "output": "One output per query: which sequence gives the queries?",
    }[what]
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
        f"Cross-attention: the target's queries Q ({t} target tokens) and the source's keys "
        f"K ({s} source tokens), d_k = {d}:"
        + _block(bmatrix(q, name="Q"), bmatrix(k, name="K"))
        + f"Which **source token** does **target query {i}** (row {i} of Q, counting from 0) "
        "attend to most? Answer with the source token's row j of K (counting from 0)."
    )
    expl = (
        f"Row {i} of the weights is $\\mathrm{{softmax}}(q_{i} \\cdot k_j / \\sqrt{{{d}}})$ "
        f"over the {s} source tokens; the softmax keeps the order, so the largest dot product "
        "wins:\n\n"
        + "\n".join(
            f"- $q_{i} \\cdot k_{jj} = {_dot_terms(q[i], k[jj], 0)} = {int(raw[jj])}$"
            for jj in range(s)
        )
        + f"\n\nThe largest is source token **{j}** (weight {w[i, j]:.2f})."
    )
    hint = (
        f"Dot row {i} of Q with every row of K (the source has {s} tokens, so {s} dot "
        "products); the softmax does not change which is largest."
    )
    return Exercise("cross_argmax", prompt, j, expl, hint, data={"Q": q, "K": k, "i": i})


#: kind -> its maker (a function of a seeded generator).
MAKERS = {"cross_shape": cross_shape, "cross_argmax": cross_argmax}
