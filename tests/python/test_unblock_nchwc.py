"""The unblock_nchwc pass on files ONNX Runtime writes at level `all`: ORT's com.microsoft.nchwc region (with the
elementwise ops ORT runs on NCHWc tensors between its convolutions: SiLU as QuickGelu, a squeeze-and-excitation
Mul, a residual Add) is written back as the plain graph, which Ferry's own passes fuse and block, so Ferry runs no
nchwc op and no reorder inside the region, with the real channel counts where ORT pads them to whole blocks. The
outputs match ONNX Runtime's on the original model. Skipped where onnxruntime-node is not installed."""
import numpy as np
import pytest

import ferry
from ort_oracle import check_against_ort, require_ort
from test_ort_contrib_nchwc import Net, nchwc_ops, ort_written


def placed_ops(path):
    sess = ferry.InferenceSession(path, providers=["cpu"])
    return [(n["domain"], n["op"]) for n in sess.placement()["nodes"]]


def silu_se_net(channels):
    """Conv + SiLU, a squeeze-and-excitation block (GlobalAveragePool, 1x1 convs, Sigmoid, Mul), a residual Add, a
    MaxPool, then a head that reads the plain tensor."""
    net = Net((1, 3, 16, 16))
    x = net.conv("x", 3, channels)
    sig = net.op("Sigmoid", [x])
    a = net.op("Mul", [x, sig])  # SiLU: ORT's QuickGelu
    y = net.conv(a, channels, channels)
    se = net.op("GlobalAveragePool", [y])
    se = net.op("Relu", [net.conv(se, channels, 4, k=1)])
    se = net.op("Sigmoid", [net.conv(se, 4, channels, k=1)])
    y = net.op("Mul", [y, se])
    y = net.op("Add", [y, a])
    y = net.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    net.op("Flatten", [net.op("GlobalAveragePool", [net.conv(y, channels, 24)])])
    return net


@pytest.mark.parametrize("channels", [16, 20, 32])
def test_the_nchwc_region_runs_as_ferrys_own_blocked_graph(tmp_path, channels):
    require_ort()
    net = silu_se_net(channels)
    path = ort_written(net.model(), str(tmp_path))
    assert nchwc_ops(path), "ONNX Runtime wrote no nchwc op: the case would pass vacuously"
    ops = placed_ops(path)
    assert not [o for o in ops if o[0] == "com.microsoft.nchwc"], ops
    # None around the SiLU, the SE Mul or the residual Add, where ONNX Runtime's file reorders (with 20 channels,
    # padded to a whole block inside ORT's region, too: the plain graph carries the real 20); what remains is the
    # plain tensor the head reads.
    reorders = [o for o in ops if o[1] in ("ReorderToBlocked", "ReorderFromBlocked")]
    ort_reorders = [o for o in nchwc_ops(path) if o.startswith("Reorder")]
    assert len(reorders) <= 2 < len(ort_reorders), (ops, ort_reorders)
    assert ("ai.ferry", "BlockedConv") in ops, ops
    check_against_ort(path, net.feeds, rtol=1e-4, atol=1e-5, providers_list=(["cpu"], ["cpu", "ref"]))


@pytest.mark.parametrize("mode,ctm", [("nearest", "asymmetric"), ("linear", "half_pixel"),
                                      ("linear", "align_corners"), ("linear", "asymmetric")])
def test_an_upsample_becomes_a_resize(tmp_path, mode, ctm):
    require_ort()
    net = Net((1, 3, 8, 8))
    x = net.op("Relu", [net.conv("x", 3, 16)])
    scales = net.init("scales", np.array([1, 1, 2, 3], np.float32))
    roi = net.init("roi", np.array([], np.float32))
    attrs = {"nearest_mode": "floor"} if mode == "nearest" else {}
    y = net.op("Resize", [x, roi, scales], mode=mode, coordinate_transformation_mode=ctm, **attrs)
    net.op("Relu", [net.conv(y, 16, 16)])
    path = ort_written(net.model(), str(tmp_path))
    if "Upsample" not in nchwc_ops(path):
        pytest.skip("ONNX Runtime kept this Resize plain: %s" % nchwc_ops(path))
    ops = placed_ops(path)
    assert not [o for o in ops if o[0] == "com.microsoft.nchwc"], ops
    assert ("", "Resize") in ops, ops
    check_against_ort(path, net.feeds, rtol=1e-4, atol=1e-5, providers_list=(["cpu"],))
