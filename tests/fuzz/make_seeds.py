#!/usr/bin/python3
"""Writes the hand-made seeds of the fuzz corpora, tests/fuzz/corpus/<target>/seed_*.

Run with /usr/bin/python3 (onnx, numpy, protobuf). The files are committed: ctest replays them with every test
run, and scripts/fuzz.sh starts each libFuzzer run from them plus the ONNX node test models and data of
../shared/onnx-tests. Seeds name the files of the fuzz targets' scratch directory (tests/fuzz/fuzz_util.h):
weights.bin (64 KiB), sub/weights.bin, fifo, outside (-> /etc/passwd), zero (-> /dev/zero), dir/.

    /usr/bin/python3 tests/fuzz/make_seeds.py    # rewrites the seed_* files, leaves every other file alone
"""
import io
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed_" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def model(nodes, inputs, outputs, inits=(), opset=17, functions=(), sparse=(), value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits), sparse_initializer=list(sparse),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], functions=list(functions))
    m.ir_version = 8
    return m.SerializeToString()


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def external(name, dims, offset, length, location="weights.bin", dtype=TensorProto.FLOAT):
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def models():
    f = TensorProto.FLOAT
    seeds = {}
    x, y = vi("x", f, [1, 4]), vi("y", f, [1, 4])
    w = numpy_helper.from_array(np.arange(4, dtype=np.float32).reshape(1, 4), "w")
    seeds["add"] = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [x], [y], [w])
    seeds["relu_symbolic"] = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                   [vi("x", f, ["batch", 4])], [vi("y", f, ["batch", 4])])
    seeds["external"] = model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                              [x], [y], [external("w", [4, 4], 128, 64)])
    seeds["external_sub"] = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                                  [x], [y], [external("w", [1, 4], 0, 16, "sub/weights.bin")])
    seeds["external_fifo"] = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                                   [x], [y], [external("w", [1, 4], 0, 16, "fifo")])
    seeds["external_outside"] = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                                      [x], [y], [external("w", [1, 4], 0, 16, "outside")])
    seeds["external_zero"] = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                                   [x], [y], [external("w", [1, 4], 0, 16, "zero")])
    big = external("w", [2048, 2048], 0, 2048 * 2048 * 4)  # longer than weights.bin
    seeds["external_short"] = model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                                    [vi("x", f, [1, 2048])], [vi("y", f, [1, 2048])], [big])
    # Faults of issue 22: a node consuming its own output, declared output types the graph does not produce,
    # opsets Ferry does not know.
    seeds["self_loop_concat"] = model([helper.make_node("Concat", ["y", "x"], ["y"], name="loop", axis=0)],
                                      [x], [y])
    seeds["self_loop_size"] = model([helper.make_node("Size", ["y"], ["y"], name="size")], [],
                                    [vi("y", TensorProto.INT64, [])])
    seeds["output_type_bad"] = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [x],
                                     [vi("y", 1000, [1, 4])])
    seeds["output_type_other"] = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [x],
                                       [vi("y", TensorProto.INT32, [1, 4])])
    seeds["opset_huge_shape"] = model([helper.make_node("Shape", ["x"], ["y"], name="shape")], [x],
                                      [vi("y", TensorProto.INT64, [2])], opset=1000000)
    sp = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.5, 2.5], dtype=np.float32), "v"),
                                   numpy_helper.from_array(np.array([1, 3], dtype=np.int64), "i"), [1, 4])
    sp.values.name = "s"
    seeds["sparse"] = model([helper.make_node("Add", ["x", "s"], ["y"], name="add")], [x], [y], sparse=[sp])
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", f, [1, 4])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", f, [1, 4])])
    seeds["if"] = model([helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                         helper.make_node("Greater", ["s", "zero"], ["c"]),
                         helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                        [x], [y], [numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")])
    body = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["acc_out"]),
                              helper.make_node("Identity", ["cond"], ["cond_out"])], "body",
                             [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", f, [1, 4])],
                             [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", f, [1, 4])])
    seeds["loop"] = model([helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)], [x], [y],
                          [numpy_helper.from_array(np.array(3, dtype=np.int64), "n")])
    fn = helper.make_function("local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    m = onnx.helper.make_model(
        helper.make_graph([helper.make_node("Twice", ["x"], ["y"], domain="local")], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)], functions=[fn])
    m.ir_version = 8
    seeds["function"] = m.SerializeToString()
    seeds["seq"] = model([helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
                          helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                         [x], [vi("y", f, [2, 4])])
    conv_w = numpy_helper.from_array(np.ones((2, 1, 3, 3), dtype=np.float32), "cw")
    seeds["conv"] = model([helper.make_node("Conv", ["img", "cw"], ["c"], pads=[1, 1, 1, 1]),
                           helper.make_node("Relu", ["c"], ["r"]),
                           helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                          [vi("img", f, [1, 1, 4, 4])], [vi("y", f, [1, 2, 2, 2])], [conv_w])
    seeds["gather_cast"] = model([helper.make_node("Gather", ["data", "idx"], ["g"], axis=0),
                                  helper.make_node("Cast", ["g"], ["y"], to=TensorProto.FLOAT16)],
                                 [vi("idx", TensorProto.INT64, [3])], [vi("y", TensorProto.FLOAT16, [3, 2])],
                                 [numpy_helper.from_array(np.arange(200, dtype=np.float32).reshape(100, 2), "data")])
    seeds["resize"] = model([helper.make_node("Resize", ["x4", "", "scales"], ["y"], mode="nearest")],
                            [vi("x4", f, [1, 1, 2, 2]), vi("scales", f, [4])], [vi("y", f, None)], opset=13)
    return seeds


def npy_seeds():
    seeds = {}
    for name, a in (("f32", np.arange(6, dtype=np.float32).reshape(2, 3)),
                    ("f16", np.array([1, -2, np.inf], dtype=np.float16)),
                    ("i64_scalar", np.array(7, dtype=np.int64)),
                    ("u8_empty", np.zeros((0, 3), dtype=np.uint8)),
                    ("bool", np.array([True, False])),
                    ("f64_fortran", np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))),
                    ("big_endian", np.arange(4, dtype=">i4")),
                    ("unicode", np.array(["ab", "c"]))):
        buf = io.BytesIO()
        np.save(buf, a)
        seeds[name] = buf.getvalue()
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.arange(3, dtype=np.int32), version=(2, 0))
    seeds["v2"] = buf.getvalue()
    return seeds


def tensor_proto_seeds():
    seeds = {}
    seeds["raw_f32"] = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "t").SerializeToString()
    seeds["int32_data"] = helper.make_tensor("t", TensorProto.INT32, [3], [1, 2, 3]).SerializeToString()
    seeds["string"] = helper.make_tensor("t", TensorProto.STRING, [2], [b"ab", b"\xff"]).SerializeToString()
    # int4 (22) and float8e4m3fn (17) by number: Debian's onnx predates the names.
    seeds["int4"] = TensorProto(name="t", data_type=22, dims=[3], raw_data=bytes([0xE1, 0x07])).SerializeToString()
    seeds["float8"] = TensorProto(name="t", data_type=17, dims=[2], raw_data=bytes([0x38, 0xC4])).SerializeToString()
    seeds["bf16"] = helper.make_tensor("t", TensorProto.BFLOAT16, [2], [1.0, 2.0]).SerializeToString()
    seeds["external"] = external("t", [4], 8, 16).SerializeToString()
    seeds["external_fifo"] = external("t", [4], 0, 16, "fifo").SerializeToString()
    seeds["sequence"] = onnx.helper.make_sequence(
        "s", onnx.SequenceProto.TENSOR,
        [numpy_helper.from_array(np.ones(2, dtype=np.float32))]).SerializeToString()
    seeds["optional"] = onnx.helper.make_optional(
        "o", onnx.OptionalProto.TENSOR, numpy_helper.from_array(np.ones(2, dtype=np.int64))).SerializeToString()
    return seeds


def kserve_json_seeds():
    x = '{"name": "x", "datatype": "FP32", "shape": [2, 4], "data": [[1, 2, 3, 4], [5, 6, 7, 8]]}'
    ids = '{"name": "ids", "datatype": "INT64", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]}'
    text = '{"name": "text", "datatype": "BYTES", "shape": [2, 1], "data": ["a", "bc"]}'
    mask = '{"name": "mask", "datatype": "BOOL", "shape": [2, 2], "data": [true, false, true, true]}'
    half = '{"name": "half", "datatype": "FP16", "shape": [2, 2, 2], "data": [1, 2, 3, 4, 5, 6, 7, 8]}'
    return {
        "all": '{"id": "r1", "inputs": [%s, %s, %s, %s, %s], "outputs": [{"name": "y"}, {"name": "labels", '
               '"parameters": {"binary_data": true}}]}' % (x, ids, text, mask, half),
        "minimal": '{"inputs": [%s, %s]}' % (x, ids),
        "binary_output": '{"inputs": [%s, %s], "parameters": {"binary_data_output": true}}' % (x, ids),
        "duplicate_output": '{"inputs": [%s, %s], "outputs": [{"name": "y"}, {"name": "y"}]}' % (x, ids),
        "invalid_utf8": b'{"id": "\xff\xfe", "inputs": [{"name": "\xc3(", "datatype": "FP32", "shape": [1, 4], '
                        b'"data": [1, 2, 3, 4]}]}',
        "nan_inf": '{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1e39, -1e39, 0, 1]}, '
                   '{"name": "ids", "datatype": "INT64", "shape": [1, 3], "data": [9223372036854775807, -1, 0]}]}',
    }


def kserve_binary_seeds():
    seeds = {}
    header = ('{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "parameters": {"binary_data_size": 16}},'
              ' {"name": "ids", "datatype": "INT64", "shape": [1, 3], "parameters": {"binary_data_size": 24}},'
              ' {"name": "text", "datatype": "BYTES", "shape": [1, 2], "parameters": {"binary_data_size": 11}}],'
              ' "outputs": [{"name": "y", "parameters": {"binary_data": true}}]}').encode()
    data = (np.arange(4, dtype=np.float32).tobytes() + np.arange(3, dtype=np.int64).tobytes()
            + struct.pack("<I", 2) + b"ab" + struct.pack("<I", 1) + b"c")
    seeds["binary"] = struct.pack("<I", len(header)) + header + data
    seeds["length_too_long"] = struct.pack("<I", len(header) + 8) + header + data
    seeds["length_short"] = struct.pack("<I", 10) + header + data
    return seeds


def grpc_seeds():
    """Serialized ModelInferRequests, with the message classes protoc writes for src/server/grpc_service.proto."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["protoc", "-I", ROOT, "--python_out", d, "src/server/grpc_service.proto",
                        "src/server/model_config.proto"], check=True)
        sys.path.insert(0, d)
        from src.server import grpc_service_pb2 as pb
        seeds = {}
        r = pb.ModelInferRequest(model_name="fuzz", id="r1")
        t = r.inputs.add(name="x", datatype="FP32", shape=[1, 4])
        t.contents.fp32_contents.extend([1, 2, 3, 4])
        t = r.inputs.add(name="ids", datatype="INT64", shape=[1, 3])
        t.contents.int64_contents.extend([1, 2, 3])
        t = r.inputs.add(name="text", datatype="BYTES", shape=[1, 2])
        t.contents.bytes_contents.extend([b"a", b"\xff"])
        r.outputs.add(name="y")
        seeds["typed"] = r.SerializeToString()
        r = pb.ModelInferRequest(model_name="fuzz")
        r.inputs.add(name="x", datatype="FP32", shape=[2, 4])
        r.inputs.add(name="ids", datatype="INT64", shape=[2, 3])
        r.inputs.add(name="half", datatype="FP16", shape=[2, 2, 2])
        r.raw_input_contents.extend([np.ones(8, np.float32).tobytes(), np.ones(6, np.int64).tobytes(),
                                     np.ones(8, np.float16).tobytes()])
        r.outputs.add(name="y")
        r.outputs.add(name="y")
        seeds["raw_duplicate_output"] = r.SerializeToString()
        r = pb.ModelInferRequest(model_name="fuzz")
        r.inputs.add(name="x", datatype="FP32", shape=[1, 4])
        r.raw_input_contents.extend([b"\0" * 12])  # size lie
        r.parameters["timeout"].int64_param = 5
        seeds["raw_size_lie"] = r.SerializeToString()
        sys.path.pop(0)
        return seeds


def http_seeds():
    body = '{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}'
    binary_header = '{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "parameters": {"binary_data_size": 16}}]}'
    binary = binary_header.encode() + np.ones(4, np.float32).tobytes()
    req = lambda head, b=b"": head.replace("\n", "\r\n").encode() + b
    return {
        "live": req("GET /v2/health/live HTTP/1.1\nHost: x\n\n"),
        "ready_model": req("GET /v2/models/fuzz/ready HTTP/1.1\nHost: x\n\n"),
        "metadata": req("GET /v2/models/fuzz/versions/1 HTTP/1.1\nHost: x\n\n"),
        "index": req("POST /v2/repository/index HTTP/1.1\nHost: x\nContent-Length: 2\n\n", b"{}"),
        "infer": req("POST /v2/models/fuzz/infer HTTP/1.1\nHost: x\nContent-Type: application/json\n"
                     "Content-Length: %d\n\n" % len(body), body.encode()),
        "infer_binary": req("POST /v2/models/fuzz/infer HTTP/1.1\nHost: x\nInference-Header-Content-Length: %d\n"
                            "Content-Length: %d\n\n" % (len(binary_header), len(binary)), binary),
        "infer_length_too_long": req("POST /v2/models/fuzz/infer HTTP/1.1\nHost: x\n"
                                     "Inference-Header-Content-Length: %d\nContent-Length: %d\n\n"
                                     % (len(binary_header) + 10, len(binary)), binary),
        "chunked": req("POST /v2/models/fuzz/infer HTTP/1.1\nHost: x\nTransfer-Encoding: chunked\n\n"
                       "%x\n%s\n0\n\n" % (len(body), body)),
        "gzip_te": req("POST /v2/models/fuzz/infer HTTP/1.1\nHost: x\nTransfer-Encoding: gzip\n"
                       "Content-Length: %d\n\n" % len(body), body.encode()),
        "invalid_utf8": req("POST /v2/models/fuzz/infer HTTP/1.1\nHost: x\nContent-Length: 14\n\n",
                            b'{"id": "\xff\xfe\xfd"}'),
        "stats": req("GET /v2/models/fuzz/stats HTTP/1.1\nHost: x\n\n"),
        "config": req("GET /v2/models/fuzz/config HTTP/1.1\nHost: x\n\n"),
        "unload": req("POST /v2/repository/models/fuzz/unload HTTP/1.1\nHost: x\nContent-Length: 0\n\n"),
        "traversal": req("GET /v2/models/..%2f..%2fetc/ready HTTP/1.1\nHost: x\n\n"),
        "expect": req("POST /v2/models/fuzz/infer HTTP/1.1\nHost: x\nExpect: 100-continue\n"
                      "Content-Length: %d\n\n" % len(body), body.encode()),
    }


def config_seeds():
    seeds = {}
    for d in ("quickstart_cnn", "quickstart_cnn_batched"):
        with open(os.path.join(ROOT, "examples/serve/triton_repository", d, "config.pbtxt"), "rb") as f:
            seeds[d] = f.read()
    seeds["fuzz"] = """name: "fuzz"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 3, 4 ] }, { name: "ids" data_type: TYPE_INT64 dims: [ 2 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 10 ] }, { name: "label" data_type: TYPE_STRING dims: [ -1 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
dynamic_batching { preferred_batch_size: [ 2, 4 ] max_queue_delay_microseconds: 100
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 1000 allow_timeout_override: true
                         max_queue_size: 16 } }
version_policy: { specific { versions: [ 1, 3 ] } }
optimization { graph: { level: -1 } }
parameters { key: "intra_op_thread_count" value: { string_value: "2" } }
model_warmup [ { name: "w" batch_size: 2 inputs { key: "x" value: { data_type: TYPE_FP32 dims: [ 3, 4 ]
  random_data: true } } } ]
"""
    seeds["threads_huge"] = 'parameters { key: "intra_op_thread_count" value: { string_value: "100000" } }\n'
    return seeds


def main():
    for name, data in models().items():
        for target in ("import", "check", "run"):
            write(target, name, data)
    for name, data in npy_seeds().items():
        write("npy", name, data)
    for name, data in tensor_proto_seeds().items():
        write("tensor_proto", name, data)
    for name, data in kserve_json_seeds().items():
        write("kserve_json", name, data)
    for name, data in kserve_binary_seeds().items():
        write("kserve_binary", name, data)
    for name, data in grpc_seeds().items():
        write("grpc_codec", name, data)
    for name, data in http_seeds().items():
        write("http", name, data)
    for name, data in config_seeds().items():
        write("model_config", name, data)


if __name__ == "__main__":
    main()
