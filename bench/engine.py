"""attnviz's engine against ``torch.nn.MultiheadAttention`` (``--pair``: the guard's step),
and its plain path (``fused=False``) beside the fused default (docs/benchmarks.md).

    python bench/engine.py --dtype both --threads 2 --repeats 30
    python bench/engine.py --pair --threads 2 --rounds 3 --repeats 9 --json e.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

# BLAS reads its thread count when numpy is first imported: set it before that.
_pre = argparse.ArgumentParser(add_help=False)
_pre.add_argument("--threads", type=int, default=1)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(_pre.parse_known_args()[0].threads)

import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attnviz.engine import AttentionParams, multi_head_attention  # noqa: E402
from attnviz.engine.core import FUSED  # noqa: E402

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


def medians(fns: list[Callable[[], object]], repeats: int, warmup: int, clock) -> list[float]:
    """Median seconds per call of each function: interleaved repeats, rotating which goes
    first; a sample runs enough calls for ~20 ms of work (the clock's resolution)."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    t0 = time.perf_counter()
    for fn in fns:
        fn()
    inner = max(1, min(500, int(0.02 * len(fns) / max(time.perf_counter() - t0, 1e-6))))
    acc: list[list[float]] = [[] for _ in fns]
    order = list(range(len(fns)))
    for i in range(repeats):
        k = i % len(fns)
        for j in order[k:] + order[:k]:
            t0 = clock()
            for _ in range(inner):
                fns[j]()
            acc[j].append((clock() - t0) / inner)
    return [statistics.median(a) for a in acc]


def torch_fns(torch, n: int, d: int, h: int, dtype_name: str, pair: bool):
    """The calls timed, checked equal once: the defaults (fused), torch, then (not
    ``pair``) the defaults also reading ``.scores`` and plain (``fused=False``)."""
    np_dtype = np.dtype(dtype_name)
    params = AttentionParams.random(d, seed=0, init="xavier").astype(np_dtype)
    x = np.random.default_rng(1).standard_normal((n, d)).astype(np_dtype)
    mha = make_torch_mha(torch, params, h, getattr(torch, dtype_name))
    xt = torch.from_numpy(x.copy())[None]  # (1, N, D)

    def run_torch():
        with torch.no_grad():
            return mha(xt, xt, xt, need_weights=True, average_attn_weights=False)

    fns = [
        lambda: multi_head_attention(x, params, num_heads=h),  # the defaults: what the app runs
        run_torch,
        lambda: multi_head_attention(x, params, num_heads=h).scores,  # computed when read
        lambda: multi_head_attention(x, params, num_heads=h, fused=False),
    ]
    # sanity: the same numbers on both paths, and both keep the dtype
    out, w = run_torch()
    tol = 1e-9 if dtype_name == "float64" else 1e-3
    for ours in (fns[0](), fns[3]()):
        assert ours.output.dtype == ours.weights.dtype == ours.scores.dtype == np_dtype
        np.testing.assert_allclose(ours.output, out[0].numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(ours.weights, w[0].numpy(), rtol=tol, atol=tol)
    return fns[:2] if pair else fns


def _parse_sizes(ap: argparse.ArgumentParser, text: str) -> list[tuple[int, ...]]:
    try:
        sizes = [tuple(int(v) for v in item.split("x")) for item in text.split(",")]
        if any(len(t) != 3 or min(t) < 1 or t[1] % t[2] for t in sizes):
            raise ValueError
    except ValueError:
        ap.error(f"--sizes must be NxDxH,... with H dividing D, got {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dtype", choices=("float32", "float64", "both"), default="float64")
    ap.add_argument("--threads", type=int, default=1, help="BLAS and torch threads (default 1)")
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--sizes", help="NxDxH,... (default SIZES)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--pair", action="store_true", help="the defaults and torch alone")
    ap.add_argument("--rounds", type=int, default=1, help="the measurement, this many times")
    ap.add_argument("--json", type=Path, help="each round's float64 medians (ms) here")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="cpu: process_time")
    args = ap.parse_args(argv)
    sizes = SIZES if args.sizes is None else _parse_sizes(ap, args.sizes)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    import torch

    torch.set_num_threads(args.threads)
    dtypes = ("float64", "float32") if args.dtype == "both" else (args.dtype,)
    print(
        f"attnviz multi_head_attention (defaults: fused={FUSED}) vs torch {torch.__version__} "
        f"nn.MultiheadAttention (weights per head), numpy {np.__version__}, "
        f"threads={args.threads}, repeats={args.repeats} (medians, {args.clock} clock)"
    )
    print(
        f"{'dtype':8} {'N':>5} {'D':>4} {'H':>2} {'fused ms':>9} {'torch ms':>9} "
        f"{'ratio':>6}   {'+scores ms':>10} {'ratio':>6}   {'plain ms':>9} {'ratio':>6}"
    )
    cases = [(t, size) for t in dtypes for size in sizes]
    fns = {c: torch_fns(torch, *c[1], c[0], args.pair) for c in cases}
    for f in fns.values():  # untimed: torch's first calls at 2 threads were 10-70x slower
        medians(f, 1, 3, time.perf_counter)
    worst, rounds = 0.0, []
    for _ in range(args.rounds):
        rounds.append([])
        for (dtype_name, (n, d, h)), f in fns.items():
            fused, theirs, *extra = medians(f, args.repeats, args.warmup, clock)
            ratio = fused / theirs
            if dtype_name == "float64":
                worst = max(worst, ratio)
                rounds[-1].append({"fused_ms": fused * 1e3, "torch_ms": theirs * 1e3})
            more = "".join(f"   {x * 1e3:10.3f} {x / theirs:6.2f}" for x in extra)
            print(
                f"{dtype_name:8} {n:5d} {d:4d} {h:2d} {fused * 1e3:9.3f} {theirs * 1e3:9.3f} "
                f"{ratio:6.2f}{more}",
                flush=True,
            )
    if "float64" in dtypes:
        verdict = "met" if worst <= 1.0 else "NOT met"
        print(f"worst float64 ratio {worst:.2f} (defaults): target <= 1.0 {verdict}")
    if args.json:
        unset = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v not in os.environ]
        out = {"sizes": sizes, "threads": args.threads, "repeats": args.repeats,
               "rounds": rounds, "torch": torch.__version__, "numpy": np.__version__,
               "unset": unset}  # fmt: skip
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
