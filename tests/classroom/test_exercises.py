"""attnviz.classroom.exercises: determinism, the kinds, every answer recomputed with plain NumPy
from
the exercise's data, and check() against right, wrong and junk input."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz import i18n
from attnviz.classroom import exercises

SEEDS = range(30)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def recompute(e: exercises.Exercise):
    """The answer from e.data with plain NumPy (no attnviz.engine)."""
    d = e.data
    if e.kind == "argmax":
        return int(np.argmax(d["Q"][d["i"]] @ d["K"].T))
    if e.kind == "weight":
        q, k = d["Q"], d["K"]
        s = q[d["i"]] @ k.T / math.sqrt(q.shape[1])
        return float(softmax(s)[d["j"]])
    if e.kind == "score":
        return float(d["q"] @ d["k"] / math.sqrt(len(d["q"])))
    if e.kind == "mask":
        n, i = d["n"], d["i"]
        return i + 1 if d["mask_kind"] == "causal" else n - d["pad"]
    if e.kind == "shape":
        n, dm, h = d["n"], d["d"], d["heads"]
        return {"Q_h": (n, dm // h), "weights": (h, n, n), "concat": (n, dm)}[d["what"]]
    if e.kind == "scaling":

        def entropy(c):
            w = softmax(c * d["s"])
            return -(w * np.log(w)).sum()

        return "rise" if entropy(d["c2"]) > entropy(d["c1"]) else "fall"
    if e.kind == "heads":
        w = d["weights"]
        return int(np.argmax([np.diagonal(h, offset=-1).mean() for h in w]))
    if e.kind == "cross_shape":  # the target asks (rows), the source answers (columns)
        s, t, dm, h = d["n_src"], d["n_tgt"], d["d"], d["heads"]
        return {"weights": (h, t, s), "K_h": (s, dm // h), "output": (t, dm)}[d["what"]]
    if e.kind == "cross_argmax":
        return int(np.argmax(d["Q"][d["i"]] @ d["K"].T))
    raise AssertionError(e.kind)


def shown_numbers(prompt: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.?\d*", prompt)]


def test_the_same_seed_gives_the_same_set_and_another_seed_another():
    a, b = exercises.generate(seed=3, count=8), exercises.generate(seed=3, count=8)
    assert [(e.kind, e.prompt, e.answer) for e in a] == [(e.kind, e.prompt, e.answer) for e in b]
    c = exercises.generate(seed=4, count=8)
    assert [e.prompt for e in a] != [e.prompt for e in c]
    # a longer set starts with the shorter one
    assert [e.prompt for e in exercises.generate(seed=3, count=20)[:8]] == [e.prompt for e in a]


def test_at_least_six_kinds_all_in_the_first_set():
    kinds = [e.kind for e in exercises.generate(seed=0, count=len(exercises.KINDS))]
    assert len(set(kinds)) >= 6
    assert set(kinds) == set(exercises.KINDS)
    for seed in range(20):  # every seed's first len(KINDS) hold every kind
        got = exercises.generate(seed=seed, count=len(exercises.KINDS))
        assert {e.kind for e in got} == set(exercises.KINDS)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_answer_recomputed_with_plain_numpy(seed):
    for e in exercises.generate(seed=seed, count=14):
        expected = recompute(e)
        if e.kind in exercises.SHAPE_KINDS:
            assert exercises.parse_shape(e.answer) == expected
        elif isinstance(expected, float):
            assert isinstance(e.answer, float)
            assert e.answer == pytest.approx(expected, abs=1e-12)
        else:
            assert e.answer == expected, e.kind
            assert type(e.answer) is type(expected)
        assert e.check(e.answer) and e.check(e.answer_text)


@pytest.mark.parametrize("seed", SEEDS)
def test_small_sizes_and_no_ties(seed):
    for e in exercises.generate(seed=seed, count=7):
        d = e.data
        if e.kind in ("argmax", "weight"):
            assert d["Q"].shape[0] <= 6 and d["Q"].shape[1] <= 4
            assert np.array_equal(d["Q"], np.round(d["Q"]))  # integers: exact on paper
        if e.kind == "argmax":
            row = np.sort(d["Q"][d["i"]] @ d["K"].T)
            assert row[-1] > row[-2]
        if e.kind == "score":
            assert len(d["q"]) <= 4
            assert np.array_equal(d["q"], np.round(d["q"], 1))
        if e.kind == "heads":
            means = np.sort([np.diagonal(h, offset=-1).mean() for h in d["weights"]])
            assert means[-1] - means[-2] >= 0.1 - 1e-9
            assert np.allclose(d["weights"].sum(axis=-1), 1.0)
        if e.kind in ("mask", "shape"):
            assert d["n"] <= 6


@pytest.mark.parametrize("seed", SEEDS)
def test_answers_from_the_numbers_shown_are_within_the_tolerance(seed):
    """The shown (rounded) numbers give the answer on paper: recompute from the prompt."""
    for e in exercises.generate(seed=seed, count=7):
        if e.kind == "score":
            nums = shown_numbers(e.prompt.split("$$")[1])
            d = len(e.data["q"])
            # "q_i = ..." and "k_j = ...": the subscripts i, j are letters, so the
            # numbers are exactly the two vectors
            q, k = np.array(nums[:d]), np.array(nums[d : 2 * d])
            assert e.check(round(float(q @ k) / math.sqrt(d), 2))
        if e.kind in ("weight", "score"):
            assert e.check(round(e.answer, 2))
            assert e.check(f" {e.answer:.2f} ")


def test_wrong_answers_are_rejected():
    for e in exercises.generate(seed=1, count=len(exercises.KINDS)):
        if e.kind in exercises.SHAPE_KINDS:
            wrong = "(99, 98)"
        elif e.kind == "scaling":
            wrong = "fall" if e.answer == "rise" else "rise"
        elif isinstance(e.answer, float):
            wrong = e.answer + 0.05
        else:
            wrong = e.answer + 1
        assert not e.check(wrong), e.kind
        assert not e.check(str(wrong)), e.kind


JUNK = [
    None,
    "",
    " ",
    "abc",
    "nan",
    "inf",
    "-inf",
    float("nan"),
    float("inf"),
    [],
    {},
    object(),
    True,
    False,
    b"1",
    "1/0",
    "1e999",
    "(",
    "()",
    "x",
]


@pytest.mark.parametrize("junk", JUNK, ids=repr)
def test_junk_is_false_and_never_raises(junk):
    for e in exercises.generate(seed=2, count=7):
        assert e.check(junk) is False


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.text(max_size=20),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(),
        st.binary(max_size=5),
        st.lists(st.integers(), max_size=4),
        st.booleans(),
    )
)
def test_check_never_raises_on_anything(value):
    for e in ITEMS:
        assert isinstance(e.check(value), bool)


ITEMS = exercises.generate(seed=5, count=7)


def test_string_forms_of_numbers_and_shapes():
    items = {e.kind: e for e in exercises.generate(seed=0, count=7)}
    w = items["weight"]
    assert w.check(f"  {w.answer:.2f}") and w.check(f"{w.answer:.3f}".replace(".", ","))
    assert w.check(np.float32(w.answer))
    a = items["argmax"]
    assert a.check(str(a.answer)) and a.check(f" {a.answer} ") and a.check(float(a.answer))
    assert a.check(np.int64(a.answer))
    assert not a.check(a.answer + 0.5)
    s = items["shape"]
    dims = exercises.parse_shape(s.answer)
    for form in ("({})", "{}", "[{}]"):
        assert s.check(form.format(", ".join(map(str, dims))))
    assert s.check("x".join(map(str, dims))) and s.check(" × ".join(map(str, dims)))
    assert s.check(tuple(dims))
    assert not s.check(", ".join(map(str, dims[::-1] + (1,))))
    sc = items["scaling"]
    assert sc.check(sc.answer.upper()) and sc.check(f" {sc.answer}s ")
    assert not sc.check(1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": "0"}, "seed"),
        ({"seed": True}, "seed"),
        ({"seed": 2**40}, "seed"),
        ({"count": 0}, "count"),
        ({"count": 51}, "count"),
        ({"count": 2.0}, "count"),
        ({"count": None}, "count"),
    ],
)
def test_bad_arguments_give_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        exercises.generate(**kwargs)


def test_count_cycles_the_kinds():
    items = exercises.generate(seed=0, count=50)
    assert len(items) == 50
    assert [e.kind for e in items[: len(exercises.KINDS)]] == list(exercises.KINDS)
    assert len(exercises.generate(seed=0, count=1)) == 1


def test_explanations_hints_and_prompts_are_markdown_with_the_answer():
    for e in exercises.generate(seed=7, count=len(exercises.KINDS)):
        assert e.hint and e.explanation and e.prompt
        assert r"\begin{bmatrix}" in e.prompt or e.kind in ("mask", *exercises.SHAPE_KINDS)
        if e.kind in exercises.SHAPE_KINDS:
            assert "×".join(map(str, exercises.parse_shape(e.answer))).replace("×", " × ") in (
                e.explanation
            )


def test_answer_key_markdown_and_csv():
    items = exercises.generate(seed=9, count=8)
    md = exercises.answer_key_markdown(9, items)
    assert "seed 9" in md and md.count("**Answer:") == 8
    csv = exercises.answer_key_csv(items).splitlines()
    assert csv[0] == "number,kind,answer,tolerance" and len(csv) == 9
    import csv as csvmod

    rows = list(csvmod.DictReader(exercises.answer_key_csv(items).splitlines()))
    for row, e in zip(rows, items, strict=True):
        assert row["kind"] == e.kind and e.check(row["answer"])


def test_the_learned_pages_exercises_come_from_the_run():
    from attnviz import toys

    jobs = toys.job_scores("induction", toys.load("induction"))
    circuit, timing = exercises.learned(jobs)
    assert circuit.choices == ("layer 0", "layer 1") and circuit.check("Layer 1")
    assert not circuit.check("layer 0")
    above = jobs.scores[:, 1, :] >= exercises.FORMED  # (C, H) layer 1
    first = int(min(jobs.steps[np.argmax(above[:, h])] for h in range(2) if above[:, h].any()))
    assert timing.answer == first
    assert timing.check(str(first + int(timing.tolerance))) and timing.check(first - 3)
    assert not timing.check(first + int(timing.tolerance) + 1)
    with pytest.raises(ValueError, match="induction run"):
        exercises.learned(toys.job_scores("previous", toys.load("previous")))


def test_every_kind_has_a_title_a_student_reads():
    for kind in (*exercises.KINDS, *exercises.LEARNED_KINDS):
        title = exercises.TITLES[kind]
        assert title[0].isupper() and " " in title and title.lower() != kind, (kind, title)
    items = exercises.generate(seed=3, count=8)
    assert [e.title for e in items[:2]] == ["Which key wins", "One attention weight"]


def test_a_class_set_is_kept_per_language_and_graded_the_same_in_each(monkeypatch):
    """exercises.generated: texts in the language asked for, one cached set per language;
    the answers (and so the grading) the same in every language."""
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")
    en = exercises.generated(7, 9, "en")
    assert exercises.generated(7, 9, "en") is en
    with i18n.use("xx"):
        xx = exercises.generated(7, 9)
    assert xx is exercises.generated(7, 9, "xx") and xx is not en
    assert [e.answer for e in xx] == [e.answer for e in en]
    assert all(a.prompt != b.prompt and "⟦" in b.prompt for a, b in zip(en, xx, strict=True))
    for i, e in enumerate(en):
        with i18n.use("xx"):
            assert exercises.grade(7, 9, i, e.answer_text)
        assert exercises.grade(7, 9, i, e.answer_text)


def test_a_mask_exercise_is_in_the_language_asked_for_its_numbers_the_same(monkeypatch):
    """The mask question's rule and its explanation (written in attnviz/engine/masks.py)
    go through the catalogs: in the pseudo-language every word of them is wrapped, the
    numbers (tokens, padding, row, answer) are the same as in English."""
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")
    seen = set()
    for seed in range(200):
        en = exercises._mask(np.random.default_rng(seed))
        with i18n.use("xx"):
            xx = exercises._mask(np.random.default_rng(seed))
        assert xx.answer == en.answer and xx.data == en.data
        kind = en.data["mask_kind"]
        seen.add(kind)
        english = {"causal": "a **causal** mask", "padding": "a **padding** mask"}[kind]
        assert english in en.prompt and english not in xx.prompt, xx.prompt
        assert "Under the causal mask" not in xx.explanation
        assert "are padding and masked" not in xx.explanation
        numbers = lambda t: re.findall(r"\d+", t)  # noqa: E731
        assert numbers(xx.explanation) == numbers(en.explanation)
    assert seen == {"causal", "padding"}


def test_an_explanation_s_vectors_are_written_as_the_language_writes_numbers():
    """The one-weight exercise's explanation lists the row's scores and weights: in Spanish
    with decimal commas and "; " between them ("(-1,0; 0,5)": a comma both inside and
    between numbers read as one list), in Arabic each list isolated (appended to the
    translated sentence, it ran right to left: "(0.5 ,0.0 ,1.0-)"), in English as before."""
    seed = next(s for s in range(50) if exercises.generate(seed=s, count=2)[1].kind == "weight")
    lists = {}
    for lang in ("en", "es", "ar"):
        with i18n.use(lang):
            explanation = exercises.generate(seed=seed, count=2)[1].explanation
        lists[lang] = re.findall(r"\u2068?\((?:-?\d[\d.,]*(?:, |; |\)))+\u2069?", explanation)
    assert len(lists["en"]) == 2 and all(", " in x and ";" not in x for x in lists["en"])
    assert [x.replace(",", ".").replace(";", ",") for x in lists["es"]] == lists["en"]
    assert all(";" in x and "." not in x for x in lists["es"]), lists["es"]
    assert [x.strip("\u2068\u2069") for x in lists["ar"]] == lists["en"]
    assert all(x.startswith("\u2068") and x.endswith("\u2069") for x in lists["ar"]), lists


def test_an_exercise_s_formulas_write_numbers_as_the_language_does():
    """The one-weight and the scaled-score exercises in Spanish: the matrices of the prompt
    and the worked formula of the explanation with decimal commas, braced ("0{,}35": TeX
    puts no space after it), as the prose beside them ("(0,08; 0,35)"); they had points
    ("0.3534 \\approx 0.35" under "(0,08; 0,35; 0,21; 0,35)"). English keeps its points,
    and the answer is the same number."""
    maths = re.compile(r"\$\$.*?\$\$|\$.*?\$", re.S)
    kinds = {"weight", "score"}
    for lang, sign in (("en", "."), ("es", "{,}")):
        with i18n.use(lang):
            made = [e for e in exercises.generate(seed=3, count=9) if e.kind in kinds]
        assert {e.kind for e in made} == kinds
        for e in made:
            tex = " ".join(maths.findall(e.prompt + e.explanation))
            decimals = re.findall(r"\d(\.|\{,\})\d", tex)
            assert decimals and set(decimals) == {sign}, (lang, e.kind, tex)
        if lang == "en":
            answers = [e.answer for e in made]
    assert [e.answer for e in made] == answers
