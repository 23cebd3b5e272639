"""ONNX Runtime's contrib tensor ops (com.microsoft, group "tensor") on Ferry against ONNX Runtime itself:
GridSample, Inverse, Trilu, Range, Unique, ExpandDims, CDist, WordConvEmbedding. Each case runs on Ferry's `cpu`
kernel alone (no fallback, so the cpu kernel really runs) and on `ref`, and must match ONNX Runtime's outputs."""
import itertools

import numpy as np
import pytest

from ort_oracle import check_against_ort, contrib_model

CPU_REF = (["cpu"], ["ref"])
rng = np.random.default_rng(27)


def rand(shape, dtype=np.float32, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


# ---- GridSample ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,padding,align", list(itertools.product(
    ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [0, 1])))
def test_grid_sample(mode, padding, align):
    x = rand((2, 3, 5, 6))
    grid = rand((2, 4, 7, 2), lo=-1.3, hi=1.3)
    m = contrib_model("GridSample", ["X", "Grid"], ["Y"], {"X": x, "Grid": grid}, mode=mode, padding_mode=padding,
                      align_corners=align)
    check_against_ort(m, {"X": x, "Grid": grid}, rtol=1e-5, atol=1e-5, providers_list=CPU_REF)


@pytest.mark.parametrize("mode,padding", list(itertools.product(["bilinear", "nearest", "bicubic"],
                                                                 ["border", "reflection"])))
def test_grid_sample_far_outside(mode, padding):
    # Coordinates up to 4 image widths outside: ONNX Runtime pads the taps only (no clamp of the coordinate).
    x = rand((1, 2, 4, 5))
    grid = rand((1, 6, 8, 2), lo=-9.0, hi=9.0)
    for align in (0, 1):
        m = contrib_model("GridSample", ["X", "Grid"], ["Y"], {"X": x, "Grid": grid}, mode=mode, padding_mode=padding,
                          align_corners=align)
        check_against_ort(m, {"X": x, "Grid": grid}, rtol=1e-5, atol=1e-5, providers_list=CPU_REF)


def test_grid_sample_defaults_many_channels():
    # 16 channels: the cpu kernel's channels-last path; no attributes: bilinear, zeros, align_corners 0.
    x = rand((1, 16, 9, 11))
    grid = rand((1, 5, 6, 2), lo=-1.1, hi=1.1)
    m = contrib_model("GridSample", ["X", "Grid"], ["Y"], {"X": x, "Grid": grid})
    check_against_ort(m, {"X": x, "Grid": grid}, rtol=1e-5, atol=1e-5, providers_list=CPU_REF)


# ---- Inverse -------------------------------------------------------------------------------------------------

def well_conditioned(shape, dtype):
    a = rand(shape, np.float64)
    n = shape[-1]
    return (a + 2.0 * n * np.eye(n) * np.sign(rng.uniform(-1, 1, size=shape[:-2] + (1, 1)))).astype(dtype)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (1, 1), (3, 2, 2), (6, 70, 70)])
def test_inverse_float(shape):
    x = well_conditioned(shape, np.float32)
    check_against_ort(contrib_model("Inverse", ["X"], ["Y"], {"X": x}), {"X": x}, rtol=1e-4, atol=1e-6,
                      providers_list=CPU_REF)


def test_inverse_needs_pivoting():
    # A zero on the diagonal: without row exchanges the elimination divides by 0.
    x = np.array([[[0, 1, 2], [1, 0, 3], [4, -3, 8]], [[0, 0, 1], [0, 1, 0], [1, 0, 0]]], dtype=np.float32)
    check_against_ort(contrib_model("Inverse", ["X"], ["Y"], {"X": x}), {"X": x}, rtol=1e-5, atol=1e-6,
                      providers_list=CPU_REF)


def test_inverse_double_and_half():
    x = well_conditioned((3, 6, 6), np.float64)
    check_against_ort(contrib_model("Inverse", ["X"], ["Y"], {"X": x}), {"X": x}, rtol=1e-10, atol=1e-12,
                      providers_list=CPU_REF)
    h = well_conditioned((2, 3, 3), np.float16)
    # ONNX Runtime inverts float16 in half precision (Eigen::half); Ferry computes in float / double.
    check_against_ort(contrib_model("Inverse", ["X"], ["Y"], {"X": h}), {"X": h}, rtol=1e-2, atol=1e-3,
                      providers_list=CPU_REF)


# ---- Trilu ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("upper,k", list(itertools.product([0, 1], [None, 0, 2, -1, -7, 9])))
def test_trilu(upper, k):
    x = rand((2, 5, 6))
    inputs, inits = ["X"], {}
    if k is not None:
        inputs.append("k")
        inits["k"] = np.array(k, dtype=np.int64)
    m = contrib_model("Trilu", inputs, ["Y"], {"X": x}, initializers=inits, upper=upper)
    check_against_ort(m, {"X": x}, providers_list=CPU_REF)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_trilu_types_default_upper(dtype):
    x = (rand((4, 4)) * 100).astype(dtype)
    m = contrib_model("Trilu", ["X", "k"], ["Y"], {"X": x, "k": np.array(1, dtype=np.int64)})
    check_against_ort(m, {"X": x, "k": np.array(1, dtype=np.int64)}, providers_list=CPU_REF)


# ---- Range ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,start,limit,delta", [
    (np.int32, 3, 17, 4), (np.int32, 10, -3, -3), (np.int32, 2, 9, None), (np.int64, -5, 5, None),
    (np.int64, 0, 100000, 7), (np.float32, 0.5, 3.75, 0.25), (np.float32, 1.0, -2.0, -0.3),
    (np.float32, 0.0, 4.5, None), (np.int32, 5, 5, 1), (np.int32, 5, 0, 2)])
def test_range(dtype, start, limit, delta):
    feeds = {"start": np.array(start, dtype=dtype), "limit": np.array(limit, dtype=dtype)}
    inputs = ["start", "limit"]
    if delta is not None:
        feeds["delta"] = np.array(delta, dtype=dtype)
        inputs.append("delta")
    # As graph inputs (the length is the run's data) and as initializers (known when the kernel is prepared).
    check_against_ort(contrib_model("Range", inputs, ["Y"], feeds), feeds, providers_list=CPU_REF)
    check_against_ort(contrib_model("Range", inputs, ["Y"], {}, initializers=feeds), {}, providers_list=CPU_REF)


@pytest.mark.parametrize("dtype", [np.float64, np.int16])
def test_range_ref_types(dtype):
    # The cpu kernel takes float32, int32 and int64; these run on ref (cpu,ref falls back).
    feeds = {"start": np.array(1, dtype=dtype), "limit": np.array(11, dtype=dtype)}
    check_against_ort(contrib_model("Range", ["start", "limit"], ["Y"], feeds), feeds)
    feeds["delta"] = np.array(3, dtype=dtype)
    check_against_ort(contrib_model("Range", ["start", "limit", "delta"], ["Y"], feeds), feeds)


# ---- Unique --------------------------------------------------------------------------------------------------

def test_unique_order_of_appearance():
    x = np.array([2.0, 1.0, 1.0, 3.0, 4.0, 3.0, -0.0, 0.0, 2.0, 7.5], dtype=np.float32)
    check_against_ort(contrib_model("Unique", ["x"], ["y", "idx", "counts"], {"x": x}), {"x": x},
                      providers_list=CPU_REF)


def test_unique_random_and_single():
    x = rng.integers(-20, 20, size=500).astype(np.float32) / 4
    check_against_ort(contrib_model("Unique", ["x"], ["y", "idx", "counts"], {"x": x}), {"x": x},
                      providers_list=CPU_REF)
    one = np.array([5.0], dtype=np.float32)
    check_against_ort(contrib_model("Unique", ["x"], ["y", "idx", "counts"], {"x": one}), {"x": one},
                      providers_list=CPU_REF)


def test_unique_nans_are_distinct():
    x = np.array([np.nan, 1.0, np.nan, 1.0, 2.0], dtype=np.float32)
    check_against_ort(contrib_model("Unique", ["x"], ["y", "idx", "counts"], {"x": x}), {"x": x},
                      providers_list=CPU_REF)


# ---- ExpandDims ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4, -2])
def test_expand_dims(axis):
    x = rand((2, 3, 4))
    m = contrib_model("ExpandDims", ["X", "axis"], ["Y"], {"X": x}, initializers={"axis": np.array(axis, np.int32)})
    check_against_ort(m, {"X": x}, providers_list=CPU_REF)


def test_expand_dims_run_time_axis_and_types():
    for x in (rand((3, 5)), (rand((2, 2)) * 50).astype(np.int64), rand((4,)) > 0):
        feeds = {"X": x, "axis": np.array(-1, dtype=np.int32)}
        check_against_ort(contrib_model("ExpandDims", ["X", "axis"], ["Y"], feeds), feeds, providers_list=CPU_REF)


# ---- CDist ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("metric,dtype,m,k,n", [
    ("sqeuclidean", np.float32, 5, 4, 7), ("euclidean", np.float32, 5, 4, 7), ("euclidean", np.float32, 33, 70, 20),
    ("sqeuclidean", np.float64, 6, 9, 3), ("euclidean", np.float64, 40, 17, 12), ("sqeuclidean", np.float32, 1, 1, 1),
    (None, np.float32, 8, 3, 16)])
def test_cdist(metric, dtype, m, k, n):
    a, b = rand((m, n), dtype), rand((k, n), dtype)
    attrs = {} if metric is None else {"metric": metric}
    model = contrib_model("CDist", ["A", "B"], ["C"], {"A": a, "B": b}, **attrs)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    check_against_ort(model, {"A": a, "B": b}, rtol=tol, atol=tol * 10, providers_list=CPU_REF)


# ---- WordConvEmbedding ---------------------------------------------------------------------------------------

def word_conv_inputs(words=6, word_len=8, filters=5, window=3, char_dim=4, vocab=20):
    seq = rng.integers(1, vocab, size=(words, word_len)).astype(np.int32)
    seq[0, 5:] = 0            # a word of 5 characters, padded
    seq[1, 1:] = 0            # one character, shorter than the window: the padding is looked up (row 0 of C)
    seq[2, 3] = 0             # a 0 inside: the length counts the ids > 0
    seq[3, 2:] = 0
    w = rand((filters, 1, window, char_dim), lo=-0.7, hi=0.7)
    bias = rand((filters,), lo=-0.3, hi=0.3)
    c = rand((vocab, char_dim))
    return seq, w, bias, c


@pytest.mark.parametrize("attrs", [{}, {"embedding_size": 5, "conv_window_size": 3, "char_embedding_size": 4}])
def test_word_conv_embedding(attrs):
    seq, w, bias, c = word_conv_inputs()
    m = contrib_model("WordConvEmbedding", ["Sequence", "W", "B", "C"], ["Y"], {"Sequence": seq},
                      initializers={"W": w, "B": bias, "C": c}, **attrs)
    check_against_ort(m, {"Sequence": seq}, rtol=1e-5, atol=2e-6, providers_list=CPU_REF)


def test_word_conv_embedding_larger_inputs():
    seq, w, bias, c = word_conv_inputs(words=40, word_len=12, filters=32, window=4, char_dim=16, vocab=60)
    feeds = {"Sequence": seq, "W": w, "B": bias, "C": c}
    m = contrib_model("WordConvEmbedding", ["Sequence", "W", "B", "C"], ["Y"], feeds)
    check_against_ort(m, feeds, rtol=1e-5, atol=5e-6, providers_list=CPU_REF)
