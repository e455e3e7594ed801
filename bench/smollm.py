"""SmolLM2-135M in NumPy, fresh processes: import, load, first and warm runs, peak RSS;
``--server``: the server's RSS with both real models loaded (issue 11; docs/models.md).

    python bench/smollm.py                   # 5 processes, one BLAS thread
    python bench/smollm.py --repeat 3 --server --json smollm.json
"""

from __future__ import annotations

import os
import sys

import kit
from kit import REPO, print_table, run_fresh

#: 20 tokens
PROMPT_20 = (
    "In a decoder, attention lets every token look back at the tokens before it and mix them into a"
)
LONG_QUERY = "dec_text=" + "+a" * 512  # a 512-token prompt for the decoder page

CHILD = (
    kit.CHILD_HEAD
    + r"""
import resource
prompt = sys.argv[2]
t0 = time.perf_counter()
from attnviz.models import smollm
t1 = time.perf_counter()
model = smollm.load()
t2 = time.perf_counter()
run = model.run(prompt)
top = smollm.top_tokens(model, run, 10)
t3 = time.perf_counter()
out = {"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "n_first": run.n_tokens}

def step(text):
    r = model.run(text)
    smollm.top_tokens(model, r, 10)
    return r

for key, text, k in (("20", prompt, 10), ("128", " a" * 128, 3), ("512", " a" * 512, 2)):
    out[f"warm_{key}"], r = med(lambda: step(text), k)
    if key != "20":
        out[f"n_{key}"] = r.n_tokens
out["n_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""
)


def server_rss(blas_env: dict) -> dict:
    """RSS of a streamlit server after one visit each to the MiniLM and the decoder page."""
    import psutil
    from kit import Server
    from stclient import Session

    os.environ.update(blas_env)
    out = {}
    with Server("app.py") as server:
        proc = psutil.Process(server.proc.pid)

        def rss() -> float:
            return kit.rss_mb(proc)

        with Session(server.url, timeout=120) as s:
            s.rerun()
        out["n_rss_start_mb"] = rss()
        for page in ("real_model", "decoder"):
            with Session(server.url, page=page, timeout=300) as s:
                res = s.rerun()
            if res.errors:
                raise RuntimeError(f"{page}: {res.errors}")
            out[f"n_{page}_s"] = res.seconds
            out[f"n_rss_after_{page}_mb"] = rss()
        with Session(server.url, page="decoder", query=LONG_QUERY, timeout=300) as s:
            res = s.rerun()
        if res.errors:
            raise RuntimeError(f"decoder, 512 tokens: {res.errors}")
        out["n_decoder_512_s"] = res.seconds
        out["n_rss_after_decoder_512_mb"] = rss()
    return out


def main() -> int:
    ap = kit.fresh_parser(__doc__, 1)
    ap.add_argument("--server", action="store_true", help="also measure the server's RSS")
    args = ap.parse_args()
    env = kit.fresh_env(ap, args)
    blas = (
        {k: env[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        if args.blas_threads
        else {}
    )
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    runs = run_fresh(
        CHILD,
        [str(REPO), PROMPT_20],
        args.repeat,
        env,
        timeout=600,
        extra=lambda run: f", peak RSS {run['n_rss_mb']:.0f} MB",
    )

    first = runs[0]
    rows = [
        ("import attnviz.models.smollm", "import", None),
        ("load() (GGUF, dequantize, tokenizer)", "load", 4.0),
        (f"first run + top 10, {first['n_first']} tokens", "first", 0.400),
        (f"warm run + top 10, {first['n_first']} tokens", "warm_20", 0.400),
        (f"warm run + top 10, {first['n_128']} tokens", "warm_128", None),
        (f"warm run + top 10, {first['n_512']} tokens", "warm_512", None),
    ]
    ok = print_table(rows, runs, 44, inclusive=True)
    print(f"peak RSS of a process (model + 512-token runs): {first['n_rss_mb']:.0f} MB")
    result = {"runs": runs}
    if args.server:
        srv = server_rss(blas)
        result["server"] = srv
        rss = srv["n_rss_after_decoder_mb"]
        passed = rss <= 1.2 * 1024
        ok &= passed
        print(f"server RSS after the decoder page <= 1229 MB: {'ok' if passed else 'MISSED'}")
        kit.show(srv)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    kit.write_json(args.json, result, say=False)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
