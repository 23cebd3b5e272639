#!/usr/bin/python3
"""Two Ferry builds (or one build with two sets of `ferry run` options) on one model, in lock step: one
`ferry run --lockstep` process of each per round, asked for one run at a time, A then B, B then A, ... (the turns of
bench/compare_ort.py), so both see the same moment-to-moment load of the machine. Prints each side's p50 and the
median of the per-pair ratios B/A (below 1: B is faster), which stays steady where separate runs of each read
several percent apart. Each process's first run is a discarded warm-up.

    /usr/bin/python3 bench/ab_ferry.py OLD/bin/ferry build/bin/ferry --model resnet50
    /usr/bin/python3 bench/ab_ferry.py build/bin/ferry build/bin/ferry --model resnet50 --b-args "-O 2"

Models as bench/compare_ort.sh exports them: MODELS/NAME/{model.onnx,input_bN.npy,info.json}.
"""
import argparse
import json
import os
import shlex
import statistics
import sys

from compare_ort import Stepper, alternate, ferry_cmd


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", help="ferry binary of side A")
    p.add_argument("b", help="ferry binary of side B")
    p.add_argument("--model", required=True)
    p.add_argument("--models", default="build/bench-models")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=30, help="kept runs per side per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--backends", default="cpu,ref")
    p.add_argument("--a-args", default="", help="more `ferry run` options for side A")
    p.add_argument("--b-args", default="", help="more `ferry run` options for side B")
    args = p.parse_args()
    d = os.path.join(args.models, args.model)
    try:
        with open(os.path.join(d, "info.json")) as f:
            info = json.load(f)
    except OSError as e:
        sys.exit(f"ab_ferry: no model '{args.model}' in {args.models} ({e})")
    model, input_file = os.path.join(d, "model.onnx"), os.path.join(d, f"input_b{args.batch}.npy")

    def cmd(binary, extra):
        run = argparse.Namespace(ferry=binary, backends=args.backends)
        return ferry_cmd(run, model, info["input"], input_file, args.threads, 1) + ["--lockstep"] + shlex.split(extra)

    lat_a, lat_b, ratios = [], [], []
    for r in range(args.rounds):
        order = ["a", "b"] if r % 2 == 0 else ["b", "a"]
        procs = {side: Stepper(cmd(getattr(args, side), getattr(args, side + "_args"))) for side in order}
        lat = alternate(procs, order, args.runs + 1)
        for side in order:
            procs[side].finish()
        lat_a += lat["a"][1:]
        lat_b += lat["b"][1:]
        ratios += [b / a for a, b in zip(lat["a"][1:], lat["b"][1:])]
    print(f"{args.model} b{args.batch} t{args.threads}: A p50 {statistics.median(lat_a):.3f} ms, "
          f"B p50 {statistics.median(lat_b):.3f} ms, paired B/A {statistics.median(ratios):.4f} (n={len(ratios)})")


if __name__ == "__main__":
    main()
