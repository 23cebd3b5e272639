#!/usr/bin/python3
"""The files ONNX Runtime itself writes, run on Ferry: for each model directory, ONNX Runtime (onnxruntime-node,
bench/ort) optimizes the model at each graph optimization level and saves the result (`optimizedModelFilePath`,
what `optimized_model_filepath` does in its Python API; level `all` writes com.microsoft.nchwc layouts for this
machine's block size), then both runtimes run the written file on the same inputs and the outputs are compared.
Ferry also reports the op types it placed on `ref` (the slow oracle) in each file. Where a file's outputs differ,
Ferry and ONNX Runtime are also compared on the original model: a file that differs no more than twice as much as
the original does (models with random weights whose detection scores sit at NMS thresholds, deep nets drifting
past 1e-3) counts as matching, reported with both figures.

    /usr/bin/python3 bench/ort_written.py --models build/test-models [--models /tmp/zoo-models] \\
        [--levels basic,extended,all] [--only resnet50,bert_encoder] [--backends cpu,ref] [--json F] [--keep DIR]
        [--bench [--rounds 3 --runs 10]]

A model directory holds model.onnx and its inputs, named by manifest.json (scripts/gen_test_models.py: inputs,
and the model's tolerance) or info.json (bench/gen_bench_models.py, bench/zoo.py). Outputs match when every
element satisfies |ferry - ort| <= atol + rtol * |ort| (the manifest's tolerance, else --rtol / --atol, with atol
scaled by the output's largest magnitude). Exit status: 0 when every file runs and matches, 1 otherwise, 77 when
onnxruntime-node is not installed (ctest then reports the test as skipped).

--bench also times each file that matched, batch 1, 1 thread: Ferry and ONNX Runtime on the written file and Ferry
on the original model, run interleaved in lock step (bench/compare_ort.py's machinery: --rounds rounds of --runs
runs each, the first run of a round dropped); the medians and the ratios Ferry / ORT and Ferry on the written
file / Ferry on the original.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORT_RUN = os.path.join(HERE, "ort", "ort_run.js")


def ort_installed():
    return os.path.isdir(os.path.join(HERE, "ort", "node_modules", "onnxruntime-node"))


def model_inputs(d):
    """(feeds: name -> array, tolerance or None) of the model in directory d."""
    for name in ("manifest.json", "info.json"):
        path = os.path.join(d, name)
        if os.path.exists(path):
            with open(path) as f:
                info = json.load(f)
            break
    else:
        return None, None
    specs = info.get("inputs")
    if not specs and "input" in info:  # bench/gen_bench_models.py: one input, input_b1.npy
        specs = [{"name": info["input"], "file": "input_b1.npy"}]
    feeds = {}
    for s in specs or []:
        f = os.path.join(d, s["file"])
        if not os.path.exists(f):
            return None, None
        feeds[s["name"]] = np.load(f)
    return feeds, info.get("tolerance")


def run_ort(model, feeds, level, out_dir, write=None):
    """Runs `model` once in ONNX Runtime (1 thread) at `level`; writes the optimized graph to `write` if given.
    Returns the outputs by name."""
    os.makedirs(out_dir, exist_ok=True)
    args = ["node", ORT_RUN, model, "--repeat", "1", "--threads", "1", "--graph-optimization", level,
            "--save-dir", out_dir]
    if write:
        args += ["--write-optimized", write]
    for i, (name, arr) in enumerate(feeds.items()):
        f = os.path.join(out_dir, "input_%d.npy" % i)
        np.save(f, arr)
        args += ["--input", "%s=%s" % (name, f)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        lines = [ln for ln in p.stderr.strip().splitlines() if "[W:onnxruntime" not in ln]  # its warnings
        raise RuntimeError("ONNX Runtime: " + "\n".join(lines)[-1500:])
    names = json.loads(p.stdout.strip().splitlines()[-1])["outputs"].keys()
    return {n: np.load(os.path.join(out_dir, n.replace("/", "_").replace("\\", "_").replace(":", "_") + ".npy"))
            for n in names}


def run_ferry(model, feeds, backends):
    """(outputs by name, op types placed on ref with their counts) of `model` on Ferry."""
    import ferry
    sess = ferry.InferenceSession(model, providers=backends)
    names = [o.name for o in sess.get_outputs()]
    outs = dict(zip(names, sess.run(None, feeds)))
    on_ref = {}
    if "ref" in backends and backends[0] != "ref":
        for n in sess.placement()["nodes"]:
            if n["backend"] == "ref":
                key = (n["domain"] + "::" if n["domain"] else "") + n["op"]
                on_ref[key] = on_ref.get(key, 0) + 1
    return outs, on_ref


def compare(got, want, rtol, atol):
    """'' when the outputs match, else what differs."""
    problems = []
    for name, w in want.items():
        if name not in got:
            problems.append("output %s missing" % name)
            continue
        g = np.asarray(got[name])
        if g.shape != w.shape or g.dtype != w.dtype:
            problems.append("output %s: %s %s, ONNX Runtime %s %s" % (name, g.dtype, g.shape, w.dtype, w.shape))
            continue
        if w.dtype.kind not in "fc":
            if not np.array_equal(g, w):
                problems.append("output %s: %d of %d elements differ" % (name, int((g != w).sum()), w.size))
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        scale = float(np.max(np.abs(w64[np.isfinite(w64)]), initial=0.0)) if w.size else 0.0
        tol = atol * max(1.0, scale) + rtol * np.abs(w64)
        bad = ~(np.abs(g64 - w64) <= tol) & ~(np.isnan(g64) & np.isnan(w64)) & ~(g64 == w64)
        if bad.any():
            i = np.unravel_index(int(np.argmax(bad)), bad.shape)
            problems.append("output %s: %d of %d elements outside atol %g rtol %g, e.g. at %s ferry %r ort %r" %
                            (name, int(bad.sum()), w.size, atol, rtol, tuple(int(k) for k in i), g64[i], w64[i]))
    return "; ".join(problems)


def bench_file(written, original, feeds, ferry_bin, backends, rounds, runs, tmp):
    """Median latencies (ms) of Ferry and ORT on `written` and of Ferry on `original`, interleaved."""
    import statistics
    from types import SimpleNamespace
    sys.path.insert(0, HERE)
    from compare_ort import Stepper, alternate, ferry_cmd, ort_cmd
    pairs = []
    for i, (name, arr) in enumerate(feeds.items()):
        f = os.path.join(tmp, "bench_input_%d.npy" % i)
        np.save(f, arr)
        pairs.append((name, f))
    a = SimpleNamespace(ferry=ferry_bin, backends=",".join(backends))
    cmds = {"ferry": ferry_cmd(a, written, pairs, None, 1, 1) + ["--lockstep"],
            "ort": ort_cmd(written, pairs, None, 1, 1) + ["--lockstep"],
            "ferry_original": ferry_cmd(a, original, pairs, None, 1, 1) + ["--lockstep"]}
    lat = {k: [] for k in cmds}
    for r in range(rounds):
        order = list(cmds) if r % 2 == 0 else list(cmds)[::-1]
        procs = {k: Stepper(cmds[k]) for k in order}
        got = alternate(procs, order, runs + 1)
        for k in order:
            procs[k].finish()
            lat[k] += got[k][1:]
    med = {k: statistics.median(v) for k, v in lat.items()}
    return {"ferry_ms": med["ferry"], "ort_ms": med["ort"], "ferry_original_ms": med["ferry_original"],
            "vs_ort": med["ferry"] / med["ort"], "vs_original": med["ferry"] / med["ferry_original"]}


def max_rel(got, want):
    """The largest |ferry - ort| / max |ort| over the outputs; inf when a shape or an output differs."""
    worst = 0.0
    for name, w in want.items():
        g = got.get(name)
        if g is None or np.asarray(g).shape != w.shape:
            return float("inf")
        if w.size == 0:
            continue
        g64, w64 = np.asarray(g).astype(np.float64), w.astype(np.float64)
        worst = max(worst, float(np.abs(g64 - w64).max()) / max(float(np.abs(w64).max()), 1e-6))
    return worst


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", action="append", required=True, help="a directory of model directories")
    p.add_argument("--levels", default="basic,extended,all")
    p.add_argument("--only", default="")
    p.add_argument("--skip", default="", help="model names to leave out")
    p.add_argument("--backends", default="cpu,ref")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--json", default="")
    p.add_argument("--keep", default="", help="keep the files ONNX Runtime wrote in this directory")
    p.add_argument("--bench", action="store_true", help="also time each matching file (see above)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--ferry", default="", help="the ferry CLI for --bench (default: BUILD/bin/ferry)")
    args = p.parse_args()
    if not ort_installed():
        print("ort_written: onnxruntime-node is not installed in bench/ort (scripts/install_ort.sh); skipped")
        return 77
    build = os.environ.get("FERRY_BUILD_DIR", os.path.join(ROOT, "build"))
    sys.path.insert(0, os.path.join(build, "python"))
    backends = [b for b in args.backends.split(",") if b]
    only = {n for n in args.only.split(",") if n}
    skip = {n for n in args.skip.split(",") if n}
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    rows, failed, baselines = [], 0, {}
    for models in args.models:
        for name in sorted(os.listdir(models)):
            d = os.path.join(models, name)
            if (only and name not in only) or name in skip or not os.path.exists(os.path.join(d, "model.onnx")):
                continue
            feeds, tolerance = model_inputs(d)
            if feeds is None:
                continue
            rtol = (tolerance or {}).get("rtol", args.rtol)
            atol = (tolerance or {}).get("atol", args.atol)
            for level in [lv for lv in args.levels.split(",") if lv]:
                row = {"model": name, "models": models, "level": level, "ok": False}
                t0 = time.time()
                with tempfile.TemporaryDirectory() as tmp:
                    out_dir = args.keep or tmp
                    written = os.path.join(out_dir, "%s_%s.onnx" % (name, level))
                    try:
                        run_ort(os.path.join(d, "model.onnx"), feeds, level, os.path.join(tmp, "w"), write=written)
                        want = run_ort(written, feeds, "disabled", os.path.join(tmp, "ort"))
                        got, on_ref = run_ferry(written, feeds, backends)
                        row["on_ref"] = on_ref
                        row["problem"] = compare(got, want, rtol, atol)
                        row["ok"] = not row["problem"]
                        if not row["ok"]:
                            # Does Ferry differ from ONNX Runtime as much on the original model? (Random weights
                            # put detection scores near NMS thresholds, and deep nets drift past 1e-3.)
                            if name not in baselines:
                                base_want = run_ort(os.path.join(d, "model.onnx"), feeds, "disabled",
                                                    os.path.join(tmp, "base"))
                                base_got, _ = run_ferry(os.path.join(d, "model.onnx"), feeds, backends)
                                baselines[name] = max_rel(base_got, base_want) if compare(
                                    base_got, base_want, rtol, atol) else 0.0
                            row["max_rel"], row["original_max_rel"] = max_rel(got, want), baselines[name]
                            if baselines[name] > 0 and (row["max_rel"] <= 2 * baselines[name] or
                                                        baselines[name] == float("inf")):
                                row["ok"] = True
                                row["as_original"] = True
                                row["problem"] = ("differs from ONNX Runtime as on the original model: max rel. "
                                                  "%.1e, on the original %.1e" % (row["max_rel"], baselines[name]))
                        if row["ok"] and args.bench:
                            row.update(bench_file(written, os.path.join(d, "model.onnx"), feeds,
                                                  args.ferry or os.path.join(build, "bin", "ferry"), backends,
                                                  args.rounds, args.runs, tmp))
                    except Exception as e:  # noqa: BLE001 - reported per file, the rest still run
                        row["problem"] = "\n    ".join(str(e).strip().splitlines()[:4])[:900] or repr(e)
                row["seconds"] = round(time.time() - t0, 1)
                failed += not row["ok"]
                rows.append(row)
                ref = ", ".join("%s x%d" % kv for kv in sorted(row.get("on_ref", {}).items())) or "-"
                timing = ""
                if "ferry_ms" in row:
                    timing = " | ferry %.2f ms, ort %.2f ms (%.2fx), ferry on the original %.2f ms (%.2fx)" % (
                        row["ferry_ms"], row["ort_ms"], row["vs_ort"], row["ferry_original_ms"], row["vs_original"])
                print("[ort_written] %-28s %-8s %-4s on ref: %s%s%s" %
                      (name, level, "ok" if row["ok"] else "FAIL", ref, timing,
                       "\n    " + row["problem"] if row.get("problem") else ""), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print("[ort_written] %d of %d files run on Ferry and match ONNX Runtime" % (len(rows) - failed, len(rows)))
    timed = [r for r in rows if "vs_ort" in r]
    if timed:
        geo = lambda xs: float(np.exp(np.mean(np.log(xs))))  # noqa: E731
        print("[ort_written] geomean Ferry / ORT on the written files %.3f; Ferry on the written file / on the "
              "original %.3f (%d files)" % (geo([r["vs_ort"] for r in timed]), geo([r["vs_original"] for r in timed]),
                                            len(timed)))
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
