"""What the Heads section works on (attnviz.ui.heads_spec): a probe run's summary keeps the
top heads of each pattern and only their weights; every pattern has its meaning."""

from __future__ import annotations

import numpy as np

from attnviz.models import head_patterns, head_probes
from attnviz.ui import heads, heads_spec


def probe_run(layers: int = 3, heads_: int = 4, n: int = 6) -> head_probes.ProbeRun:
    rng = np.random.default_rng(0)
    att = rng.random((layers, heads_, n, n))
    scores = {name: rng.random((layers, heads_)) for name in head_patterns.PATTERNS}
    scores["previous"][2, 1] = 5.0  # the clear winner of one pattern
    return head_probes.ProbeRun(
        tokens=[f"t{i}" for i in range(n)], ids=np.arange(n), attentions=att, length=n // 2,
        start=0, scores=scores,
    )  # fmt: skip


def test_the_summary_keeps_the_top_heads_and_only_their_weights():
    run = probe_run()
    s = heads_spec.summarise(run, k=2)
    assert s.top["previous"][0][:2] == (2, 1) and all(len(t) == 2 for t in s.top.values())
    picked = {(lay, h) for top in s.top.values() for lay, h, _ in top}
    assert set(s.weights) == picked and len(picked) < 12  # not every head's weights
    for (lay, h), w in s.weights.items():
        assert w.dtype == np.float32
        np.testing.assert_allclose(w, run.attentions[lay, h], rtol=1e-6)
    assert (s.tokens, s.length, s.start) == (run.tokens, 3, 0)


def test_every_pattern_has_its_meaning_and_the_section_reads_the_same_objects():
    assert set(heads_spec.MEANING) == set(head_patterns.PATTERNS)
    for name in ("MEANING", "TOP", "ModelHeads", "ProbeSummary", "summarise"):
        assert getattr(heads, name) is getattr(heads_spec, name), name
