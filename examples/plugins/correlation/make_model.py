#!/usr/bin/python3
"""Writes a small model that uses the example plugin's com.ferry.examples::Correlation, with inputs and the
expected output, into the directory given as argv[1]:

  correlation.onnx   x1, x2: float32 [1, 8, 12, 16]; y = Correlation(Relu(x1), x2, max_displacement=4, stride=2)
  x1.npy, x2.npy     seeded random normal float32
  y_expected.npy     float32 [1, 25, 12, 16], from the plain numpy reference below (independent of the C code)

Needs onnx and numpy. Usage: make_model.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

SHAPE = [1, 8, 12, 16]
MAX_DISPLACEMENT = 4
STRIDE = 2


def correlation_reference(x1, x2, max_displacement, stride):
    """y[n, i*D + j, h, w] = 1/C * sum_c x1[n,c,h,w] * x2[n,c,h+dy,w+dx], zero outside the image."""
    n, c, h, w = x1.shape
    r = max_displacement // stride
    d = 2 * r + 1
    a = x1.astype(np.float64)
    b = x2.astype(np.float64)
    y = np.zeros((n, d * d, h, w), dtype=np.float64)
    for i in range(d):
        dy = (i - r) * stride
        for j in range(d):
            dx = (j - r) * stride
            for hh in range(h):
                for ww in range(w):
                    y2, x2_ = hh + dy, ww + dx
                    if 0 <= y2 < h and 0 <= x2_ < w:
                        y[:, i * d + j, hh, ww] = (a[:, :, hh, ww] * b[:, :, y2, x2_]).sum(axis=1) / c
    return y.astype(np.float32)


def make_model():
    relu = helper.make_node("Relu", ["x1"], ["x1_relu"], name="relu")
    corr = helper.make_node("Correlation", ["x1_relu", "x2"], ["y"], name="correlation",
                            domain="com.ferry.examples", max_displacement=MAX_DISPLACEMENT, stride=STRIDE)
    d = 2 * (MAX_DISPLACEMENT // STRIDE) + 1
    graph = helper.make_graph(
        [relu, corr], "correlation",
        [helper.make_tensor_value_info("x1", TensorProto.FLOAT, SHAPE),
         helper.make_tensor_value_info("x2", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [SHAPE[0], d * d, SHAPE[2], SHAPE[3]])])
    model = helper.make_model(graph, producer_name="ferry-examples",
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("com.ferry.examples", 1)])
    model.ir_version = 8
    # No onnx.checker here: onnx 1.12's checker rejects the unregistered domain com.ferry.examples.
    return model


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_model.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240601)
    x1 = rng.standard_normal(SHAPE).astype(np.float32)
    x2 = rng.standard_normal(SHAPE).astype(np.float32)
    y = correlation_reference(np.maximum(x1, 0), x2, MAX_DISPLACEMENT, STRIDE)
    onnx.save(make_model(), os.path.join(out, "correlation.onnx"))
    np.save(os.path.join(out, "x1.npy"), x1)
    np.save(os.path.join(out, "x2.npy"), x2)
    np.save(os.path.join(out, "y_expected.npy"), y)
    print(f"wrote correlation.onnx, x1.npy, x2.npy, y_expected.npy ({list(y.shape)}) to {out}")


if __name__ == "__main__":
    main()
