"""Head-pattern scores of every head on the probe (issue 21's targets), in fresh processes.

Each repetition is a fresh Python process (the OS file cache is warm after the first). Both
models are loaded first (timed apart: the Heads section runs on a page whose model is
already loaded), then, for each model:

* ``first``: the page's cached probe function (``attnviz.ui.heads._probe``, an
  ``st.cache_data``) on the default probe, a cache miss: the probe ids, the model's own
  forward pass on them (all heads' weights), the six scores of every head, the top heads;
* ``scores``: ``head_patterns.scores`` alone on those weights;
* ``cached``: the same probe again, answered by the cache (a copy of the summary).

    python bench/head_patterns.py                    # 5 processes, one BLAS thread
    python bench/head_patterns.py --repeat 3 --json heads.json
    python bench/head_patterns.py --blas-threads 0   # leave the BLAS threads unset
    python bench/head_patterns.py --figures          # only: the section's charts per rerun
    python bench/head_patterns.py --crosscheck       # only: vs transformers (needs torch)

``--figures``: what the section adds to every rerun of a model page: building its four
charts (the scores of 30 x 9 heads, three heads' 80 x 80 weights on the probe) and the
board's payload of them (median of 10, in this process).

Targets (issue 21): all 270 SmolLM2 heads on the default probe (2 x 40 tokens) <= 2 s the
first time; MiniLM's 72 heads <= 0.5 s; cached after (no number given: printed).
"""

from __future__ import annotations

import json
import os
import sys

import kit
from kit import REPO, print_table, run_fresh

CHILD = r"""
import json, logging, sys, time
sys.path.insert(0, sys.argv[1])
logging.disable(logging.WARNING)  # streamlit's "no ScriptRunContext" warnings (bare mode)
from attnviz.models import head_patterns, head_probes, minilm, smollm
from attnviz.ui import heads
from attnviz.ui.heads import ModelHeads
from attnviz import viz

# the pages' specs (pages/decoder.py, pages/real_model.py), without importing the pages
SPECS = {
    "smollm": lambda m: ModelHeads("dec", "SmolLM2-135M", True, "dec_L", "dec_H",
                                   lambda s, n: head_probes.smollm_probe(m, s, n)),
    "minilm": lambda m: ModelHeads("rm", "MiniLM-L6", False, "rm_L", "rm_H",
                                   lambda s, n: head_probes.minilm_probe(m, s, n)),
}

out = {}
t0 = time.perf_counter()
models = {"smollm": smollm.load(), "minilm": minilm.load()}
out["n_load_s"] = time.perf_counter() - t0
seed, length = head_probes.DEFAULT_SEED, head_probes.DEFAULT_LENGTH
for name, model in models.items():
    spec = SPECS[name](model)
    t = time.perf_counter()
    summary = heads._probe(spec.name, seed, length, spec)
    out[f"{name}_first"] = time.perf_counter() - t
    run = spec.probe(seed, length)
    t = time.perf_counter()
    head_patterns.scores(run.attentions, run.ids)
    out[f"{name}_scores"] = time.perf_counter() - t
    t = time.perf_counter()
    again = heads._probe(spec.name, seed, length, spec)
    out[f"{name}_cached"] = time.perf_counter() - t
    assert again.top == summary.top
    out[f"n_{name}_heads"] = run.scores["previous"].size
    out[f"n_{name}_tokens"] = run.ids.size
print(json.dumps(out))
"""


def figures() -> None:
    """Median time to build the section's four charts and the board's payload of them."""
    import statistics
    import time

    import numpy as np

    from attnviz import viz
    from attnviz.models import head_patterns
    from attnviz.ui.board import figure_json, payload

    rng = np.random.default_rng(0)
    scores = {k: rng.random((30, 9)) for k in head_patterns.PATTERNS}
    w = np.tril(rng.random((80, 80)))
    w /= w.sum(axis=1, keepdims=True)
    labels = [f"t{i}" for i in range(80)]
    build, send = [], []
    for _ in range(10):
        t0 = time.perf_counter()
        charts = [("scores", viz.heads.scores_figure(scores, selected=(1, 2)), None)]
        for i in range(3):
            fig = viz.heads.probe_weights_figure(w, labels, length=40, title="x")
            charts.append((f"top{i}", fig, None))
        t1 = time.perf_counter()
        payload(charts)
        build.append(t1 - t0)
        send.append(time.perf_counter() - t1)
    size = sum(len(json.dumps(figure_json(f))) for _, f, _ in charts)
    print(
        f"build {statistics.median(build) * 1e3:.1f} ms, payload "
        f"{statistics.median(send) * 1e3:.1f} ms (medians of 10), {size / 1e3:.0f} kB of JSON"
    )


def crosscheck(seeds: range = range(4)) -> None:
    """The largest difference between attnviz's scores and those of transformers' eager
    attentions on the same probe ids, per model and seed, and whether the top 3 induction
    and previous-token heads agree (needs torch, transformers, accelerate, gguf)."""
    import numpy as np
    import torch
    import transformers

    from attnviz.models import head_patterns, head_probes, minilm, smollm

    path = smollm.model_file()
    refs = {
        "SmolLM2": (
            head_probes.smollm_probe,
            smollm.load(),
            transformers.AutoModelForCausalLM.from_pretrained(
                str(path.parent), gguf_file=path.name, attn_implementation="eager"
            ).eval(),
        ),
        "MiniLM": (
            head_probes.minilm_probe,
            minilm.load(),
            transformers.BertModel.from_pretrained(
                str(minilm.model_path()), attn_implementation="eager"
            ).eval(),
        ),
    }
    for name, (probe, model, ref) in refs.items():
        for seed in seeds:
            ours = probe(model, seed, 40)
            with torch.no_grad():
                out = ref(input_ids=torch.tensor(ours.ids)[None], output_attentions=True)
            attn = np.stack([a[0].numpy() for a in out.attentions])  # (L, H, N, N)
            theirs = head_patterns.scores(attn, ours.ids)
            diff = max(
                float(np.nanmax(np.abs(ours.scores[k] - theirs[k]))) for k in head_patterns.PATTERNS
            )
            same = all(
                [t[:2] for t in head_patterns.top_heads(ours.scores[k], 3)]
                == [t[:2] for t in head_patterns.top_heads(theirs[k], 3)]
                for k in ("induction", "previous")
            )
            print(f"{name} seed {seed}: largest difference {diff:.1e}, same top 3: {same}")


def main() -> int:
    ap = kit.fresh_parser(__doc__, 1)  # one BLAS thread, as the Docker image
    ap.add_argument("--figures", action="store_true", help="only time the section's charts")
    ap.add_argument("--crosscheck", action="store_true", help="only compare with transformers")
    args = ap.parse_args()
    if args.figures:
        figures()
        return 0
    if args.crosscheck:
        crosscheck()
        return 0
    env = kit.fresh_env(ap, args)
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    runs = run_fresh(CHILD, [str(REPO)], args.repeat, env, timeout=600)
    r = runs[0]
    rows = [
        (
            f"SmolLM2, {r['n_smollm_heads']} heads, {r['n_smollm_tokens']} tokens: first",
            "smollm_first",
            2.0,
        ),
        ("SmolLM2: scores() alone", "smollm_scores", None),
        ("SmolLM2: cached", "smollm_cached", None),
        (
            f"MiniLM, {r['n_minilm_heads']} heads, {r['n_minilm_tokens']} tokens: first",
            "minilm_first",
            0.5,
        ),
        ("MiniLM: scores() alone", "minilm_scores", None),
        ("MiniLM: cached", "minilm_cached", None),
    ]
    ok = print_table(rows, runs, 46, inclusive=True)
    loads = sorted(run["n_load_s"] for run in runs)
    print(f"both models' load (not in the figures above): median {loads[len(loads) // 2]:.2f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    kit.write_json(args.json, {"runs": runs}, say=False)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
