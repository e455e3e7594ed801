"""Time attnviz's multi_head_attention against torch.nn.MultiheadAttention (CPU).

Both return the per-head attention weights (torch: need_weights=True,
average_attn_weights=False), both run with the same number of threads, the repeats of
the two are interleaved in one run, and the medians are compared:

    python bench/engine.py                       # float64, 1 thread
    python bench/engine.py --dtype both --threads 2 --repeats 30

Prints one line per (N, D, H) and dtype with the medians and the ratio attnviz/torch
(target: <= 1.0 in float64). attnviz computes ``result.scores`` (the pre-softmax scores,
which torch does not return) when it is first read; the last two columns time a call
that also reads them. Not a test: no timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import sys


def _threads_from_argv(argv: list[str]) -> int:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
    return 1


# BLAS reads its thread count when numpy is first imported: set it before that.
_THREADS = _threads_from_argv(sys.argv[1:])
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(_THREADS)

import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attnviz.engine import AttentionParams, multi_head_attention  # noqa: E402

SIZES = ((64, 64, 4), (512, 256, 8), (1024, 512, 8))


def make_torch_mha(torch, params: AttentionParams, heads: int, dtype):
    e = params.d_model
    mha = torch.nn.MultiheadAttention(e, heads, bias=True, batch_first=True, dtype=dtype)
    with torch.no_grad():
        w = np.vstack([params.w_q.T, params.w_k.T, params.w_v.T])
        mha.in_proj_weight.copy_(torch.tensor(w))
        mha.in_proj_bias.copy_(torch.tensor(np.concatenate([params.b_q, params.b_k, params.b_v])))
        mha.out_proj.weight.copy_(torch.tensor(params.w_o.T))
        mha.out_proj.bias.copy_(torch.tensor(params.b_o))
    return mha.eval()


def bench_one(torch, n: int, d: int, h: int, dtype_name: str, repeats: int, warmup: int, clock):
    """Medians (seconds per call) of attnviz, torch, and attnviz also reading ``.scores``."""
    np_dtype = np.dtype(dtype_name)
    t_dtype = getattr(torch, dtype_name)
    params = AttentionParams.random(d, seed=0, init="xavier").astype(np_dtype)
    x = np.random.default_rng(1).standard_normal((n, d)).astype(np_dtype)
    mha = make_torch_mha(torch, params, h, t_dtype)
    xt = torch.from_numpy(x.copy())[None]  # (1, N, D)

    def run_ours():
        return multi_head_attention(x, params, num_heads=h)

    def run_ours_scores():  # the scores are computed on first access: count them too
        return multi_head_attention(x, params, num_heads=h).scores

    def run_torch():
        with torch.no_grad():
            return mha(xt, xt, xt, need_weights=True, average_attn_weights=False)

    # sanity: the same numbers, and both keep the dtype
    ours, (out, w) = run_ours(), run_torch()
    tol = 1e-9 if dtype_name == "float64" else 1e-3
    assert ours.output.dtype == np_dtype, ours.output.dtype
    assert ours.weights.dtype == np_dtype and ours.scores.dtype == np_dtype
    np.testing.assert_allclose(ours.output, out[0].numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ours.weights, w[0].numpy(), rtol=tol, atol=tol)

    for _ in range(warmup):
        run_ours()
        run_torch()
    # calls per sample: at least ~20 ms of work per sample, so the clock's resolution and
    # one-off hiccups matter less at the small size
    t0 = time.perf_counter()
    run_torch()
    inner = max(1, min(200, int(0.02 / max(time.perf_counter() - t0, 1e-6))))
    cands = ((run_ours, []), (run_torch, []), (run_ours_scores, []))
    for i in range(repeats):  # interleaved, rotating which goes first
        k = i % len(cands)
        for fn, acc in cands[k:] + cands[:k]:
            t0 = clock()
            for _ in range(inner):
                fn()
            acc.append((clock() - t0) / inner)
    return tuple(statistics.median(acc) for _, acc in cands)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dtype", choices=("float32", "float64", "both"), default="float64")
    ap.add_argument("--threads", type=int, default=1, help="BLAS and torch threads (default 1)")
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument(
        "--sizes",
        default=",".join(f"{n}x{d}x{h}" for n, d, h in SIZES),
        help="comma-separated NxDxH (default: %(default)s)",
    )
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: time.perf_counter; cpu: time.process_time (CPU time of this process, less "
        "sensitive to other processes on a busy machine; meaningful with --threads 1)",
    )
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    dtypes = ("float64", "float32") if args.dtype == "both" else (args.dtype,)
    try:
        sizes = [tuple(int(v) for v in item.split("x")) for item in args.sizes.split(",")]
        if any(len(t) != 3 or min(t) < 1 or t[1] % t[2] for t in sizes):
            raise ValueError
    except ValueError:
        ap.error(f"--sizes must be NxDxH,... with H dividing D, got {args.sizes!r}")
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    print(
        f"attnviz multi_head_attention vs torch {torch.__version__} nn.MultiheadAttention "
        f"(weights per head), numpy {np.__version__}, threads={args.threads}, "
        f"repeats={args.repeats} (medians, {args.clock} clock)"
    )
    print(
        f"{'dtype':8} {'N':>5} {'D':>4} {'H':>2} {'attnviz ms':>11} {'torch ms':>9} "
        f"{'ratio':>6}   {'+scores ms':>10} {'ratio':>6}"
    )
    worst = 0.0
    for dtype_name in dtypes:
        for n, d, h in sizes:
            ours, theirs, with_scores = bench_one(
                torch, n, d, h, dtype_name, args.repeats, args.warmup, clock
            )
            ratio = ours / theirs
            if dtype_name == "float64":
                worst = max(worst, ratio)
            print(
                f"{dtype_name:8} {n:5d} {d:4d} {h:2d} {ours * 1e3:11.3f} {theirs * 1e3:9.3f} "
                f"{ratio:6.2f}   {with_scores * 1e3:10.3f} {with_scores / theirs:6.2f}"
            )
    if "float64" in dtypes:
        verdict = "met" if worst <= 1.0 else "NOT met"
        print(f"worst float64 ratio {worst:.2f}: target <= 1.0 {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
