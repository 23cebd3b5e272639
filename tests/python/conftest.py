"""Fixtures of the Python package's tests: small ONNX models written with the onnx package into a temporary
directory, and the path of the ferry CLI (the C++ results the tests compare against)."""
import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("FERRY_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))

OPSET = [helper.make_opsetid("", 17)]


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return str(path)


def add_model(dtype=TensorProto.FLOAT, op="Add"):
    """Z = op(X, Y) with X, Y of `dtype` and shape [batch, 3]; metadata set."""
    x = helper.make_tensor_value_info("X", dtype, ["batch", 3])
    y = helper.make_tensor_value_info("Y", dtype, ["batch", 3])
    z = helper.make_tensor_value_info("Z", dtype, ["batch", 3])
    graph = helper.make_graph([helper.make_node(op, ["X", "Y"], ["Z"], name="the_op")], "add_graph", [x, y], [z],
                              doc_string="adds two tensors")
    m = helper.make_model(graph, opset_imports=OPSET, producer_name="ferry-tests", producer_version="1.2",
                          domain="ai.ferry.tests", model_version=7, doc_string="a test model")
    helper.set_model_props(m, {"author": "tests", "purpose": "metadata"})
    return m


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    out = {"add": save(add_model(), d / "add.onnx")}
    # Two outputs; the second is a constant (an initializer), which the caller must not be able to change.
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 2])
    c = numpy_helper.from_array(np.array([[1, 2], [3, 4]], np.float32), "C")
    graph = helper.make_graph(
        [helper.make_node("Neg", ["X"], ["N"]), helper.make_node("Identity", ["C"], ["K"])], "g", [x],
        [helper.make_tensor_value_info("N", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("K", TensorProto.FLOAT, [2, 2])], [c])
    out["const_out"] = save(helper.make_model(graph, opset_imports=OPSET), d / "const_out.onnx")
    # An overridable initializer: B is a graph input with a default.
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [3])
    b = helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])
    graph = helper.make_graph([helper.make_node("Add", ["X", "B"], ["Y"])], "g", [x, b],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3])],
                              [numpy_helper.from_array(np.array([10, 20, 30], np.float32), "B")])
    out["overridable"] = save(helper.make_model(graph, opset_imports=OPSET), d / "overridable.onnx")
    # Sequences: S = [X, Y]; L = SequenceLength(S); and a sequence input: T = SequenceAt(Q, 0).
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])
    q = helper.make_tensor_sequence_value_info("Q", TensorProto.FLOAT, [None])
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["X", "Y"], ["S"]), helper.make_node("SequenceLength", ["S"], ["L"]),
         helper.make_node("SequenceAt", ["Q", "zero"], ["T"])], "g", [x, y, q],
        [helper.make_tensor_sequence_value_info("S", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("L", TensorProto.INT64, []),
         helper.make_tensor_value_info("T", TensorProto.FLOAT, [None])], [zero])
    out["sequence"] = save(helper.make_model(graph, opset_imports=OPSET), d / "sequence.onnx")
    # An optional input: H = OptionalHasElement(O).
    o = helper.make_value_info("O", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT,
                                                                                                   [2])))
    graph = helper.make_graph([helper.make_node("OptionalHasElement", ["O"], ["H"])], "g", [o],
                              [helper.make_tensor_value_info("H", TensorProto.BOOL, [])])
    out["optional"] = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
                           d / "optional.onnx")
    # Strings: Y = Identity(X).
    x = helper.make_tensor_value_info("X", TensorProto.STRING, [None])
    graph = helper.make_graph([helper.make_node("Identity", ["X"], ["Y"])], "g", [x],
                              [helper.make_tensor_value_info("Y", TensorProto.STRING, [None])])
    out["string"] = save(helper.make_model(graph, opset_imports=OPSET), d / "string.onnx")
    # A convolution with a Relu (fused at level 2 and up) for the optimization levels and the tools.
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W")
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, 8, 8])
    graph = helper.make_graph([helper.make_node("Conv", ["X", "W"], ["C"], name="conv", pads=[1, 1, 1, 1]),
                               helper.make_node("Relu", ["C"], ["Y"], name="relu")], "g", [x],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 4, 8, 8])], [w])
    out["conv"] = save(helper.make_model(graph, opset_imports=OPSET), d / "conv.onnx")
    for name, dtype in [("float16", TensorProto.FLOAT16), ("float64", TensorProto.DOUBLE), ("int8", TensorProto.INT8),
                        ("uint8", TensorProto.UINT8), ("int32", TensorProto.INT32), ("int64", TensorProto.INT64)]:
        out["add_" + name] = save(add_model(dtype), d / ("add_%s.onnx" % name))
    out["and_bool"] = save(add_model(TensorProto.BOOL, "And"), d / "and_bool.onnx")
    return out


@pytest.fixture(scope="session")
def ferry_cli():
    path = os.path.join(BUILD, "bin", "ferry")
    if not os.path.exists(path):
        pytest.skip("no ferry CLI at %s" % path)
    return path


@pytest.fixture(scope="session")
def quickstart_model():
    return os.path.join(ROOT, "models", "quickstart_cnn.onnx")
