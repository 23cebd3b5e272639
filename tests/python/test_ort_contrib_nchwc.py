"""ONNX Runtime's com.microsoft.nchwc ops (ReorderInput, ReorderOutput, Conv, MaxPool, AveragePool, GlobalMaxPool,
GlobalAveragePool, Upsample) on Ferry, with files ONNX Runtime itself writes: small CNNs built here are optimized
by onnxruntime-node at graph optimization level `all` and saved (`optimizedModelFilePath`), which rewrites their
convolutions and pools into NCHWc form for this machine's block size (16 with AVX-512F, else 8); Ferry runs the
written file on `cpu,ref` and on `ref` alone, and its outputs must match ONNX Runtime's on the original model.
Each case also checks that the written file holds the nchwc ops it is about, so a case cannot pass vacuously."""
import os
import subprocess
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_oracle import ORT_DIR, check_against_ort, require_ort

NCHWC = "com.microsoft.nchwc"
RNG = np.random.default_rng(27)

WRITE_JS = """
const [ortPath, src, out] = process.argv.slice(1);  // node -e: argv[0] is node, the arguments follow
require(ortPath).InferenceSession.create(src, {graphOptimizationLevel: 'all', optimizedModelFilePath: out,
                                               intraOpNumThreads: 1})
  .catch(e => { console.error(e.message); process.exit(1); });
"""


def ort_written(model, d):
    """Saves `model` in d, lets ONNX Runtime optimize it at level `all` and write the result; returns its path."""
    src, out = os.path.join(d, "model.onnx"), os.path.join(d, "model_all.onnx")
    onnx.save(model, src)
    p = subprocess.run(["node", "-e", WRITE_JS, os.path.join(ORT_DIR, "node_modules", "onnxruntime-node"), src, out],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "ONNX Runtime could not write the optimized model: " + p.stderr[-2000:]
    return out


def nchwc_ops(path):
    m = onnx.load(path)
    return sorted(n.op_type for n in m.graph.node if n.domain == NCHWC)


class Net:
    """A small graph built node by node: random float initializers, NCHW activations."""

    def __init__(self, shape, name="x"):
        self.nodes, self.inits, self.n = [], [], 0
        self.input = helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
        self.feeds = {name: RNG.standard_normal(shape).astype(np.float32)}
        self.last = name

    def fresh(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def init(self, base, arr):
        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, op, inputs, **attrs):
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        self.last = out
        return out

    def conv(self, x, c_in, c_out, k=3, group=1, bias=True, **attrs):
        w = self.init("w", (RNG.standard_normal((c_out, c_in // group, k, k)) * (1.0 / np.sqrt(c_in * k * k / group)))
                      .astype(np.float32))
        ins = [x, w]
        if bias:
            ins.append(self.init("b", RNG.standard_normal(c_out).astype(np.float32) * 0.1))
        attrs.setdefault("pads", [k // 2] * 4)
        return self.op("Conv", ins, kernel_shape=[k, k], group=group, **attrs)

    def model(self, outputs=None, opset=17):
        outs = [helper.make_empty_tensor_value_info(o) for o in (outputs or [self.last])]
        g = helper.make_graph(self.nodes, "nchwc_test", [self.input], outs, initializer=self.inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="ferry-tests")


def run_case(net, want_ops, outputs=None, rtol=1e-4, atol=1e-5, opset=17):
    require_ort()
    model = net.model(outputs, opset)
    with tempfile.TemporaryDirectory() as d:
        path = ort_written(model, d)
        ops = nchwc_ops(path)
        for op in want_ops:
            assert op in ops, "ONNX Runtime wrote no nchwc %s (it wrote %s)" % (op, ops)
        check_against_ort(path, net.feeds, rtol=rtol, atol=atol, providers_list=(["cpu"], ["ref"]),
                          ort_model=model)
        import ferry
        placement = ferry.InferenceSession(path, providers=["cpu"]).placement()
        off_cpu = [(n["op"], n["reason"]) for n in placement["nodes"] if n["backend"] != "cpu"]
        assert not off_cpu, "nodes not on the cpu kernels: %s" % off_cpu


def test_first_conv_plain_input_then_blocked_conv_relu():
    # The 3-channel first conv reads plain NCHW (W in OIHWBo), the next ones read blocked X (OIHWBiBo), Relu fused.
    net = Net((1, 3, 20, 22))
    net.op("Relu", [net.conv("x", 3, 32, strides=[2, 2])])
    net.op("Relu", [net.conv(net.last, 32, 32)])
    net.conv(net.last, 32, 48, k=1, pads=[0, 0, 0, 0])
    run_case(net, ["Conv"])


def test_residual_add_fused_as_sum_then_relu():
    # Conv(a) -> Conv(b); Add(b, a) becomes the second conv's Sum input, the Relu after it its activation.
    net = Net((2, 16, 12, 12))
    a = net.op("Relu", [net.conv("x", 16, 32)])
    b = net.conv(a, 32, 32)
    net.op("Relu", [net.op("Add", [b, a])])
    run_case(net, ["Conv", "ReorderInput", "ReorderOutput"])


def test_depthwise_grouped_strided_dilated():
    net = Net((1, 32, 17, 15))
    x = net.op("Relu", [net.conv("x", 32, 32)])
    x = net.op("Clip", [net.conv(x, 32, 32, group=32, strides=[2, 2]), net.init("lo", np.float32(0)),
                        net.init("hi", np.float32(6))])
    x = net.conv(x, 32, 64, group=2, dilations=[2, 2], pads=[2, 2, 2, 2])
    net.op("Sigmoid", [net.conv(x, 64, 32, k=1, pads=[0, 0, 0, 0], bias=False)])
    run_case(net, ["Conv"])


def test_output_channels_not_a_multiple_of_the_block():
    # M = 20 and 36: ONNX Runtime pads W and B to a multiple of the block; ReorderOutput keeps 20 / 36 channels.
    net = Net((1, 16, 9, 9))
    x = net.conv("x", 16, 20)
    y = net.conv("x", 16, 36, k=1, pads=[0, 0, 0, 0])
    net.op("Concat", [x, y], axis=1)
    run_case(net, ["Conv", "ReorderOutput"])


def test_pools():
    net = Net((1, 32, 19, 21))
    x = net.op("Relu", [net.conv("x", 32, 32)])
    m = net.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    m = net.op("MaxPool", [m], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    a = net.op("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    a = net.op("AveragePool", [a], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0)
    g = net.op("GlobalAveragePool", [net.conv(a, 32, 32)])
    gm = net.op("GlobalMaxPool", [net.conv(m, 32, 32)])
    run_case(net, ["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"], outputs=[m, a, g, gm])


def test_resize_nearest_and_linear_become_upsample():
    net = Net((1, 16, 7, 9))
    x = net.op("Relu", [net.conv("x", 16, 32)])
    empty = net.init("roi", np.zeros(0, np.float32))
    n = net.op("Resize", [x, empty, net.init("scales", np.array([1, 1, 2, 3], np.float32))], mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    n = net.conv(n, 32, 32)
    lin = net.op("Resize", [x, empty, net.init("scales", np.array([1, 1, 4, 4], np.float32))], mode="linear",
                 coordinate_transformation_mode="half_pixel")
    lin = net.conv(lin, 32, 16, k=1, pads=[0, 0, 0, 0])
    run_case(net, ["Upsample"], outputs=[n, lin])


def test_channels_last_reorders_and_batch_norm():
    # Transpose NHWC -> NCHW before a conv becomes ReorderInput channels_last = 1, NCHW -> NHWC after one
    # ReorderOutput channels_last = 1; a BatchNormalization on a blocked tensor becomes a depthwise 1x1 nchwc Conv.
    net = Net((2, 10, 11, 32))
    x = net.op("Transpose", ["x"], perm=[0, 3, 1, 2])
    x = net.op("Relu", [net.conv(x, 32, 32)])
    c = 32
    bn = [net.init("s", RNG.uniform(0.5, 1.5, c).astype(np.float32)),
          net.init("bb", RNG.standard_normal(c).astype(np.float32)),
          net.init("mean", RNG.standard_normal(c).astype(np.float32)),
          net.init("var", RNG.uniform(0.5, 2.0, c).astype(np.float32))]
    x = net.op("BatchNormalization", [x] + bn, epsilon=1e-5)
    x = net.conv(x, 32, 48)
    net.op("Transpose", [x], perm=[0, 2, 3, 1])
    run_case(net, ["ReorderInput", "ReorderOutput", "Conv"])
