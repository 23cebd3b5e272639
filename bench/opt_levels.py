#!/usr/bin/python3
"""What each graph optimization level buys: Ferry's latency at levels 0..3 on the benchmark models.

For each model, the levels run in alternating rounds (the order rotates every round), each round a fresh
`ferry run --json` process whose first run is a discarded warm-up, on the model's benchmark input. Reported per
model and level: p50 over all kept runs, the ratio to level 0, the number of steps the session ran, and the
largest relative output difference from level 0 (the optimizer's numerical cost).

    /usr/bin/python3 bench/opt_levels.py --ferry build/bin/ferry --models build/bench-models
        [--only resnet50,bert_small] [--levels 0,1,2,3] [--batch 1] [--threads 1] [--rounds 4] [--runs 10]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from compare_ort import max_rel_diff  # the same output comparison as the ORT benchmark


def run_level(args, model_dir, info, level, out_dir):
    cmd = [args.ferry, "run", os.path.join(model_dir, "model.onnx"),
           "--input", f"{info['input']}={os.path.join(model_dir, f'input_b{args.batch}.npy')}",
           "--backends", args.backends, "--threads", str(args.threads), "--repeat", str(args.runs + 1),
           "-O", str(level), "--json", "--profile-summary", "--output-dir", out_dir]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ferry", default="build/bin/ferry")
    p.add_argument("--models", default="build/bench-models")
    p.add_argument("--only", default="")
    p.add_argument("--levels", default="0,1,2,3")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--backends", default="cpu,ref")
    args = p.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    names = sorted(os.listdir(args.models))
    if args.only:
        names = [n for n in args.only.split(",") if n in names]
    rows = []
    for name in names:
        model_dir = os.path.join(args.models, name)
        info = json.load(open(os.path.join(model_dir, "info.json")))
        lat = {lv: [] for lv in levels}
        steps = {}
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                order = levels[r % len(levels):] + levels[:r % len(levels)]
                for lv in order:
                    out_dir = os.path.join(tmp, f"O{lv}")
                    os.makedirs(out_dir, exist_ok=True)
                    res = run_level(args, model_dir, info, lv, out_dir)
                    lat[lv] += res["latencies_ms"][1:]
                    steps[lv] = len(res["profile"]["nodes"])
            base = statistics.median(lat[levels[0]])
            for lv in levels:
                diff = max_rel_diff(os.path.join(tmp, f"O{lv}"), os.path.join(tmp, f"O{levels[0]}"),
                                    info["outputs"])
                med = statistics.median(lat[lv])
                rows.append((name, lv, steps[lv], med, med / base, diff))
                print(f"[opt_levels] {name} -O {lv}: p50 {med:.2f} ms, {steps[lv]} steps, "
                      f"x{med / base:.2f} of -O {levels[0]}, max rel diff {diff:.1e}", file=sys.stderr)
    print(f"| model | level | steps | p50 ms (batch {args.batch}, {args.threads} thread(s)) | vs level {levels[0]} "
          f"| max rel. diff vs level {levels[0]} |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, lv, n, med, ratio, diff in rows:
        print(f"| {name} | {lv} | {n} | {med:.2f} | {ratio:.2f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
