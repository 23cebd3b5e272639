#!/usr/bin/python3
"""The Python API's cost (docs/python.md, "Performance"): per-call overhead of ferry.InferenceSession.run on a
tiny model against the C++ Session::RunValues in the same process (the inputs converted once, the GIL released),
and the throughput of 4 Python threads running one session against 1 thread.

    /usr/bin/python3 bench/python_overhead.py [--build build] [--calls 20000] [--rounds 5]

Rounds interleave the Python loop and the C++ loop; medians are printed. The tiny model is Z = X + Y on 1x3
floats (written with the onnx package into a temporary directory); the threading model is the quickstart CNN
(models/quickstart_cnn.onnx) at 1 intra-op thread per run.
"""
import argparse
import os
import statistics
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_model(path):
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 3])
    z = helper.make_tensor_value_info("Z", TensorProto.FLOAT, [1, 3])
    g = helper.make_graph([helper.make_node("Add", ["X", "Y"], ["Z"])], "tiny", [x, y], [z])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--thread-runs", type=int, default=400)
    args = p.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import ferry

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tiny.onnx")
        tiny_model(path)
        so = ferry.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ferry.InferenceSession(path, so)
        feed = {"X": np.ones((1, 3), np.float32), "Y": np.ones((1, 3), np.float32)}
        for _ in range(1000):
            sess.run(None, feed)
        py_us, cpp_us = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for _ in range(args.calls):
                sess.run(None, feed)
            py_us.append((time.perf_counter() - t0) / args.calls * 1e6)
            cpp_us.append(sess._session.time_native_runs(feed, args.calls) / args.calls * 1e6)
        py, cpp = statistics.median(py_us), statistics.median(cpp_us)
        print("tiny model (Add, 1x3 float32), %d calls x %d rounds, 1 thread:" % (args.calls, args.rounds))
        print("  InferenceSession.run  %.2f us per call" % py)
        print("  C++ Session::RunValues %.2f us per call" % cpp)
        print("  Python overhead        %.2f us per call" % (py - cpp))

    model = os.path.join(ROOT, "models", "quickstart_cnn.onnx")
    sess = ferry.InferenceSession(model, so)
    x = np.load(os.path.join(ROOT, "models", "quickstart_cnn_input.npy"))
    for _ in range(50):
        sess.run(None, {"input": x})

    def throughput(threads):
        per = args.thread_runs // threads

        def work():
            for _ in range(per):
                sess.run(None, {"input": x})

        ts = [threading.Thread(target=work) for _ in range(threads)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return per * threads / (time.perf_counter() - t0)

    one, four = [], []
    for _ in range(args.rounds):
        one.append(throughput(1))
        four.append(throughput(4))
    a, b = statistics.median(one), statistics.median(four)
    print("quickstart CNN, 1 intra-op thread per run, %d runs x %d rounds (host: %d CPUs):"
          % (args.thread_runs, args.rounds, os.cpu_count()))
    print("  1 Python thread   %.0f runs/s" % a)
    print("  4 Python threads  %.0f runs/s (%.2fx)" % (b, b / a))


if __name__ == "__main__":
    main()
