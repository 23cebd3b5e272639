#!/usr/bin/env python3
"""Predicted memory (`ferry check --memory`) against what runs use, per bench model at batch 1.

For each model in build/bench-models (made by bench/gen_bench_models.py through bench/compare_ort.sh):
  - the prediction for the input's batch-1 shape: weights, kernels' packed copies, JIT code (measured while the
    session was built), activation arena and its lower bound, inputs/outputs, workspace, total;
  - the arena the runs planned (measured, `ferry run --json`: memory.arenas) and the kernels' copies after the runs;
  - peak RSS of `ferry run` and of ONNX Runtime (bench/ort/ort_run.js) on the same input, and Ferry's process
    baseline (peak RSS running models/quickstart_cnn.onnx, whose weights are tiny);
  - the prediction against peak RSS minus the baseline.

Usage (after ./bench/compare_ort.sh has installed ORT and generated the models):
    /usr/bin/python3 bench/memory_report.py [--ferry build/bin/ferry] [--models build/bench-models] [--only a,b]
"""
import argparse
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1024.0 * 1024.0


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def input_shape(npy):
    import numpy as np
    return list(np.load(npy, mmap_mode="r").shape)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ferry", default="build/bin/ferry")
    p.add_argument("--models", default="build/bench-models")
    p.add_argument("--only", default="")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    root = os.path.dirname(HERE)
    baseline = run_json([args.ferry, "run", os.path.join(root, "models", "quickstart_cnn.onnx"), "--random",
                         "--threads", "1", "--json"])["peak_rss_kb"] * 1024
    only = [m for m in args.only.split(",") if m]
    rows = []
    for name in sorted(os.listdir(args.models)):
        d = os.path.join(args.models, name)
        info_path = os.path.join(d, "info.json")
        if not os.path.exists(info_path) or (only and name not in only):
            continue
        info = json.load(open(info_path))
        model, npy = os.path.join(d, "model.onnx"), os.path.join(d, "input_b1.npy")
        shape = "x".join(str(v) for v in input_shape(npy))
        check = run_json([args.ferry, "check", model, "--shape", f"{info['input']}={shape}", "--memory", "--json"])
        pred = check["memory"]
        run = run_json([args.ferry, "run", model, "--input", f"{info['input']}={npy}", "--threads", "1",
                        "--repeat", str(args.repeat), "--json"])
        ort = run_json(["node", os.path.join(HERE, "ort", "ort_run.js"), model, "--input", f"{info['input']}={npy}",
                        "--threads", "1", "--repeat", str(args.repeat)])
        arena = run["memory"]["arenas"][0] if run["memory"]["arenas"] else {"arena_bytes": 0, "lower_bound_bytes": 0}
        rss, ort_rss = run["peak_rss_kb"] * 1024, ort["peak_rss_kb"] * 1024
        rows.append((name, pred, arena, run["memory"]["kernel_bytes_now"], rss, ort_rss))
    print(f"Ferry process baseline (peak RSS on models/quickstart_cnn.onnx): {baseline / MiB:.0f} MiB\n")
    print("| model | weights | packed copies | JIT code | arena predicted / planned by the runs (lower bound) | "
          "predicted total | peak RSS Ferry / ORT | RSS - baseline | predicted / (RSS - baseline) |")
    print("|---|---:|---:|---:|---|---:|---|---:|---:|")
    for name, pred, arena, kernel_now, rss, ort_rss in rows:
        above = rss - baseline
        print(f"| {name} | {pred['weights_bytes'] / MiB:.1f} MiB | {pred['kernel_bytes'] / MiB:.1f} MiB | "
              f"{pred.get('jit_code_bytes', 0) / MiB:.1f} MiB | "
              f"{pred['arena_bytes'] / MiB:.1f} / {arena['arena_bytes'] / MiB:.1f} MiB "
              f"({arena['lower_bound_bytes'] / MiB:.1f}) | {pred['total_bytes'] / MiB:.1f} MiB | "
              f"{rss / MiB:.0f} / {ort_rss / MiB:.0f} MiB | {above / MiB:.0f} MiB | "
              f"{pred['total_bytes'] / above:.2f} |")


if __name__ == "__main__":
    main()
