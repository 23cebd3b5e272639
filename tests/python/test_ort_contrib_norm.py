"""ONNX Runtime's normalization ops against ONNX Runtime itself (ort_oracle.py): the default-domain
LayerNormalization-1 and SimplifiedLayerNormalization-1 (models written at opset 14), com.microsoft's
SimplifiedLayerNormalization (ONNX Runtime 1.30 runs only the default-domain one: its form is the oracle),
SkipLayerNormalization, SkipSimplifiedLayerNormalization and EmbedLayerNormalization. float32 cases run on Ferry's
cpu kernels alone and on ref; the others (float16, double, double statistics) on cpu,ref and ref."""
import os
import tempfile

import numpy as np
import onnx
import pytest

from ort_oracle import check_against_ort, contrib_model

CPU_AND_REF = (["cpu"], ["ref"])
RNG = np.random.default_rng(27)


def check_on_cpu(model, feeds, rtol=1e-5, atol=1e-5):
    """check_against_ort on cpu and on ref, and the node placed on Ferry's cpu kernel with fallback forbidden (a
    providers list of "cpu" alone still falls back to ref)."""
    import ferry
    want = check_against_ort(model, feeds, rtol=rtol, atol=atol, providers_list=CPU_AND_REF)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.onnx")
        onnx.save(model, path)
        options = ferry.SessionOptions()
        options.add_session_config_entry("ferry.allow_fallback", "0")
        sess = ferry.InferenceSession(path, sess_options=options, providers=["cpu"])
        got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    for name, w in want.items():
        np.testing.assert_allclose(got[name], w, rtol=rtol, atol=atol, err_msg="strict cpu: output %s" % name)


def rand(*shape, dtype=np.float32, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(dtype)


# ---- LayerNormalization-1 (default domain, opset 14) ---------------------------------------------------------------

@pytest.mark.parametrize("axis,with_bias,outputs", [(-1, True, 3), (-1, False, 1), (1, True, 3), (-2, False, 2)])
def test_layer_normalization_1_float(axis, with_bias, outputs):
    x = rand(2, 3, 16, lo=-3, hi=3)
    norm = x.shape[axis:] if axis >= 0 else x.shape[len(x.shape) + axis:]
    inits = {"s": rand(*norm)}
    if with_bias:
        inits["b"] = rand(*norm)
    names = ["y", "mean", "inv"][:outputs]
    m = contrib_model("LayerNormalization", ["x", "s"] + (["b"] if with_bias else []), names, {"x": x},
                      initializers=inits, domain="", opset=14, axis=axis, epsilon=1e-3)
    check_on_cpu(m, {"x": x})


@pytest.mark.parametrize("xt,st,stash", [(np.float16, np.float16, 1), (np.float64, np.float64, 1),
                                         (np.float64, np.float64, 11), (np.float32, np.float32, 11),
                                         (np.float16, np.float32, 1), (np.float32, np.float16, 1)])
def test_layer_normalization_1_types(xt, st, stash):
    # Y has Scale's type; Mean and InvStdDev stash_type's (1 float, 11 double).
    x = rand(3, 24, dtype=xt)
    m = contrib_model("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], {"x": x},
                      initializers={"s": rand(24, dtype=st), "b": rand(24, dtype=st)}, domain="", opset=14,
                      stash_type=stash)
    half = np.float16 in (xt, st)
    check_against_ort(m, {"x": x}, rtol=3e-3 if half else 1e-5, atol=3e-3 if half else 1e-5)


def test_layer_normalization_1_scale_broadcasting_to_x():
    x = rand(2, 3, 8)
    m = contrib_model("LayerNormalization", ["x", "s"], ["y"], {"x": x}, initializers={"s": rand(2, 1, 8)},
                      domain="", opset=14)
    check_against_ort(m, {"x": x}, rtol=1e-5, atol=1e-5)


# ---- SimplifiedLayerNormalization ----------------------------------------------------------------------------------

@pytest.mark.parametrize("axis,epsilon", [(-1, 1e-5), (1, 0.1)])
def test_simplified_layer_normalization_default_domain(axis, epsilon):
    x = rand(2, 3, 16, lo=-3, hi=3)
    scale = rand(*x.shape[axis % 3:])
    m = contrib_model("SimplifiedLayerNormalization", ["x", "s"], ["y", "inv"], {"x": x}, initializers={"s": scale},
                      domain="", opset=14, axis=axis, epsilon=epsilon)
    check_on_cpu(m, {"x": x})


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_simplified_layer_normalization_com_microsoft(dtype):
    # ONNX Runtime 1.30 has no com.microsoft SimplifiedLayerNormalization: the default-domain node is its oracle.
    x = rand(4, 32, dtype=dtype)
    inits = {"s": rand(32, dtype=dtype)}
    kwargs = dict(initializers=inits, epsilon=1e-4)
    m = contrib_model("SimplifiedLayerNormalization", ["x", "s"], ["y", "inv"], {"x": x}, opset=14, **kwargs)
    ort = contrib_model("SimplifiedLayerNormalization", ["x", "s"], ["y", "inv"], {"x": x}, domain="", opset=14,
                        **kwargs)
    tol = 2e-3 if dtype == np.float16 else 1e-5
    providers = CPU_AND_REF if dtype == np.float32 else (["cpu", "ref"], ["ref"])
    check_against_ort(m, {"x": x}, rtol=tol, atol=tol, providers_list=providers, ort_model=ort)
    if dtype == np.float32:
        check_on_cpu(ort, {"x": x})


# ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization -------------------------------------------------------

@pytest.mark.parametrize("op", ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization"])
@pytest.mark.parametrize("x_shape,skip_shape", [((2, 3, 16), (2, 3, 16)), ((2, 3, 16), (3, 16)),
                                                ((2, 3, 16), (1, 3, 16)), ((6, 16), (6, 16))])
@pytest.mark.parametrize("with_beta,with_bias", [(True, True), (False, False), (True, False)])
def test_skip_normalizations(op, x_shape, skip_shape, with_beta, with_bias):
    simplified = op == "SkipSimplifiedLayerNormalization"
    h = x_shape[-1]
    x, skip = rand(*x_shape, lo=-3, hi=3), rand(*skip_shape, lo=-3, hi=3)
    inits = {"g": rand(h)}
    inputs = ["x", "skip", "g"]
    if not simplified:
        inputs.append("beta" if with_beta else "")
        if with_beta:
            inits["beta"] = rand(h)
    if with_bias:
        inputs.append("bias")
        inits["bias"] = rand(h)
    m = contrib_model(op, inputs, ["y", "mean", "inv", "sum"], {"x": x, "skip": skip}, initializers=inits)
    check_on_cpu(m, {"x": x, "skip": skip})


@pytest.mark.parametrize("outputs", [["y"], ["y", "", "", "sum"], ["y", "", "inv"]])
def test_skip_layer_normalization_optional_outputs(outputs):
    x, skip = rand(2, 5, 32), rand(2, 5, 32)
    m = contrib_model("SkipLayerNormalization", ["x", "skip", "g", "beta"], outputs, {"x": x, "skip": skip},
                      initializers={"g": rand(32), "beta": rand(32)}, epsilon=1e-5)
    check_on_cpu(m, {"x": x, "skip": skip})


@pytest.mark.parametrize("op", ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization"])
def test_skip_normalizations_float16(op):
    x, skip = rand(2, 3, 16, dtype=np.float16), rand(3, 16, dtype=np.float16)
    m = contrib_model(op, ["x", "skip", "g"], ["y", "mean", "inv", "sum"], {"x": x, "skip": skip},
                      initializers={"g": rand(16, dtype=np.float16)})
    check_against_ort(m, {"x": x, "skip": skip}, rtol=3e-3, atol=3e-3)


# ---- EmbedLayerNormalization ---------------------------------------------------------------------------------------

B, S, H, VOCAB, POSITIONS, SEGMENTS = 2, 5, 24, 11, 7, 3


def embed_case(segment_ids=True, segment_embedding=True, mask=True, position_ids=0, outputs=("y", "mi", "es"),
               dtype=np.float32, **attrs):
    feeds = {"ids": RNG.integers(0, VOCAB, (B, S)).astype(np.int32)}
    inits = {"we": rand(VOCAB, H, dtype=dtype), "pe": rand(POSITIONS, H, dtype=dtype), "g": rand(H, dtype=dtype),
             "b": rand(H, dtype=dtype)}
    inputs = ["ids", "", "we", "pe", "", "g", "b"]
    if segment_ids:
        feeds["seg"] = RNG.integers(0, SEGMENTS, (B, S)).astype(np.int32)
        inputs[1] = "seg"
    if segment_embedding:
        inits["se"] = rand(SEGMENTS, H, dtype=dtype)
        inputs[4] = "se"
    if mask:
        feeds["mask"] = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 2]], np.int32)
        inputs.append("mask")
    if position_ids:
        feeds["pos"] = RNG.integers(0, POSITIONS, (position_ids, S)).astype(np.int32)
        inputs += [""] * (8 - len(inputs)) + ["pos"]
    m = contrib_model("EmbedLayerNormalization", inputs, list(outputs), feeds, initializers=inits, **attrs)
    return m, feeds


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(segment_ids=False, segment_embedding=False),
    dict(segment_ids=False),  # segment_embedding without segment_ids: its row 0, as ONNX Runtime reads it
    dict(mask=False),
    dict(position_ids=B, mask=False),
    dict(position_ids=1),
    dict(outputs=("y", "mi")),
    dict(outputs=("y", "", "es")),
    dict(outputs=("y",), mask_index_type=0),
    dict(epsilon=0.5),
], ids=lambda k: ",".join("%s=%s" % kv for kv in sorted(k.items())) or "all")
def test_embed_layer_normalization(kwargs):
    m, feeds = embed_case(**kwargs)
    check_on_cpu(m, feeds)


def test_embed_layer_normalization_float16():
    m, feeds = embed_case(dtype=np.float16)
    check_against_ort(m, feeds, rtol=3e-3, atol=3e-3)


def test_embed_layer_normalization_index_out_of_range_is_an_error():
    import ferry
    m, feeds = embed_case()
    feeds["ids"][0, 0] = VOCAB
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        for providers in (["cpu"], ["ref"]):
            sess = ferry.InferenceSession(path, providers=providers)
            with pytest.raises(Exception, match=r"input 'input_ids' element 0 = 11 is out of range \[0, 11\)"):
                sess.run(None, feeds)
