#!/usr/bin/python3
"""Where the time goes, node by node, in Ferry and in ONNX Runtime on the same model (driven like compare_ort.py).

One Ferry process (`ferry run --lockstep --profile-summary`) and one ORT process (bench/ort/ort_run.js --lockstep
--profile, ORT's own profiler) run the model in lock step, one run at a time, alternating, so both profiles come
from the same moment-to-moment load of the machine. Each side's first run is a warm-up. Per node: the median over
the kept runs.

The two runtimes fuse differently, so nodes are matched through the ONNX graph: every profiled node is charged to the
ONNX node that does its heavy work. A Ferry node keeps the name of the ONNX node it was fused into (a Conv that
absorbed its BatchNormalization, Relu and residual Add keeps the Conv's name). ORT names a fused node after its
output tensor (or after an ONNX node, with a suffix such as "/QuickGeluFusion/"), so the ONNX node producing that
tensor (or so named) is taken. On both sides, while that node is an elementwise op (Relu, Add, Clip, Mul, Sigmoid,
...), it is replaced by the producer of its non-constant inputs that runs last in the graph (for a residual Add,
the convolution ORT fused it into; for x * sigmoid(x), the convolution computing x; for a squeeze-excitation
block's scaling Mul, the convolution computing the scale). Nodes that match on neither side are listed as
unmatched.

    /usr/bin/python3 bench/profile_ort.py --model resnet50 [--batch 1] [--threads 1] [--runs 40] [--top 15]
        [--ferry build/bin/ferry] [--models build/bench-models]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import onnx

from compare_ort import Stepper, alternate, ferry_cmd, ort_cmd

ELEMENTWISE = {"Relu", "Add", "Sum", "Clip", "Sigmoid", "Mul", "HardSigmoid", "HardSwish", "LeakyRelu", "Tanh",
               "Identity", "Cast", "Div", "Sub"}


def heavy_node_of(model):
    """Maps a tensor name to the name of the ONNX node doing the heavy work behind it (see the module doc)."""
    nodes = list(model.graph.node)
    producer = {out: i for i, n in enumerate(nodes) for out in n.output}
    by_name = {n.name: i for i, n in enumerate(nodes)}

    def resolve(tensor):
        i = producer.get(tensor)
        # Some fused ORT nodes are named after an ONNX node plus a suffix ("/.../Mul/QuickGeluFusion/"): the
        # longest leading path that names a node.
        parts = tensor.rstrip("/").split("/")
        while i is None and len(parts) > 1:
            i = by_name.get("/".join(parts))
            parts.pop()
        while i is not None and nodes[i].op_type in ELEMENTWISE:
            inputs = [producer[t] for t in nodes[i].input if t in producer and nodes[producer[t]].op_type != "Constant"]
            if not inputs:
                break
            i = max(inputs)
        return nodes[i].name if i is not None else None

    return resolve, {n.name: n.op_type for n in nodes}


def ort_node_ms(trace_file, resolve):
    """Median ms per ONNX node over the runs in ORT's trace (the first run dropped)."""
    with open(trace_file) as f:
        events = json.load(f)
    per = {}
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        per.setdefault(e["name"][:-len("_kernel_time")], []).append(e["dur"] / 1000.0)
    out = {}
    for name, durs in per.items():
        tensor = name[:-len("_nchwc")] if name.endswith("_nchwc") else name
        onnx_name = resolve(tensor) or resolve(name) or name
        med = statistics.median(durs[1:] if len(durs) > 1 else durs)
        out[onnx_name] = out.get(onnx_name, 0.0) + med
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--ferry", default="build/bin/ferry")
    p.add_argument("--models", default="build/bench-models")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=40)
    p.add_argument("--top", type=int, default=15)
    args = p.parse_args()
    d = os.path.join(args.models, args.model)
    if not os.path.exists(os.path.join(d, "info.json")):
        print(f"profile_ort: no model '{args.model}' in {args.models} (no info.json; bench/compare_ort.sh exports the "
              f"bench models)", file=sys.stderr)
        return 1
    with open(os.path.join(d, "info.json")) as f:
        info = json.load(f)
    model_path, input_file = os.path.join(d, "model.onnx"), os.path.join(d, f"input_b{args.batch}.npy")
    with tempfile.TemporaryDirectory() as tmp:
        procs = {"ferry": Stepper(ferry_cmd(args, model_path, info["input"], input_file, args.threads, 1,
                                            backends="cpu,ref") +
                                  ["--lockstep", "--profile-summary", "--profile-top", "0"]),
                 "ort": Stepper(ort_cmd(model_path, info["input"], input_file, args.threads, 1) +
                                ["--lockstep", "--profile", os.path.join(tmp, "ort")])}
        lat = alternate(procs, ["ferry", "ort"], args.runs + 1)
        fj, oj = procs["ferry"].finish(), procs["ort"].finish()
        resolve, op_type = heavy_node_of(onnx.load(model_path, load_external_data=False))
        ort_ms = ort_node_ms(oj["profile_file"], resolve)
    ferry_ms = {}
    for n in fj["profile"]["nodes"]:  # the same walk as ORT's: an unfused Mul is charged to what it scales
        name = resolve(n["name"]) or n["name"]
        ferry_ms[name] = ferry_ms.get(name, 0.0) + n["ms"]
    matched = sorted(set(ferry_ms) & set(ort_ms))
    f_p50, o_p50 = statistics.median(lat["ferry"][1:]), statistics.median(lat["ort"][1:])
    print(f"{args.model} batch {args.batch}, {args.threads} thread(s), {args.runs} runs each in lock step: "
          f"p50 Ferry {f_p50:.2f} ms, ORT {o_p50:.2f} ms (ratio {f_p50 / o_p50:.2f}); profiled node time "
          f"Ferry {sum(ferry_ms.values()):.2f} ms, ORT {sum(ort_ms.values()):.2f} ms")
    by_type = {}
    for n in matched:
        t = by_type.setdefault(op_type.get(n, "?"), [0, 0.0, 0.0])
        t[0] += 1
        t[1] += ferry_ms[n]
        t[2] += ort_ms[n]
    print("\nby ONNX op of the matched nodes:")
    print(f"  {'op':<24}{'nodes':>6}{'Ferry ms':>10}{'ORT ms':>10}{'diff':>8}")
    for t, (count, f, o) in sorted(by_type.items(), key=lambda kv: -kv[1][1]):
        print(f"  {t:<24}{count:>6}{f:>10.2f}{o:>10.2f}{f - o:>+8.2f}")
    for side, ms, other in (("Ferry", ferry_ms, ort_ms), ("ORT", ort_ms, ferry_ms)):
        rest = [n for n in ms if n not in other]
        if rest:
            print(f"  unmatched on {side}: {len(rest)} nodes, {sum(ms[n] for n in rest):.2f} ms "
                  f"({', '.join(sorted(rest, key=lambda n: -ms[n])[:4])}{', ...' if len(rest) > 4 else ''})")
    rows = sorted(matched, key=lambda n: ferry_ms[n] - ort_ms[n])
    print(f"\nnodes where Ferry is furthest ahead, then furthest behind ({args.top} each):")
    print(f"  {'Ferry ms':>9}{'ORT ms':>9}{'diff':>8}  node (ONNX op)")
    for n in rows[:args.top] + (rows[-args.top:][::-1] if len(rows) > args.top else []):
        print(f"  {ferry_ms[n]:>9.3f}{ort_ms[n]:>9.3f}{ferry_ms[n] - ort_ms[n]:>+8.3f}  {n} ({op_type.get(n, '?')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
