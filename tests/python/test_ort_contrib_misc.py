"""ONNX Runtime's remaining com.microsoft CPU ops (group "misc") against ONNX Runtime itself: CropAndResize,
MurmurHash3, Tokenizer, NGramRepeatBlock, BifurcationDetector, DynamicTimeWarping, UnfoldTensor, MaxpoolWithMask,
ConvTransposeWithDynamicPads, NhwcMaxPool, Pad and MatMulInteger16; and the ops no backend implements
(kernels/refused_ops.h), whose reason `ferry check` names at the kernel layer."""
import json

import numpy as np
import onnx
import pytest
from onnx import helper, TensorProto

import ferry
from ort_oracle import check_against_ort, contrib_model

RNG = np.random.default_rng(27)
REF = (["ref"],)
CPU_REF = (["cpu"], ["ref"])


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# --- CropAndResize -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [{}, {"mode": "nearest"}, {"mode": "NEAREST", "extrapolation_value": 2.5},
                                   {"mode": "bilinear", "extrapolation_value": -1.0}])
@pytest.mark.parametrize("crop", [[3, 4], [1, 1], [1, 5], [6, 2]])
def test_crop_and_resize(attrs, crop):
    x = randn(2, 3, 5, 6)
    rois = np.array([[0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9], [-0.2, 0.3, 1.2, 0.8], [0.9, 0.8, 0.2, 0.1]], np.float32)
    idx = np.array([0, 1, 1, 0], np.int32)
    m = contrib_model("CropAndResize", ["X", "rois", "batch_indices", "crop_size"], ["Y"], {"X": x, "rois": rois},
                      initializers={"batch_indices": idx, "crop_size": np.array(crop, np.int32)}, **attrs)
    check_against_ort(m, {"X": x, "rois": rois}, providers_list=REF)


def test_crop_and_resize_crop_size_at_run_time():
    x = randn(1, 2, 4, 4)
    rois = np.array([[0.25, 0.0, 0.75, 1.0]], np.float32)
    feeds = {"X": x, "rois": rois, "batch_indices": np.array([0], np.int32), "crop_size": np.array([2, 3], np.int32)}
    m = contrib_model("CropAndResize", ["X", "rois", "batch_indices", "crop_size"], ["Y"], feeds)
    check_against_ort(m, feeds, providers_list=REF)


# --- MurmurHash3 ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64])
@pytest.mark.parametrize("attrs", [{}, {"positive": 0}, {"positive": 1, "seed": 42}, {"positive": 0, "seed": -7}])
def test_murmur_hash3(dtype, attrs):
    x = np.array([[0, 1, -2, 300], [7, 123456, -99999, 5]]).astype(dtype)
    m = contrib_model("MurmurHash3", ["X"], ["Y"], {"X": x}, **attrs)
    check_against_ort(m, {"X": x}, providers_list=REF)


@pytest.mark.parametrize("attrs", [{}, {"positive": 0, "seed": 3}])
def test_murmur_hash3_strings(attrs):
    # ONNX Runtime's runner takes no string feeds: the strings are an initializer.
    x = np.array(["hello", "", "abcdefg", "日本語", "four"], dtype=object)
    m = contrib_model("MurmurHash3", ["X"], ["Y"], {}, initializers={"X": x}, **attrs)
    check_against_ort(m, {}, providers_list=REF)


# --- Tokenizer -----------------------------------------------------------------------------------------------

TEXTS = np.array([["Hello World, again", "a,b  cc"], ["", "x"]], dtype=object)


@pytest.mark.parametrize("attrs", [
    {"mark": 1, "pad_value": "#", "mincharnum": 1, "separators": [" ", ","]},
    {"mark": 0, "pad_value": "<pad>", "mincharnum": 2, "separators": [" ", ","]},
    {"mark": 0, "pad_value": "#", "mincharnum": 1, "separators": ["[ ,]+"]},
    {"mark": 1, "pad_value": "#", "mincharnum": 1, "separators": [""]},
    {"mark": 0, "pad_value": "#", "mincharnum": 1, "tokenexp": "[a-zA-Z]+"},
    {"mark": 1, "pad_value": "_", "mincharnum": 2, "tokenexp": "[a-z]+"},
    {"mark": 0, "pad_value": "#", "mincharnum": 1, "tokenexp": "."},
    {"mark": 0, "pad_value": "#", "mincharnum": 1, "tokenexp": "a|ab|abc"},
])
@pytest.mark.parametrize("texts", [TEXTS, TEXTS[0], np.array(["日本 語の", "ab abc"], dtype=object)])
def test_tokenizer(attrs, texts):
    check_against_ort(tokenizer_model(texts, **attrs), {}, providers_list=REF)


def tokenizer_model(texts, **attrs):
    """Tokenizer(X) hashed by MurmurHash3: ONNX Runtime's runner returns no string outputs, so the tokens are
    compared through their hashes (and the shape)."""
    m = contrib_model("Tokenizer", ["X"], ["T"], {}, initializers={"X": texts}, **attrs)
    m.graph.node.append(helper.make_node("MurmurHash3", ["T"], ["Y"], domain="com.microsoft", name="hash"))
    del m.graph.output[:]
    m.graph.output.append(helper.make_empty_tensor_value_info("Y"))
    return m


def test_tokenizer_no_token_gives_an_empty_last_dim():
    texts = np.array([",,", " "], dtype=object)
    m = tokenizer_model(texts, mark=1, pad_value="#", mincharnum=1, separators=[" ", ","])
    check_against_ort(m, {}, providers_list=REF)


def test_tokenizer_tokens():
    # The strings themselves (what the hashes above stand for), against ONNX Runtime's rules worked by hand.
    texts = np.array(["ab, c", "d"], dtype=object)
    m = contrib_model("Tokenizer", ["X"], ["Y"], {}, initializers={"X": texts}, mark=1, pad_value="#",
                      mincharnum=1, separators=[", ", " "])
    (y,) = ferry.InferenceSession(m.SerializeToString(), providers=["ref"]).run(None, {})
    assert y.tolist() == [["\x02", "ab", "c", "\x03"], ["\x02", "d", "\x03", "#"]]


# --- NGramRepeatBlock ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("ngram", [1, 2, 3, 6, 7])
def test_ngram_repeat_block(ngram):
    ids = np.array([[1, 2, 3, 1, 2], [4, 4, 4, 4, 4], [0, 5, 0, 5, 0]], np.int64)
    scores = randn(3, 6)
    m = contrib_model("NGramRepeatBlock", ["input_ids", "scores"], ["scores_out"], {"input_ids": ids,
                                                                                  "scores": scores},
                      ngram_size=ngram)
    check_against_ort(m, {"input_ids": ids, "scores": scores}, providers_list=REF)


# --- BifurcationDetector -------------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [{}, {"min_ngram_size": 2, "max_ngram_size": 4}, {"min_ngram_size": 1,
                                                                                    "max_ngram_size": 1}])
@pytest.mark.parametrize("case", ["pred", "pred_mismatch", "no_pred", "repeated"])
def test_bifurcation_detector(attrs, case):
    src = np.array([5, 6, 7, 8, 9, 10, 6, 7], np.int64)
    cur = np.array([1, 5, 6], np.int64)
    prev = np.array([2], np.int64)
    feeds = {"src_tokens": src, "cur_tokens": cur, "prev_suffix_match_idx": prev}
    inputs = ["src_tokens", "cur_tokens", "prev_suffix_match_idx"]
    if case == "pred":
        feeds["pred_tokens"] = np.array([7, 8, 9, 10, 6, 7, 11], np.int64)
    elif case == "pred_mismatch":
        feeds["pred_tokens"] = np.array([7, 8, 0, 10, 6, 7, 11], np.int64)
    elif case == "repeated":
        feeds["cur_tokens"] = np.array([3, 6, 7], np.int64)
    if "pred_tokens" in feeds:
        inputs.append("pred_tokens")
    m = contrib_model("BifurcationDetector", inputs, ["tokens", "suffix_match_idx"], feeds, **attrs)
    check_against_ort(m, feeds, providers_list=REF)


# --- DynamicTimeWarping --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 6), (1, 5, 3), (1, 1), (7, 2)])
def test_dynamic_time_warping(shape):
    x = np.abs(randn(*shape))
    m = contrib_model("DynamicTimeWarping", ["input"], ["output"], {"input": x})
    check_against_ort(m, {"input": x}, providers_list=REF)


def test_dynamic_time_warping_ties():
    x = np.ones((3, 4), np.float32)
    m = contrib_model("DynamicTimeWarping", ["input"], ["output"], {"input": x})
    check_against_ort(m, {"input": x}, providers_list=REF)


# --- UnfoldTensor --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("attrs", [{"size": 3}, {"dim": 1, "size": 3, "step": 2}, {"dim": 0, "size": 2},
                                   {"dim": -2, "size": 7, "step": 3}])
def test_unfold_tensor(dtype, attrs):
    x = (randn(2, 7, 3) * 10).astype(dtype)
    m = contrib_model("UnfoldTensor", ["input"], ["output"], {"input": x}, **attrs)
    check_against_ort(m, {"input": x}, providers_list=REF)


# --- MaxpoolWithMask -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,attrs", [
    ((1, 2, 6), {"kernel_shape": [3]}),
    ((2, 3, 5, 5), {"kernel_shape": [2, 2]}),
    ((2, 3, 5, 5), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 5, 6), {"kernel_shape": [2, 3], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 4, 4, 4), {"kernel_shape": [2, 2, 2], "strides": [2, 1, 2]}),
])
@pytest.mark.parametrize("mask_batch", ["same", "one"])
def test_maxpool_with_mask(shape, attrs, mask_batch):
    x = randn(*shape)
    mshape = shape if mask_batch == "same" else (1, 1) + shape[2:]
    mask = (RNG.random(mshape) > 0.25).astype(np.int32)
    m = contrib_model("MaxpoolWithMask", ["X", "M"], ["Y"], {"X": x, "M": mask}, **attrs)
    check_against_ort(m, {"X": x, "M": mask}, providers_list=REF)


# --- ConvTransposeWithDynamicPads ----------------------------------------------------------------------------

@pytest.mark.parametrize("attrs,pads", [
    ({}, [0, 0, 0, 0]),
    ({}, [1, 0, 1, 2]),
    ({"strides": [2, 2]}, [1, 1, 0, 0]),
    ({"strides": [2, 2], "output_padding": [1, 0]}, [0, 1, 1, 0]),
    ({"dilations": [2, 1], "group": 2}, [1, 1, 1, 1]),
    ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}, [0, 0, 0, 0]),
])
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_with_dynamic_pads(attrs, pads, bias):
    group = attrs.get("group", 1)
    x = randn(1, 4, 4, 5)
    w = randn(4, 6 // group, 3, 3)
    inits = {"W": w}
    inputs = ["X", "W", "Pads"]
    inits["Pads"] = np.array(pads, np.int64)
    if bias:
        inits["B"] = randn(6)
        inputs.append("B")
    m = contrib_model("ConvTransposeWithDynamicPads", inputs, ["Y"], {"X": x}, initializers=inits,
                      kernel_shape=[3, 3], **attrs)
    check_against_ort(m, {"X": x}, rtol=1e-4, atol=1e-4, providers_list=CPU_REF)


def test_conv_transpose_with_dynamic_pads_at_run_time():
    x, w = randn(1, 2, 3, 3), randn(2, 3, 2, 2)
    feeds = {"X": x, "Pads": np.array([1, 0, 0, 1], np.int64)}
    m = contrib_model("ConvTransposeWithDynamicPads", ["X", "W", "Pads"], ["Y"], feeds, initializers={"W": w},
                      strides=[2, 2])
    check_against_ort(m, feeds, rtol=1e-4, atol=1e-4, providers_list=REF)


# --- NhwcMaxPool ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape,attrs", [
    ((1, 5, 5, 3), {"kernel_shape": [3, 3]}),
    ((2, 6, 7, 4), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 6, 7, 2), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 7, 7, 2), {"kernel_shape": [2, 2], "dilations": [2, 2]}),
    ((1, 5, 6, 3), {"kernel_shape": [3, 2], "auto_pad": "SAME_LOWER"}),
    ((2, 9, 3), {"kernel_shape": [4], "strides": [3]}),
])
def test_nhwc_max_pool(dtype, shape, attrs):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    m = contrib_model("NhwcMaxPool", ["x"], ["y"], {"x": x}, **attrs)
    check_against_ort(m, {"x": x}, providers_list=REF)


# --- Pad (com.microsoft) -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("pads_shape", ["1d", "2d"])
def test_pad(mode, pads_shape):
    x = randn(3, 4)
    pads = np.array([1, 2, 2, 1], np.int64)
    if pads_shape == "2d":
        pads = pads.reshape(1, 4)
    inits = {"pads": pads}
    inputs = ["data", "pads"]
    if mode == "constant":
        inits["value"] = np.array([1.5], np.float32)
        inputs.append("value")
    m = contrib_model("Pad", inputs, ["output"], {"data": x}, initializers=inits, mode=mode)
    check_against_ort(m, {"data": x}, providers_list=CPU_REF)


def test_pad_default_mode_and_value():
    x = randn(2, 3, 2)
    m = contrib_model("Pad", ["data", "pads"], ["output"], {"data": x},
                      initializers={"pads": np.array([0, 1, 0, 1, 0, 2], np.int64)})
    check_against_ort(m, {"data": x}, providers_list=CPU_REF)


def test_pad_pads_at_run_time():
    feeds = {"data": randn(2, 3), "pads": np.array([1, 0, 0, 2], np.int64)}
    m = contrib_model("Pad", ["data", "pads"], ["output"], feeds, mode="reflect")
    check_against_ort(m, feeds, providers_list=CPU_REF)


# --- MatMulInteger16 -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 2)),
                                             ((4,), (4, 3))])
def test_matmul_integer16(a_shape, b_shape):
    a = RNG.integers(-32768, 32767, size=a_shape, endpoint=True).astype(np.int16)
    b = RNG.integers(-32768, 32767, size=b_shape, endpoint=True).astype(np.int16)
    m = contrib_model("MatMulInteger16", ["A", "B"], ["Y"], {"A": a, "B": b})
    check_against_ort(m, {"A": a, "B": b}, providers_list=REF)


def test_matmul_integer16_unsigned():
    # ONNX Runtime's CPU kernel is int16 x int16 only: uint16 against numpy (uint32, modulo 2^32).
    a = RNG.integers(0, 65535, size=(3, 4), endpoint=True).astype(np.uint16)
    b = RNG.integers(0, 65535, size=(4, 2), endpoint=True).astype(np.uint16)
    m = contrib_model("MatMulInteger16", ["A", "B"], ["Y"], {"A": a, "B": b})
    sess = ferry.InferenceSession(m.SerializeToString(), providers=["ref"])
    (y,) = sess.run(None, {"A": a, "B": b})
    want = (a.astype(np.uint64) @ b.astype(np.uint64)) % (1 << 32)
    assert y.dtype == np.uint32
    np.testing.assert_array_equal(y, want.astype(np.uint32))


# --- AttnLSTM ------------------------------------------------------------------------------------------------

def attn_lstm_model(dirs=1, attn_layer=True, lens=None, mem_lens=None, peepholes=True, bias=True, initial=True,
                    **attrs):
    S, B, I, H, Tm, Md, Aq, Aw = 4, 2, 3, 5, 6, 4, 3, 7
    As = Aw if attn_layer else Md
    r = lambda *shape: randn(*shape) * 0.5  # noqa: E731
    feeds = {"X": r(S, B, I)}
    inits = {"W": r(dirs, 4 * H, I + As), "R": r(dirs, 4 * H, H)}
    optional = [("B", r(dirs, 8 * H) if bias else None), ("sequence_lens", lens),
                ("initial_h", r(dirs, B, H) if initial else None), ("initial_c", r(dirs, B, H) if initial else None),
                ("P", r(dirs, 3 * H) if peepholes else None), ("QW", r(dirs, H, Aq)), ("MW", r(dirs, Md, Aq)),
                ("V", r(dirs, Aq)), ("M", r(B, Tm, Md)), ("memory_seq_lens", mem_lens),
                ("AW", r(dirs, H + Md, Aw) if attn_layer else None)]
    names = ["X", "W", "R"]
    for name, value in optional:
        names.append(name if value is not None else "")
        if value is not None:
            inits[name] = value
    while names[-1] == "":
        names.pop()
    m = contrib_model("AttnLSTM", names, ["Y", "Y_h", "Y_c"], feeds, initializers=inits, hidden_size=H, **attrs)
    return m, feeds


@pytest.mark.parametrize("case", [
    {},
    {"attn_layer": False},
    {"direction": "reverse"},
    {"dirs": 2, "direction": "bidirectional"},
    {"lens": np.array([4, 2], np.int32), "mem_lens": np.array([6, 3], np.int32)},
    {"dirs": 2, "direction": "bidirectional", "lens": np.array([3, 1], np.int32),
     "mem_lens": np.array([2, 5], np.int32)},
    {"input_forget": 1, "clip": 0.5},
    {"activations": ["HardSigmoid", "Tanh", "Relu"], "activation_alpha": [0.3, 0.0, 0.0],
     "activation_beta": [0.4, 0.0, 0.0]},
    {"peepholes": False, "bias": False, "initial": False},
])
def test_attn_lstm(case):
    m, feeds = attn_lstm_model(**case)
    check_against_ort(m, feeds, rtol=1e-4, atol=1e-5, providers_list=REF)


# --- refused at the kernel layer -----------------------------------------------------------------------------

def decoding_model(op):
    """A `op` node (a decoding loop) with a trivial decoder graph; enough to import and be judged."""
    dec_in = helper.make_tensor_value_info("ids", TensorProto.INT32, [1, 1])
    dec_out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1, 4])
    decoder = helper.make_graph([helper.make_node("Cast", ["ids"], ["logits"], to=TensorProto.FLOAT)], "decoder",
                                [dec_in], [dec_out])
    inputs = {"BeamSearch": ["input_ids", "max_length", "", "num_beams", "num_return_sequences"],
              "WhisperBeamSearch": ["input_ids", "max_length", "", "num_beams", "num_return_sequences"],
              "GreedySearch": ["input_ids", "max_length"], "Sampling": ["input_ids", "max_length"]}[op]
    node = helper.make_node(op, inputs, ["sequences"], domain="com.microsoft", name="search", decoder=decoder,
                            eos_token_id=2, pad_token_id=0)
    ins = [helper.make_tensor_value_info(n, TensorProto.INT32, [1, 3] if n == "input_ids" else [1])
           for n in inputs if n]
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("sequences", TensorProto.INT32, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("com.microsoft", 1)])


def refusal_of(report, node_name):
    (node,) = [n for n in report["nodes"] if n["name"] == node_name]
    return node


@pytest.mark.parametrize("op", ["BeamSearch", "GreedySearch", "Sampling", "WhisperBeamSearch"])
def test_decoding_loops_are_refused_at_the_kernel_layer(op, tmp_path):
    path = tmp_path / (op + ".onnx")
    onnx.save(decoding_model(op), path)
    report = ferry.check(path)
    node = refusal_of(report, "search")
    assert node["layer"] == "kernel" and "decoding loop" in node["reason"], json.dumps(node)
    assert all(a["layer"] == "kernel" and "decoding loop" in a["reason"] for a in node["attempts"]), json.dumps(node)
    assert "export the decoder without the loop" in node["remedy"], json.dumps(node)
    with pytest.raises(ferry.Error, match="decoding loop"):
        ferry.InferenceSession(str(path), providers=["cpu", "ref"])


def test_sample_op_is_refused_at_the_kernel_layer(tmp_path):
    path = tmp_path / "sample.onnx"
    x = randn(2, 2)
    onnx.save(contrib_model("SampleOp", ["X"], ["Y"], {"X": x}), path)
    node = refusal_of(ferry.check(path), "sampleop_node")
    assert node["layer"] == "kernel" and "example op" in node["reason"], json.dumps(node)


def test_refused_ops_are_listed_with_their_reason():
    m = ferry.ops(domain="com.microsoft")
    refused = {o["op"]: o.get("refused", "") for o in m["ops"]}
    for op in ["BeamSearch", "GreedySearch", "Sampling", "WhisperBeamSearch", "SampleOp", "PackedAttention",
               "PackedMultiHeadAttention", "DecoderMaskedSelfAttention"]:
        assert refused[op], op
        assert op in m["summary"]["not_implemented"] or "com.microsoft::" + op in m["summary"]["not_implemented"]
    assert not refused["Tokenizer"]
