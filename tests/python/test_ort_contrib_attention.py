"""com.microsoft Attention, MultiHeadAttention and RotaryEmbedding against ONNX Runtime 1.30 (the oracle, through
ort_oracle.py): every mask form ONNX Runtime's CPU kernels take, past / present, attention_bias broadcasting, the
attributes and float16; float32 cases run on the cpu kernel (providers ["cpu"]) and on ref."""
import os
import sys
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_oracle import check_against_ort, contrib_model, require_ort, run_ferry  # noqa: E402

CPU = (["cpu"], ["ref"])
F32 = dict(rtol=1e-4, atol=2e-5)
F16 = dict(rtol=2e-2, atol=2e-2)


def rand(rng, *shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# ---- Attention ------------------------------------------------------------------------------------------------


def attention_case(rng, B=2, S=5, din=16, widths=(16, 16, 16), past=0, mask=None, ab=None, dtype=np.float32,
                   outputs=("y",), **attrs):
    x = rand(rng, B, S, din, dtype=dtype)
    w = rand(rng, din, sum(widths), dtype=dtype, scale=0.3)
    b = rand(rng, sum(widths), dtype=dtype, scale=0.3)
    feeds = {"x": x}
    names = ["x", "w", "b", "", "", ""]
    if mask is not None:
        feeds["m"] = mask
        names[3] = "m"
    if past:
        n = attrs["num_heads"]
        feeds["past"] = rand(rng, 2, B, n, past, widths[1] // n, dtype=dtype)
        names[4] = "past"
    if ab is not None:
        feeds["ab"] = ab.astype(dtype)
        names[5] = "ab"
    while names and names[-1] == "":
        names.pop()
    if "qkv_hidden_sizes" not in attrs and len(set(widths)) > 1:
        attrs["qkv_hidden_sizes"] = list(widths)
    model = contrib_model("Attention", names, list(outputs), feeds, initializers={"w": w, "b": b}, **attrs)
    return model, feeds


@pytest.mark.parametrize("case", ["plain", "pruned_input", "v_size", "scale", "heads4"])
def test_attention_shapes(case):
    rng = np.random.default_rng(1)
    kw = {"plain": {}, "pruned_input": {"din": 24}, "v_size": {"widths": (16, 16, 8)}, "scale": {"scale": 0.7},
          "heads4": {"num_heads": 4}}[case]
    kw.setdefault("num_heads", 2)
    m, feeds = attention_case(rng, **kw)
    check_against_ort(m, feeds, providers_list=CPU, **F32)


@pytest.mark.parametrize("form", ["key_lengths", "end_start", "three_b_plus_2", "key_padding", "three_d", "dummy",
                                  "all_masked"])
def test_attention_masks(form):
    rng = np.random.default_rng(2)
    B, S = 2, 5
    mask = {
        "key_lengths": np.array([3, 5], np.int32),
        "end_start": np.array([4, 5, 1, 2], np.int32),
        "three_b_plus_2": np.array([2, 4, 0, 1, 3, 2, 5, 0], np.int32),
        "key_padding": (rng.random((B, S)) > 0.3).astype(np.int32),
        "three_d": (rng.random((B, S, S)) > 0.3).astype(np.int32),
        "dummy": np.ones((B, 1), np.int32),
        "all_masked": np.array([0, 2], np.int32),
    }[form]
    m, feeds = attention_case(rng, B=B, S=S, mask=mask, num_heads=2, mask_filter_value=-1000.0)
    check_against_ort(m, feeds, providers_list=CPU, **F32)


@pytest.mark.parametrize("mask", [None, "key_padding"])
def test_attention_gpt2_causal_past(mask):
    rng = np.random.default_rng(3)
    B, S, P = 2, 4, 3
    m2 = (rng.random((B, P + S)) > 0.2).astype(np.int32) if mask else None
    m, feeds = attention_case(rng, B=B, S=S, past=P, mask=m2, num_heads=2, unidirectional=1,
                              outputs=("y", "present"))
    check_against_ort(m, feeds, providers_list=CPU, **F32)


def test_attention_decode_step():
    rng = np.random.default_rng(4)
    B, P = 2, 6
    m, feeds = attention_case(rng, B=B, S=1, past=P, mask=np.ones((B, P + 1), np.int32), num_heads=4,
                              unidirectional=1, outputs=("y", "present"))
    check_against_ort(m, feeds, providers_list=CPU, **F32)


def test_attention_causal_large_scores():
    # Scores far beyond -mask_filter_value: the causal mask is float's lowest, not an added -10000.
    rng = np.random.default_rng(5)
    m, feeds = attention_case(rng, num_heads=2, unidirectional=1)
    feeds["x"] = feeds["x"] * 200
    check_against_ort(m, feeds, providers_list=CPU, rtol=1e-3, atol=2e-2)


@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_attention_bias(shape):
    rng = np.random.default_rng(6)
    B, S = 2, 5
    ab = rand(rng, shape[0], shape[1], S, S)
    m, feeds = attention_case(rng, B=B, S=S, ab=ab, mask=np.array([4, 5], np.int32), num_heads=2)
    check_against_ort(m, feeds, providers_list=CPU, **F32)


def test_attention_float16():
    rng = np.random.default_rng(7)
    m, feeds = attention_case(rng, num_heads=2, dtype=np.float16, mask=np.array([3, 5], np.int32), unidirectional=1)
    check_against_ort(m, feeds, **F16)


def test_attention_megatron_mask_refused():
    rng = np.random.default_rng(8)
    m, feeds = attention_case(rng, num_heads=2, mask=np.ones((2, 1, 5, 5), np.int32))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        with pytest.raises(Exception, match="4-D"):
            run_ferry(path, feeds, ["cpu", "ref"])


# ---- MultiHeadAttention ----------------------------------------------------------------------------------------


def mha_case(rng, B=2, S=4, L=6, N=2, H=4, Hv=None, bnsh=False, bias=False, mask=None, ab=None, past=0,
             dtype=np.float32, outputs=("y",), **attrs):
    Hv = Hv or H
    feeds = {"q": rand(rng, B, S, N * H, dtype=dtype)}
    if bnsh:
        feeds["k"] = rand(rng, B, N, L, H, dtype=dtype)
        feeds["v"] = rand(rng, B, N, L, H, dtype=dtype)
    else:
        feeds["k"] = rand(rng, B, L, N * H, dtype=dtype)
        feeds["v"] = rand(rng, B, L, N * Hv, dtype=dtype)
    names = ["q", "k", "v", "", "", "", "", ""]
    if bias:
        feeds["bias"] = rand(rng, 2 * N * H + N * Hv, dtype=dtype)
        names[3] = "bias"
    if mask is not None:
        feeds["m"] = mask
        names[4] = "m"
    if ab is not None:
        feeds["ab"] = ab.astype(dtype)
        names[5] = "ab"
    if past:
        feeds["pk"] = rand(rng, B, N, past, H, dtype=dtype)
        feeds["pv"] = rand(rng, B, N, past, Hv, dtype=dtype)
        names[6], names[7] = "pk", "pv"
    while names[-1] == "":
        names.pop()
    model = contrib_model("MultiHeadAttention", names, list(outputs), feeds, num_heads=N, **attrs)
    return model, feeds


@pytest.mark.parametrize("case", ["self", "cross", "bias", "v_size", "bnsh", "bnsh_bias", "scale", "causal",
                                  "causal_cross"])
def test_mha_layouts(case):
    rng = np.random.default_rng(10)
    kw = {"self": {"L": 4}, "cross": {}, "bias": {"bias": True}, "v_size": {"Hv": 3, "bias": True},
          "bnsh": {"bnsh": True}, "bnsh_bias": {"bnsh": True, "bias": True}, "scale": {"scale": 0.25},
          "causal": {"L": 4, "unidirectional": 1}, "causal_cross": {"unidirectional": 1}}[case]
    m, feeds = mha_case(rng, **kw)
    check_against_ort(m, feeds, providers_list=CPU, **F32)


@pytest.mark.parametrize("form", ["key_lengths", "three_b_plus_2", "key_padding", "three_d"])
def test_mha_key_padding_mask(form):
    rng = np.random.default_rng(11)
    B, S, L = 2, 4, 6
    mask = {
        "key_lengths": np.array([3, 6], np.int32),
        "three_b_plus_2": np.array([2, 5, 0, 0, 0, 2, 6, 0], np.int32),
        "key_padding": (rng.random((B, L)) > 0.3).astype(np.int32),
        "three_d": (rng.random((B, S, L)) > 0.3).astype(np.int32),
    }[form]
    m, feeds = mha_case(rng, B=B, S=S, L=L, mask=mask, bias=True)
    check_against_ort(m, feeds, providers_list=CPU, **F32)


@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_mha_attention_bias(shape):
    rng = np.random.default_rng(12)
    ab = rand(rng, shape[0], shape[1], 4, 6)
    m, feeds = mha_case(rng, ab=ab, mask=(rng.random((2, 6)) > 0.3).astype(np.int32))
    check_against_ort(m, feeds, providers_list=CPU, **F32)


@pytest.mark.parametrize("causal", [0, 1])
def test_mha_past_present(causal):
    rng = np.random.default_rng(13)
    B, S, P = 2, 3, 5
    m, feeds = mha_case(rng, B=B, S=S, L=S, past=P, bias=True, mask=(rng.random((B, P + S)) > 0.2).astype(np.int32),
                        outputs=("y", "pk_out", "pv_out"), unidirectional=causal)
    check_against_ort(m, feeds, providers_list=CPU, **F32)


def test_mha_present_without_past():
    rng = np.random.default_rng(14)
    m, feeds = mha_case(rng, bias=True, outputs=("y", "pk_out", "pv_out"))
    check_against_ort(m, feeds, providers_list=CPU, **F32)


def test_mha_qk_output():
    rng = np.random.default_rng(15)
    m, feeds = mha_case(rng, bias=True, mask=np.array([4, 6], np.int32), outputs=("y", "", "", "qk"))
    for o in m.graph.output:
        o.type.tensor_type.elem_type = TensorProto.FLOAT
    check_against_ort(m, feeds, **F32)


def test_mha_float16():
    rng = np.random.default_rng(16)
    m, feeds = mha_case(rng, bias=True, dtype=np.float16, mask=(rng.random((2, 6)) > 0.3).astype(np.int32))
    check_against_ort(m, feeds, **F16)


def test_mha_packed_qkv_refused():
    rng = np.random.default_rng(17)
    feeds = {"q": rand(rng, 2, 4, 2, 3, 4)}
    m = contrib_model("MultiHeadAttention", ["q"], ["y"], feeds, num_heads=2)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        with pytest.raises(Exception, match="packed QKV"):
            run_ferry(path, feeds, ["cpu", "ref"])


# ---- RotaryEmbedding -------------------------------------------------------------------------------------------


def rope_case(rng, B=2, S=5, N=3, D=8, rot=0, four_d=False, interleaved=0, pos="2d", max_pos=16, dtype=np.float32,
              cache_cols=None):
    x = rand(rng, B, N, S, D, dtype=dtype) if four_d else rand(rng, B, S, N * D, dtype=dtype)
    half = (rot or D) // 2
    cols = cache_cols or half
    angles = rng.random((max_pos, cols)) * 6.0
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    if pos == "2d":
        position_ids = rng.integers(0, max_pos, (B, S)).astype(np.int64)
    elif pos == "scalar":
        position_ids = np.array(3, np.int64)
    else:
        position_ids = np.array([2], np.int64)
    feeds = {"x": x, "pos": position_ids}
    attrs = {"interleaved": interleaved}
    if rot:
        attrs.update(rotary_embedding_dim=rot, num_heads=N)
    model = contrib_model("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], feeds,
                          initializers={"cos": cos, "sin": sin}, **attrs)
    return model, feeds


@pytest.mark.parametrize("case", ["plain", "interleaved", "four_d", "scalar_pos", "one_pos", "partial",
                                  "partial_interleaved", "four_d_partial"])
def test_rotary_embedding(case):
    rng = np.random.default_rng(20)
    kw = {"plain": {}, "interleaved": {"interleaved": 1}, "four_d": {"four_d": True},
          "scalar_pos": {"pos": "scalar"}, "one_pos": {"pos": "one"}, "partial": {"rot": 4, "D": 8},
          "partial_interleaved": {"rot": 6, "interleaved": 1}, "four_d_partial": {"four_d": True, "rot": 4}}[case]
    m, feeds = rope_case(rng, **kw)
    check_against_ort(m, feeds, providers_list=CPU, **F32)


def test_rotary_embedding_float16():
    rng = np.random.default_rng(21)
    m, feeds = rope_case(rng, dtype=np.float16, interleaved=1)
    check_against_ort(m, feeds, rtol=1e-2, atol=1e-2)


def test_rotary_embedding_position_out_of_range():
    require_ort()
    rng = np.random.default_rng(22)
    m, feeds = rope_case(rng, pos="scalar", max_pos=6)  # start 3 + 5 positions > 6
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        for providers in (["cpu"], ["ref"]):
            with pytest.raises(Exception, match="position_ids start 3"):
                run_ferry(path, feeds, providers)
