"""A Hugging Face checkpoint in attnviz vs transformers on the CPU (issue 34): load time,
run median, memory, the outputs' difference; docs/models.md, "Speed and memory".

    python bench/models.py                  # the full shape, 2 threads, 3 repetitions
    python bench/models.py --small          # a tiny shape: seconds (the smoke test)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import kit
import numpy as np
from kit import REPO

FULL = dict(
    hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
    intermediate_size=4864, vocab_size=151936, tie_word_embeddings=True,
    max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
)  # fmt: skip
SMALL = dict(FULL, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=128, vocab_size=1000)  # fmt: skip

CHILD = r"""
import json, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
which, folder, out = sys.argv[2], sys.argv[3], sys.argv[6]
tokens, repeat = int(sys.argv[4]), int(sys.argv[5])
threads = int(os.environ["OMP_NUM_THREADS"])
import numpy as np
ids = np.random.default_rng(0).integers(100, 900, tokens)

def rss(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

def load_attnviz():
    from attnviz import models
    model = models.load(folder)
    return lambda: model.run_ids(ids), lambda r: (r.attentions, r.logits)

def load_transformers():
    import torch, transformers
    torch.set_num_threads(threads)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager").eval()
    x = torch.tensor(ids)[None]
    def run():
        with torch.no_grad():
            return model(x, output_attentions=True, logits_to_keep=1)
    return run, lambda r: (torch.stack(r.attentions)[:, 0].numpy(), r.logits[0, -1].numpy())

def timed(run):
    s = time.perf_counter()
    run()
    return time.perf_counter() - s

if which == "both":  # both loaded, runs alternating: the ratio of each pair, then the median
    import torch, transformers
    if not os.path.exists(os.path.join(folder, "config.json")):  # built first, as Qwen2.5's
        torch.manual_seed(0)  # hub files (bfloat16), by this process: one import less
        cfg = transformers.Qwen2Config(**json.loads(sys.argv[7]))
        transformers.Qwen2ForCausalLM(cfg).to(torch.bfloat16).save_pretrained(folder)
    (a, _), (t, _) = load_attnviz(), load_transformers()
    a(), t()
    pairs = [(timed(a), timed(t)) for _ in range(repeat)]
    print(json.dumps({"ratios": [x / y for x, y in pairs], "pairs": pairs}))
    raise SystemExit
t0 = time.perf_counter()
run, result = load_attnviz() if which == "attnviz" else load_transformers()
load = time.perf_counter() - t0
r = run()
times = [timed(run) for _ in range(repeat)]
att, logits = result(run())
np.save(out + ".att.npy", att)
np.save(out + ".logits.npy", logits)
print(json.dumps({"load": load, "run": statistics.median(times), "rss": rss("VmRSS"),
                  "peak": rss("VmHWM")}))
"""


def child(which: str, folder: Path, args: argparse.Namespace, out: str) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(args.threads)
    argv = [sys.executable, "-c", CHILD, str(REPO), which, str(folder), str(args.tokens),
            str(args.repeat), out, json.dumps(SMALL if args.small else FULL)]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise SystemExit(f"{which} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    ap = kit.parser(__doc__)
    ap.add_argument("--small", action="store_true", help="a tiny shape (the smoke test)")
    ap.add_argument("--folder", type=Path, help="the checkpoint, built if absent (default /tmp)")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per process")
    ap.add_argument("--processes", type=int, default=1, help="fresh processes per side")
    args = ap.parse_args()
    name = "attnviz-bench-qwen2-small" if args.small else "attnviz-bench-qwen2-0.5b"
    folder = args.folder or Path(tempfile.gettempdir()) / name
    rows: dict[str, list[dict]] = {"attnviz": [], "transformers": []}
    with tempfile.TemporaryDirectory() as tmp:
        both = child("both", folder, args, f"{tmp}/both")  # builds the checkpoint if need be
        for k in range(args.processes):
            for which in rows:  # alternating, so both see the same load on the machine
                rows[which].append(child(which, folder, args, f"{tmp}/{which}{k}"))
        a_att, t_att = (np.load(f"{tmp}/{w}0.att.npy") for w in rows)
        a_log, t_log = (np.load(f"{tmp}/{w}0.logits.npy") for w in rows)
    diffs = float(np.abs(a_att - t_att).max()), float(np.abs(a_log - t_log).max())
    report(rows, both, args, folder, *diffs)


def report(
    rows: dict, both: dict, args: argparse.Namespace, folder: Path, d_att: float, d_log: float
) -> None:
    med = {w: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for w, rs in rows.items()}
    print(f"{folder}: {args.tokens} tokens, {args.threads} threads, {args.processes} process(es)"
          f" x {args.repeat} runs")  # fmt: skip
    print(f"{'':14s}{'load s':>9s}{'run ms':>9s}{'RSS MB':>9s}{'peak MB':>9s}")
    for w, m in med.items():
        print(f"{w:14s}{m['load']:9.2f}{m['run'] * 1e3:9.1f}{m['rss'] / 1e6:9.0f}"
              f"{m['peak'] / 1e6:9.0f}")  # fmt: skip
    ratio = statistics.median(both["ratios"])
    print(
        f"ratio attnviz / transformers: {ratio:.2f} (target <= 1.5; the median of "
        f"{len(both['ratios'])} alternating pairs in one process: "
        f"{' '.join(f'{r:.2f}' for r in both['ratios'])}; of the medians above "
        f"{med['attnviz']['run'] / med['transformers']['run']:.2f})"
    )
    print(f"attnviz load {med['attnviz']['load']:.1f} s (target < 30 s)")
    print(f"max |attentions difference| {d_att:.2e}, max |logits difference| {d_log:.2e}")
    figures = {"median": med, "ratio": ratio, "pairs": both["pairs"],
               "attentions_diff": d_att, "logits_diff": d_log}  # fmt: skip
    kit.write_json(args.json, figures, say=False)


if __name__ == "__main__":
    main()
