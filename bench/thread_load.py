#!/usr/bin/python3
"""Default thread counts on a busy host: Ferry and ONNX Runtime under a competing CPU load (docs/threads.md).

For each model and each load (0, 1, 2, ... busy processes, each a Python loop that never sleeps), five engines run
the same model on the same input, interleaved run by run in lock step (bench/compare_ort.py's Stepper: one run at
a time, each process's first run a discarded warm-up, a fresh set of processes per round):

    ferry        `ferry run` with the default thread count (all cores, adaptive: docs/threads.md)
    ferry-fixed  all cores, never adapting (`--adapt-threads off`: Ferry's default before the adaptive policy)
    ferry-1      `--threads 1`
    ort          onnxruntime-node with its default intra-op count (intraOpNumThreads 0: the physical cores)
    ort-1        intraOpNumThreads 1

Prints per model a table of p50 and p90 per engine and load, and each engine's p50 over ferry-1's at that load:
the policy's goal is that the default is never much worse than one thread, and as fast as all cores when idle.

    /usr/bin/python3 bench/thread_load.py --ferry build/bin/ferry --models build/bench-models [--only resnet50]
        [--loads 0,1,2] [--rounds 2] [--runs 10] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ort  # noqa: E402  (bench/compare_ort.py: Stepper, ferry_cmd, ort_cmd, input_specs, percentile)

ENGINES = ["ferry", "ferry-fixed", "ferry-1", "ort", "ort-1"]


def engine_cmd(args, engine, model, feeds):
    if engine.startswith("ferry"):
        threads = 1 if engine == "ferry-1" else 0
        extra = "--adapt-threads off" if engine == "ferry-fixed" else ""
        return compare_ort.ferry_cmd(args, model, feeds, None, threads, 1, extra=extra) + ["--lockstep"]
    return compare_ort.ort_cmd(model, feeds, None, 1 if engine == "ort-1" else 0, 1) + ["--lockstep"]


def start_load(n):
    return [subprocess.Popen(["/usr/bin/python3", "-c", "while True: pass"]) for _ in range(n)]


def stop_load(hogs):
    for h in hogs:
        h.kill()
        h.wait()


def measure(args, name, load):
    d = os.path.join(args.models, name)
    with open(os.path.join(d, "info.json")) as f:
        info = json.load(f)
    model, feeds = os.path.join(d, "model.onnx"), compare_ort.input_specs(info, d, 1)
    lat = {e: [] for e in ENGINES}
    single = {e: 0 for e in ENGINES}  # Ferry's runs that the policy ran on one thread
    for r in range(args.rounds):
        order = ENGINES if r % 2 == 0 else ENGINES[::-1]
        procs = {e: compare_ort.Stepper(engine_cmd(args, e, model, feeds)) for e in order}
        hogs = start_load(load)
        try:
            run = compare_ort.alternate(procs, order, args.runs + 1)
        finally:
            stop_load(hogs)
        for e in order:
            result = procs[e].finish()
            lat[e] += run[e][1:]
            if e == "ferry":
                single[e] += sum(1 for t in result.get("threads_used", [])[1:] if t == 1)
    row = {"model": name, "load": load, "runs": len(lat["ferry"]), "ferry_single_thread_runs": single["ferry"]}
    for e in ENGINES:
        row[e] = {"p50": statistics.median(lat[e]), "p90": compare_ort.percentile(lat[e], 0.9)}
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ferry", default="build/bin/ferry")
    p.add_argument("--models", default="build/bench-models")
    p.add_argument("--only", default="resnet50")
    p.add_argument("--loads", default="0,1,2", help="busy processes to run alongside, comma-separated")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--backends", default="cpu,ref")
    p.add_argument("--json", default="")
    args = p.parse_args()
    rows = []
    for name in [n for n in args.only.split(",") if n]:
        for load in [int(x) for x in args.loads.split(",")]:
            row = measure(args, name, load)
            rows.append(row)
            print(f"[thread_load] {name} load {load}: " +
                  ", ".join(f"{e} {row[e]['p50']:.1f}" for e in ENGINES), file=sys.stderr, flush=True)
    print(f"host: {os.cpu_count()} CPUs; p50 / p90 ms, and (p50 over ferry-1's at the same load)")
    print("| model | busy processes | " + " | ".join(ENGINES) + " | Ferry runs on 1 thread |")
    print("|---|---:|" + "---:|" * len(ENGINES) + "---:|")
    for r in rows:
        base = r["ferry-1"]["p50"]
        cells = [f"{r[e]['p50']:.1f} / {r[e]['p90']:.1f} ({r[e]['p50'] / base:.2f})" for e in ENGINES]
        print(f"| {r['model']} | {r['load']} | " + " | ".join(cells) +
              f" | {r['ferry_single_thread_runs']} of {r['runs']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
