#!/usr/bin/python3
"""Ferry against ONNX Runtime, side by side in one run (driven by bench/compare_ort.sh).

For each model, batch and thread count, Ferry (`ferry run --json`, plus --ferry-args) and ONNX Runtime
(bench/ort/ort_run.js, the npm package onnxruntime-node, CPU execution provider, all graph optimizations unless
--ort-args says otherwise) run the same model on the same input. Each round starts a fresh Ferry process and a
fresh ORT process (one after the other, so that session creation is not contended; Ferry first in even rounds) in
lock step (`--lockstep`): the driver then asks each for
one run at a time, alternating Ferry, ORT, ORT, Ferry, ..., so both see the same moment-to-moment load of this
shared machine (which swings run times by 30% over seconds) and never run at once: after each run the driver waits
until that process has stopped using CPU (ORT's worker threads spin for ~50 ms after a run). Each process's first run is a
discarded warm-up. Reported: p50/p90 latency over all kept runs, throughput at p50, the Ferry/ORT p50 ratio,
session-creation time and peak RSS (medians over rounds), and the largest relative difference between Ferry's
output and ORT's; --json also keeps the median of the per-pair ratios.

A model directory holds model.onnx and info.json: {"input": NAME, "outputs": [...]} with input_b<batch>.npy
(bench/gen_bench_models.py), or {"inputs": [{"name", "file": "input_b1_<k>.npy"}, ...], "outputs": [...]} for
several inputs of any dtype .npy holds (bench/zoo.py, bench/op_bench.py; input_b<batch>_<k>.npy at other batches).

    /usr/bin/python3 bench/compare_ort.py --ferry build/bin/ferry --models build/bench-models [--rounds 3] [--runs 5]
        [--only resnet50,bert_small] [--batches 1,8] [--threads 1,2] [--backends cpu,ref] [--json FILE]
        [--ferry-args "-O 0"] [--ort-args "--graph-optimization disabled"]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def percentile(values, p):
    values = sorted(values)
    k = max(0, min(len(values) - 1, int(np.ceil(p * len(values))) - 1))
    return values[k]


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def input_specs(info, model_dir, batch):
    """[(input name, .npy path)] of a model at a batch: info.json's "inputs" ([{"name", "file"}], files named for
    batch 1 as input_b1_<k>.npy, bench/zoo.py) when present, else its one "input" with input_b<batch>.npy."""
    if "inputs" in info:
        return [(i["name"], os.path.join(model_dir, i["file"].replace("input_b1_", f"input_b{batch}_")))
                for i in info["inputs"]]
    return [(info["input"], os.path.join(model_dir, f"input_b{batch}.npy"))]


def _input_flags(input_name, input_file):
    """--input NAME=FILE for one input (input_name, input_file) or for a list of (name, file) pairs (input_file
    None)."""
    pairs = [(input_name, input_file)] if input_file is not None else input_name
    flags = []
    for name, file in pairs:
        flags += ["--input", f"{name}={file}"]
    return flags


def ferry_cmd(args, model, input_name, input_file, threads, repeat, out_dir=None, backends=None, extra=""):
    cmd = [args.ferry, "run", model] + _input_flags(input_name, input_file) + [
           "--backends", backends or args.backends, "--threads", str(threads), "--repeat", str(repeat), "--json"]
    if out_dir:
        cmd += ["--output-dir", out_dir]
    return cmd + shlex.split(extra)


def ort_cmd(model, input_name, input_file, threads, repeat, save_dir=None, extra=""):
    cmd = ["node", os.path.join(HERE, "ort", "ort_run.js"), model] + _input_flags(input_name, input_file) + [
           "--threads", str(threads), "--repeat", str(repeat)]
    if save_dir:
        cmd += ["--save-dir", save_dir]
    return cmd + shlex.split(extra)


def output_file(out_dir, name):
    """Where `ferry run --output-dir` and ort_run.js --save-dir write output NAME."""
    for c in "/\\:":
        name = name.replace(c, "_")
    return os.path.join(out_dir, name + ".npy")


def max_rel_diff(a_dir, b_dir, names):
    """The largest |a - b| over max |b| of the outputs `names`; inf when an output is missing on one side or the
    shapes differ (detection models whose NMS kept different boxes), 0 for outputs both leave empty."""
    worst = 0.0
    for n in names:
        fa, fb = output_file(a_dir, n), output_file(b_dir, n)
        if not (os.path.exists(fa) and os.path.exists(fb)):
            return float("inf")
        a, b = np.load(fa), np.load(fb)
        if a.shape != b.shape:
            return float("inf")
        if a.size == 0:
            continue
        a, b = a.astype(np.float64), b.astype(np.float64)
        scale = max(float(np.abs(b).max()), 1e-6)
        worst = max(worst, float(np.abs(a - b).max()) / scale)
    return worst


class Stepper:
    """A `--lockstep` process (ferry run or ort_run.js): one run per step(), its latency read back."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        if self.proc.stdout.readline().strip() != "ready":
            self.fail()

    def fail(self):
        self.proc.kill()
        _, err = self.proc.communicate()
        raise RuntimeError(f"{' '.join(self.cmd)}: {err.strip()}")

    def step(self):
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.fail()
        self.wait_idle()
        return float(line)

    def cpu_ns(self):
        """CPU time of all the process's threads so far (ns), from /proc/PID/task/*/schedstat."""
        total = 0
        for tid in os.listdir(f"/proc/{self.proc.pid}/task"):
            try:
                with open(f"/proc/{self.proc.pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass
        return total

    def wait_idle(self, window_s=0.005, limit_s=1.0):
        """Waits until the process stops using CPU after a run: ONNX Runtime's intra-op threads spin for ~50 ms
        after each run (measured: 60 ms of CPU in the first 100 ms idle, at 2 threads), which would take a core
        from the other engine's next run."""
        deadline = time.monotonic() + limit_s
        before = self.cpu_ns()
        while time.monotonic() < deadline:
            time.sleep(window_s)
            now = self.cpu_ns()
            if now - before < 0.1 * window_s * 1e9:
                return
            before = now

    def finish(self):
        out, err = self.proc.communicate()
        if self.proc.returncode != 0:
            raise RuntimeError(f"{' '.join(self.cmd)}: {err.strip()}")
        return json.loads(out)


def alternate(procs, order, turns):
    """`turns` turns of one run per process, in `order` then reversed, then `order`, ...: each engine's latencies."""
    lat = {engine: [] for engine in order}
    for k in range(turns):
        for engine in (order if k % 2 == 0 else order[::-1]):
            lat[engine].append(procs[engine].step())
    return lat


def bench(args, name, info, batch, threads):
    d = os.path.join(args.models, name)
    model, feeds = os.path.join(d, "model.onnx"), input_specs(info, d, batch)
    ferry_lat, ort_lat, ferry_sess, ort_sess, ferry_rss, ort_rss, pair_ratios = [], [], [], [], [], [], []
    for r in range(args.rounds):
        cmds = {"ferry": ferry_cmd(args, model, feeds, None, threads, 1, extra=args.ferry_args) + ["--lockstep"],
                "ort": ort_cmd(model, feeds, None, threads, 1, extra=args.ort_args) + ["--lockstep"]}
        order = ["ferry", "ort"] if r % 2 == 0 else ["ort", "ferry"]
        procs = {engine: Stepper(cmds[engine]) for engine in order}
        lat = alternate(procs, order, args.runs + 1)
        results = {engine: procs[engine].finish() for engine in order}
        ferry_lat += lat["ferry"][1:]
        ort_lat += lat["ort"][1:]
        pair_ratios += [f / o for f, o in zip(lat["ferry"][1:], lat["ort"][1:])]
        ferry_sess.append(results["ferry"]["session_ms"])
        ferry_rss.append(results["ferry"]["peak_rss_kb"])
        ort_sess.append(results["ort"]["session_ms"])
        ort_rss.append(results["ort"]["peak_rss_kb"])
    row = {"model": name, "batch": batch, "threads": threads,
           "ferry_p50": statistics.median(ferry_lat), "ferry_p90": percentile(ferry_lat, 0.9),
           "ort_p50": statistics.median(ort_lat), "ort_p90": percentile(ort_lat, 0.9),
           "ferry_session_ms": statistics.median(ferry_sess), "ort_session_ms": statistics.median(ort_sess),
           "ferry_rss_mb": statistics.median(ferry_rss) / 1024, "ort_rss_mb": statistics.median(ort_rss) / 1024,
           "runs": len(ferry_lat), "paired_ratio_median": statistics.median(pair_ratios)}
    row["ratio"] = row["ferry_p50"] / row["ort_p50"]
    row["ferry_per_s"] = 1000.0 * batch / row["ferry_p50"]
    row["ort_per_s"] = 1000.0 * batch / row["ort_p50"]
    return row


def check_outputs(args, name, info, with_ref=True):
    """Ferry (backends under test) vs ORT and vs Ferry's ref backend at batch 1: the largest relative difference
    (vs ref None without with_ref: ref alone is slow on large models)."""
    d = os.path.join(args.models, name)
    model, feeds = os.path.join(d, "model.onnx"), input_specs(info, d, 1)
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {k: os.path.join(tmp, k) for k in ("ferry", "ort", "ref")}
        for p in dirs.values():
            os.makedirs(p)
        run_json(ferry_cmd(args, model, feeds, None, 2, 1, dirs["ferry"], extra=args.ferry_args))
        run_json(ort_cmd(model, feeds, None, 2, 1, dirs["ort"], extra=args.ort_args))
        vs_ort = max_rel_diff(dirs["ferry"], dirs["ort"], info["outputs"])
        if not with_ref:
            return vs_ort, None
        run_json(ferry_cmd(args, model, feeds, None, 2, 1, dirs["ref"], backends="ref"))
        return vs_ort, max_rel_diff(dirs["ferry"], dirs["ref"], info["outputs"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ferry", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", default="")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--backends", default="cpu,ref")
    p.add_argument("--json", default="")
    p.add_argument("--ferry-args", default="", help='more `ferry run` options for the backends under test, e.g. "-O 0"')
    p.add_argument("--ort-args", default="", help='more ort_run.js options, e.g. "--graph-optimization disabled"')
    args = p.parse_args()
    names = [n for n in args.only.split(",") if n] or sorted(os.listdir(args.models))
    rows, checks = [], {}
    for name in names:
        info_path = os.path.join(args.models, name, "info.json")
        if not os.path.exists(info_path):
            continue
        with open(info_path) as f:
            info = json.load(f)
        checks[name] = check_outputs(args, name, info)
        for batch in [int(b) for b in args.batches.split(",")]:
            for threads in [int(t) for t in args.threads.split(",")]:
                row = bench(args, name, info, batch, threads)
                rows.append(row)
                print(f"[compare_ort] {name} b{batch} t{threads}: ferry p50 {row['ferry_p50']:.2f} ms, "
                      f"ort p50 {row['ort_p50']:.2f} ms, ratio {row['ratio']:.2f} "
                      f"(paired {row['paired_ratio_median']:.2f})", file=sys.stderr, flush=True)
    print("| model | batch | threads | Ferry p50 ms | Ferry p90 ms | ORT p50 ms | ORT p90 ms | Ferry/ORT p50 | "
          "Ferry inf/s | ORT inf/s | session ms Ferry / ORT | peak RSS MB Ferry / ORT |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r['threads']} | {r['ferry_p50']:.1f} | {r['ferry_p90']:.1f} | "
              f"{r['ort_p50']:.1f} | {r['ort_p90']:.1f} | **{r['ratio']:.2f}** | {r['ferry_per_s']:.1f} | "
              f"{r['ort_per_s']:.1f} | {r['ferry_session_ms']:.0f} / {r['ort_session_ms']:.0f} | "
              f"{r['ferry_rss_mb']:.0f} / {r['ort_rss_mb']:.0f} |")
    print()
    print("| model | max rel. diff Ferry vs ORT | max rel. diff Ferry vs ref |")
    print("|---|---:|---:|")
    for name, (vs_ort, vs_ref) in checks.items():
        print(f"| {name} | {vs_ort:.1e} | {vs_ref:.1e} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "checks": {k: {"vs_ort": v[0], "vs_ref": v[1]} for k, v in checks.items()}},
                      f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
