#!/usr/bin/python3
"""Writes the model docs/check.md's example checks: Conv -> Relu -> Cast(bfloat16) -> Softmax, a com.example::Decode
node no backend knows, and a Relu carrying an attribute Relu does not have (two unsupported nodes, at the graph
layer). Built with onnx.helper; run with /usr/bin/python3 (Debian's python3-onnx and python3-numpy).

    /usr/bin/python3 examples/check/make_example.py [OUT.onnx]      # default /tmp/example.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/example.onnx"
    w = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w")
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], "conv", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"], "relu"),
             h.make_node("Cast", ["r"], ["b"], "cast", to=T.BFLOAT16),
             h.make_node("Softmax", ["b"], ["s"], "softmax"),
             h.make_node("Decode", ["r"], ["d"], "decode", domain="com.example"),
             h.make_node("Relu", ["r"], ["y"], "relu_bad", alpha=0.1)]
    outputs = [h.make_tensor_value_info(name, dtype, None)
               for name, dtype in [("s", T.BFLOAT16), ("d", T.FLOAT), ("y", T.FLOAT)]]
    graph = h.make_graph(nodes, "example", [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, 8, 8])], outputs, [w])
    model = h.make_model(graph, producer_name="example", ir_version=8,
                         opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.example", 1)])
    onnx.save(model, out)
    print("wrote", out)


if __name__ == "__main__":
    main()
