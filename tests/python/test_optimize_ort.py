"""`ferry optimize --target ort` (ferry.optimize(..., target=["ort"])): Ferry's fused graph written in ONNX
Runtime's ops. Each model is optimized for ONNX Runtime; the file must hold no ai.ferry node, must hold the
fusions in com.microsoft ops, and ONNX Runtime (onnxruntime-node) must load it and compute what it computes on the
original model; Ferry runs the file too. Skipped where onnxruntime-node is not installed."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ferry
from ort_oracle import require_ort, run_ferry, run_ort

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("FERRY_BUILD_DIR", os.path.join(ROOT, "build"))
RNG = np.random.default_rng(7)


def w(*shape, scale=0.2):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def const(name, arr):
    return numpy_helper.from_array(arr, name)


def cnn_model():
    """Conv+Relu, a residual Conv+Add+Relu, Conv+Sigmoid*Mul (SiLU), Conv+HardSwish, Conv+Clip, a pool and a
    Gemm head: FusedConv with ORT's activations and with others, and a FusedMatMul with a bias."""
    nodes, inits = [], []

    def conv(x, cin, cout, name, k=3):
        inits.extend([const(name + "_w", w(cout, cin, k, k)), const(name + "_b", w(cout))])
        nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name], name=name,
                                      pads=[k // 2] * 4))
        return name

    c1 = conv("x", 3, 16, "c1")
    nodes.append(helper.make_node("Relu", [c1], ["r1"], name="relu1"))
    c2 = conv("r1", 16, 16, "c2")
    nodes.append(helper.make_node("Add", [c2, "r1"], ["s2"], name="add2"))
    nodes.append(helper.make_node("Relu", ["s2"], ["r2"], name="relu2"))
    c3 = conv("r2", 16, 16, "c3")
    nodes.append(helper.make_node("Sigmoid", [c3], ["sig3"], name="sig3"))
    nodes.append(helper.make_node("Mul", [c3, "sig3"], ["silu3"], name="silu3"))
    c4 = conv("silu3", 16, 16, "c4", k=1)
    nodes.append(helper.make_node("HardSwish", [c4], ["hs4"], name="hs4"))
    c5 = conv("hs4", 16, 8, "c5")
    inits.extend([const("lo", np.array(0, np.float32)), const("hi", np.array(6, np.float32))])
    nodes.append(helper.make_node("Clip", [c5, "lo", "hi"], ["clip5"], name="clip5"))
    nodes.append(helper.make_node("GlobalAveragePool", ["clip5"], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat"))
    inits.extend([const("fc_w", w(8, 10)), const("fc_b", w(10))])
    nodes.append(helper.make_node("MatMul", ["flat", "fc_w"], ["mm"], name="fc"))
    nodes.append(helper.make_node("Add", ["mm", "fc_b"], ["logits"], name="fc_bias"))
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {"x": w(1, 3, 16, 16, scale=1)}


def encoder_model(opset):
    """An encoder layer written as primitives, as exporters before opset 17 write it: LayerNorm as ReduceMean /
    Sub / Pow / Sqrt / Div, a residual Add before it (SkipLayerNormalization), MatMul + Add + erf-Gelu (FusedMatMul
    with Gelu: BiasGelu), MatMul + Add + tanh-Gelu (FastGelu), RMS normalization."""
    d, s = 32, 8
    nodes, inits = [], []

    def ln(x, name):
        inits.extend([const(name + "_g", 1 + w(d)), const(name + "_b", w(d)),
                       const(name + "_eps", np.array(1e-5, np.float32)), const(name + "_two", np.array(2, np.float32))])
        axes = {"axes": [-1]}
        nodes.extend([
            helper.make_node("ReduceMean", [x], [name + "_mean"], name=name + "_rm1", **axes),
            helper.make_node("Sub", [x, name + "_mean"], [name + "_xc"], name=name + "_sub"),
            helper.make_node("Pow", [name + "_xc", name + "_two"], [name + "_sq"], name=name + "_pow"),
            helper.make_node("ReduceMean", [name + "_sq"], [name + "_var"], name=name + "_rm2", **axes),
            helper.make_node("Add", [name + "_var", name + "_eps"], [name + "_ve"], name=name + "_addeps"),
            helper.make_node("Sqrt", [name + "_ve"], [name + "_std"], name=name + "_sqrt"),
            helper.make_node("Div", [name + "_xc", name + "_std"], [name + "_n"], name=name + "_div"),
            helper.make_node("Mul", [name + "_n", name + "_g"], [name + "_ng"], name=name + "_mulg"),
            helper.make_node("Add", [name + "_ng", name + "_b"], [name], name=name + "_addb"),
        ])
        return name

    def gelu_erf(x, name):
        inits.extend([const(name + "_rs2", np.array(1 / np.sqrt(2), np.float32)),
                      const(name + "_one", np.array(1, np.float32)), const(name + "_half", np.array(0.5, np.float32))])
        nodes.extend([
            helper.make_node("Mul", [x, name + "_rs2"], [name + "_a"], name=name + "_m1"),
            helper.make_node("Erf", [name + "_a"], [name + "_e"], name=name + "_erf"),
            helper.make_node("Add", [name + "_e", name + "_one"], [name + "_p"], name=name + "_add"),
            helper.make_node("Mul", [x, name + "_p"], [name + "_xp"], name=name + "_m2"),
            helper.make_node("Mul", [name + "_xp", name + "_half"], [name], name=name + "_m3"),
        ])
        return name

    def linear(x, cin, cout, name):
        inits.extend([const(name + "_w", w(cin, cout)), const(name + "_b", w(cout))])
        nodes.extend([helper.make_node("MatMul", [x, name + "_w"], [name + "_mm"], name=name + "_mm"),
                      helper.make_node("Add", [name + "_mm", name + "_b"], [name], name=name + "_add")])
        return name

    h = linear("x", d, d, "proj")
    nodes.append(helper.make_node("Add", ["x", h], ["res1"], name="res1"))
    n1 = ln("res1", "ln1")
    f1 = gelu_erf(linear(n1, d, 4 * d, "ff1"), "gelu1")
    f2 = linear(f1, 4 * d, d, "ff2")
    nodes.append(helper.make_node("Add", [n1, f2], ["res2"], name="res2"))
    n2 = ln("res2", "ln2")
    graph = helper.make_graph(nodes, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, s, d])],
                              [helper.make_tensor_value_info(n2, TensorProto.FLOAT, [1, s, d])], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), {"x": w(1, s, d, scale=1)}


def ops_of(path):
    m = onnx.load(path)
    return [(n.domain, n.op_type) for n in m.graph.node]


def optimize_for_ort(tmp_path, model, name):
    src, dst = str(tmp_path / (name + ".onnx")), str(tmp_path / (name + "_ort.onnx"))
    onnx.save(model, src)
    report = ferry.optimize(src, dst, target=["ort"])
    assert report["targets"] == ["ort"]
    return src, dst, report


def check_runs_on_ort(src, dst, feeds, rtol=1e-4, atol=1e-5):
    want = run_ort(src, feeds)
    got = run_ort(dst, feeds)
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=rtol, atol=atol, err_msg="ONNX Runtime on the --target ort file")
    mine = run_ferry(dst, feeds, ["cpu", "ref"])
    for k, v in want.items():
        np.testing.assert_allclose(mine[k], v, rtol=rtol, atol=atol, err_msg="Ferry on the --target ort file")


def test_cnn_fusions_are_written_as_ort_fused_conv(tmp_path):
    require_ort()
    model, feeds = cnn_model()
    src, dst, report = optimize_for_ort(tmp_path, model, "cnn")
    ops = ops_of(dst)
    assert not [o for o in ops if o[0] == "ai.ferry"], ops
    fused = [o for o in ops if o == ("com.microsoft", "FusedConv")]
    assert len(fused) == 5, ops  # every Conv, its activation fused where ORT has it
    assert ("com.microsoft", "QuickGelu") in ops, ops  # SiLU after a FusedConv without activation
    assert ("", "HardSwish") in ops, ops
    assert report["ort_conversion"]["mapped"] >= 5
    m = onnx.load(dst)
    assert any(o.domain == "com.microsoft" and o.version == 1 for o in m.opset_import)
    clip = next(n for n in m.graph.node if n.op_type == "FusedConv" and
                any(a.name == "activation" and a.s == b"Clip" for a in n.attribute))
    params = next(a.floats for a in clip.attribute if a.name == "activation_params")
    assert list(params) == [0.0, 6.0]
    check_runs_on_ort(src, dst, feeds)


@pytest.mark.parametrize("opset", [14, 17])
def test_encoder_norms_and_gelu_in_ort_ops(tmp_path, opset):
    require_ort()
    model, feeds = encoder_model(opset)
    src, dst, report = optimize_for_ort(tmp_path, model, "enc%d" % opset)
    ops = ops_of(dst)
    assert not [o for o in ops if o[0] == "ai.ferry"], ops
    assert ("com.microsoft", "BiasGelu") in ops, ops
    # Layer norms: the one after a residual Add as SkipLayerNormalization, in ORT's op; below opset 17 the
    # default-domain LayerNormalization that ONNX Runtime registers itself.
    assert ("com.microsoft", "SkipLayerNormalization") in ops, ops
    assert not [o for o in ops if o[1] in ("ReduceMean", "Erf", "Pow")], ops
    check_runs_on_ort(src, dst, feeds)


def test_ort_cannot_be_mixed_with_ferry_backends(tmp_path):
    model, _ = cnn_model()
    src = str(tmp_path / "m.onnx")
    onnx.save(model, src)
    with pytest.raises(ferry.InvalidArgumentError, match="--target ort"):
        ferry.optimize(src, str(tmp_path / "o.onnx"), target=["ort", "cpu"])
    with pytest.raises(ferry.InvalidArgumentError, match="--legalize"):
        ferry.optimize(src, str(tmp_path / "o.onnx"), target=["ort"], legalize=True)


@pytest.mark.parametrize("name", ["bert_encoder", "mobilenet_v2", "vit_b_16"])
def test_test_models_optimized_for_ort_run_on_ort(tmp_path, name):
    require_ort()
    d = os.path.join(BUILD, "test-models", name)
    if not os.path.exists(os.path.join(d, "model.onnx")):
        pytest.skip("the test models are made by ctest's generate_test_models")
    import json
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    feeds = {i["name"]: np.load(os.path.join(d, i["file"])) for i in manifest["inputs"]}
    dst = str(tmp_path / "ort.onnx")
    report = ferry.optimize(os.path.join(d, "model.onnx"), dst, target=["ort"])
    assert report["ort_conversion"]["mapped"] > 0
    assert not [o for o in ops_of(dst) if o[0] == "ai.ferry"]
    tol = manifest["tolerance"]
    check_runs_on_ort(os.path.join(d, "model.onnx"), dst, feeds, rtol=tol["rtol"], atol=tol["atol"])
