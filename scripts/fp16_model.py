#!/usr/bin/python3
"""Writes a float16 copy of an ONNX model: every float32 initializer, graph input/output, value_info, Constant /
ConstantOfShape value and Cast-to-float32 becomes float16, so the whole graph computes in float16 (the GPU
benchmarks of scripts/device_check.sh). Attributes that are plain floats (epsilon, alpha) stay as they are.

    /usr/bin/python3 scripts/fp16_model.py IN.onnx OUT.onnx

Needs Debian's python3-onnx and python3-numpy.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def half_tensor(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    arr = numpy_helper.to_array(t).astype(np.float16)
    out = numpy_helper.from_array(arr, t.name)
    return out


def half_type(vi):
    tt = vi.type.tensor_type
    if tt.elem_type == TensorProto.FLOAT:
        tt.elem_type = TensorProto.FLOAT16


def convert_graph(g):
    for i, t in enumerate(g.initializer):
        g.initializer[i].CopyFrom(half_tensor(t))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        half_type(vi)
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(half_tensor(a.t))
            elif a.type == onnx.AttributeProto.GRAPH:
                convert_graph(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    convert_graph(sub)
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    model = onnx.load(sys.argv[1])
    convert_graph(model.graph)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
