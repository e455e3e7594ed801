"""Hashes of the engine's and the real models' outputs, and each one's median time, for the
attnviz on ``PYTHONPATH``: run it once per tree and compare (docs/engine.md).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python bench/same_numbers.py > new.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from attnviz import engine
from attnviz.models import minilm, smollm

PROMPT_20 = (
    "In a decoder, attention lets every token look back at the tokens before it and mix them into a"
)


def digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return round(statistics.median(times), 3)


def main() -> dict:
    out: dict[str, dict] = {"hash": {}, "ms": {}}
    rng = np.random.default_rng(0)
    # 1. the engine: multi-head attention (float64) and grouped-query attention (float32)
    x = rng.standard_normal((64, 64))
    p = engine.AttentionParams.random(64, seed=1, init="xavier")
    r = engine.multi_head_attention(x, p, num_heads=8, mask=engine.causal_mask(64))
    out["hash"]["mha"] = digest(r.weights, r.output, r.scores)
    out["ms"]["mha N=64 D=64 H=8 f64"] = median_ms(
        lambda: engine.multi_head_attention(x, p, num_heads=8), 200
    )
    q = rng.standard_normal((128, 576)).astype(np.float32)
    k, v = (rng.standard_normal((128, 192)).astype(np.float32) for _ in range(2))
    m = engine.causal_mask(128)
    r = engine.attention_from_qkv(q, k, v, num_heads=9, num_kv_heads=3, mask=m)
    out["hash"]["gqa"] = digest(r.weights, r.output, r.keys)
    out["ms"]["gqa N=128 9/3 heads f32"] = median_ms(
        lambda: engine.attention_from_qkv(q, k, v, num_heads=9, num_kv_heads=3, mask=m), 100
    )
    # 2. MiniLM-L6: the default sentence, every layer's states and weights
    mm = minilm.load()
    run = mm.run(minilm.DEFAULT_TEXT)
    out["hash"]["minilm"] = digest(run.hidden_states, run.attentions)
    out["ms"]["minilm run, default text"] = median_ms(lambda: mm.run(minilm.DEFAULT_TEXT), 30)
    ra = mm.random_attention(rng.standard_normal((10, 384)), seed=3)
    out["hash"]["minilm random"] = digest(ra.weights, ra.output)
    # 3. SmolLM2-135M: 20 and 128 tokens, the weights of every head and the logits
    sm = smollm.load()
    _, ids = sm.tokenize(PROMPT_20)
    for n, repeat in ((20, 15), (128, 5)):
        ids_n = np.resize(ids, n)
        rr = sm.run_ids(ids_n)
        out["hash"][f"smollm {n}"] = digest(rr.attentions, rr.logits, rr.inputs)
        out["ms"][f"smollm run_ids, {n} tokens"] = median_ms(lambda i=ids_n: sm.run_ids(i), repeat)
    ra = sm.random_attention(rng.standard_normal((10, 576)), np.arange(10), seed=3)
    out["hash"]["smollm random"] = digest(ra.weights, ra.output)
    return out


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help
    json.dump(main(), sys.stdout, indent=1)
    print()
