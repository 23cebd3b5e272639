"""ONNX Runtime's fusions and Gelus (com.microsoft, group "fused") on Ferry against ONNX Runtime itself: FusedConv,
FusedGemm, FusedMatMul, TransposeMatMul, Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd. float32 cases run on Ferry's
`cpu` kernel alone (no fallback, so the cpu kernel really runs) and on `ref`; the other types (the ref kernel's,
computed in float for float16 as ONNX Runtime does through its casts) on `cpu,ref` and `ref`. BiasAdd has no CPU
kernel in ONNX Runtime: its oracle is ONNX Runtime running Add, Add."""
import numpy as np
import pytest
from onnx import helper

from ort_oracle import check_against_ort, contrib_model

CPU_REF = (["cpu"], ["ref"])
ANY_REF = (["cpu", "ref"], ["ref"])
rng = np.random.default_rng(2727)


def rand(shape, dtype=np.float32, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


# ---- FusedConv -----------------------------------------------------------------------------------------------

CONV_ACTS = [("", []), ("Relu", []), ("Tanh", []), ("Sigmoid", []), ("LeakyRelu", [0.15]),
             ("Clip", [-0.4, 0.7]), ("HardSigmoid", [0.3, 0.45])]


@pytest.mark.parametrize("act,params", CONV_ACTS)
@pytest.mark.parametrize("with_z", [False, True])
def test_fused_conv_2d(act, params, with_z):
    x = rand((2, 4, 7, 6))
    w = rand((6, 4, 3, 3))
    b = rand((6,))
    feeds = {"X": x}
    inputs = ["X", "W", "B"]
    if with_z:
        feeds["Z"] = rand((2, 6, 7, 6))
        inputs.append("Z")
    attrs = {"pads": [1, 1, 1, 1]}
    if act:
        attrs["activation"] = act
    if params:
        attrs["activation_params"] = params
    m = contrib_model("FusedConv", inputs, ["Y"], feeds, initializers={"W": w, "B": b}, **attrs)
    check_against_ort(m, feeds, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


@pytest.mark.parametrize("shape,w_shape,attrs", [
    ((1, 3, 11), (4, 3, 3), {"strides": [2], "dilations": [2], "pads": [2, 1]}),
    ((1, 4, 9, 8), (8, 2, 3, 2), {"group": 2, "strides": [2, 1], "auto_pad": "SAME_UPPER"}),
    ((1, 6, 8, 8), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]}),
    ((1, 2, 4, 5, 6), (3, 2, 2, 2, 3), {"pads": [0, 1, 1, 1, 0, 1]}),
])
def test_fused_conv_geometry(shape, w_shape, attrs):
    x = rand(shape)
    w = rand(w_shape)
    m = contrib_model("FusedConv", ["X", "W"], ["Y"], {"X": x}, initializers={"W": w}, activation="Relu", **attrs)
    check_against_ort(m, {"X": x}, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


def test_fused_conv_weights_fed():
    x = rand((1, 3, 6, 6))
    w = rand((5, 3, 1, 1))
    feeds = {"X": x, "W": w}
    m = contrib_model("FusedConv", ["X", "W"], ["Y"], feeds, activation="LeakyRelu", activation_params=[0.2])
    check_against_ort(m, feeds, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


# ---- FusedGemm -----------------------------------------------------------------------------------------------

GEMM_ACTS = [
    ("Relu", {}), ("LeakyRelu", {"activation_alpha": 0.2}), ("Elu", {"activation_alpha": 0.7}),
    ("Selu", {"activation_alpha": 1.6, "activation_gamma": 1.1}),
    ("HardSigmoid", {"activation_alpha": 0.25, "activation_beta": 0.4}), ("Sigmoid", {}), ("Tanh", {}),
    ("Softplus", {}), ("Softsign", {}), ("ThresholdedRelu", {"activation_alpha": 0.3}),
    ("ScaledTanh", {"activation_alpha": 1.5, "activation_beta": 0.6}),
    ("ParametricSoftplus", {"activation_alpha": 0.8, "activation_beta": 1.3}),
]


@pytest.mark.parametrize("act,params", GEMM_ACTS)
def test_fused_gemm_activations(act, params):
    a = rand((5, 16), lo=-2, hi=2)
    b = rand((16, 7))
    c = rand((7,))
    m = contrib_model("FusedGemm", ["A", "B", "C"], ["Y"], {"A": a}, initializers={"B": b, "C": c}, activation=act,
                      **params)
    check_against_ort(m, {"A": a}, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


@pytest.mark.parametrize("ta,tb,alpha,beta,c_shape", [
    (0, 0, 1.0, 1.0, (1, 9)), (1, 0, 0.5, 2.0, (6, 9)), (0, 1, 1.0, 0.5, (6, 1)), (1, 1, 2.0, 1.0, ()),
    (0, 0, 1.5, 0.0, (9,)), (0, 1, 1.0, 1.0, None),
])
def test_fused_gemm_attributes(ta, tb, alpha, beta, c_shape):
    a = rand((12, 6) if ta else (6, 12))
    b = rand((9, 12) if tb else (12, 9))
    feeds = {"A": a, "B": b}
    inputs = ["A", "B"]
    if c_shape is not None:
        feeds["C"] = rand(c_shape)
        inputs.append("C")
    m = contrib_model("FusedGemm", inputs, ["Y"], feeds, transA=ta, transB=tb, alpha=alpha, beta=beta,
                      activation="LeakyRelu", activation_alpha=0.1)
    check_against_ort(m, feeds, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


# ---- FusedMatMul, TransposeMatMul ----------------------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape,attrs", [
    ((5, 8), (8, 6), {}),
    ((8, 5), (8, 6), {"transA": 1}),
    ((5, 8), (6, 8), {"transB": 1, "alpha": 0.125}),
    ((8, 5), (6, 8), {"transA": 1, "transB": 1, "alpha": -2.0}),
    ((2, 3, 7, 16), (2, 3, 9, 16), {"transB": 1, "alpha": 0.25}),  # attention's Q K^T / sqrt(d)
    ((2, 3, 16, 7), (3, 16, 9), {"transA": 1}),
    ((4, 1, 5, 8), (1, 3, 6, 8), {"transB": 1}),
    ((3, 2, 4), (2, 4, 5), {"transBatchA": 1}),
    ((3, 1, 2, 4), (5, 6, 2, 4), {"transBatchA": 1, "transBatchB": 1, "transB": 1, "alpha": 0.5}),
    ((4, 2, 3, 6), (2, 3, 4, 5), {"transBatchA": 1, "transA": 1}),
    ((2, 3, 4, 5), (5, 2, 3, 6), {"transBatchB": 1}),
    ((8,), (8, 6), {"transA": 1}),
    ((5, 8), (8,), {"transB": 1}),
    ((3, 5, 8), (8, 6), {"alpha": 3.0}),
    ((3, 8, 5), (8, 6), {"transA": 1}),
])
def test_fused_matmul(a_shape, b_shape, attrs):
    a = rand(a_shape)
    b = rand(b_shape)
    feeds = {"A": a, "B": b}
    m = contrib_model("FusedMatMul", ["A", "B"], ["Y"], feeds, **attrs)
    check_against_ort(m, feeds, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


@pytest.mark.parametrize("b_shape,attrs", [((32, 48), {}), ((48, 32), {"transB": 1}), ((48, 32), {"transB": 1,
                                                                                                   "alpha": 0.5})])
@pytest.mark.parametrize("rows", [1, 4, 40])
def test_fused_matmul_constant_b(rows, b_shape, attrs):
    # A constant B: packed at creation (transposed like Gemm's); 1 and 4 rows reach the skinny product.
    a = rand((rows, 32))
    b = rand(b_shape)
    m = contrib_model("FusedMatMul", ["A", "B"], ["Y"], {"A": a}, initializers={"B": b}, **attrs)
    check_against_ort(m, {"A": a}, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_fused_matmul_other_types(dtype):
    a = rand((2, 6, 5), dtype)
    b = rand((2, 4, 5), dtype)
    feeds = {"A": a, "B": b}
    m = contrib_model("FusedMatMul", ["A", "B"], ["Y"], feeds, transB=1, alpha=0.5)
    tol = 1e-3 if dtype == np.float16 else 1e-9
    check_against_ort(m, feeds, rtol=tol, atol=tol, providers_list=ANY_REF)


@pytest.mark.parametrize("attrs", [{}, {"transA": 1}, {"transB": 1, "alpha": 0.3}, {"transA": 1, "transB": 1}])
def test_transpose_matmul(attrs):
    a = rand((2, 7, 6))
    b = rand((7, 6))
    feeds = {"A": a, "B": b}
    if not attrs.get("transA"):
        feeds["A"] = rand((2, 6, 7))
    if not attrs.get("transB"):
        feeds["B"] = rand((7, 5))
    else:
        feeds["B"] = rand((5, 7))
    m = contrib_model("TransposeMatMul", ["A", "B"], ["Y"], feeds, **attrs)
    check_against_ort(m, feeds, rtol=1e-4, atol=1e-5, providers_list=CPU_REF)


# ---- Gelu, BiasGelu, FastGelu, QuickGelu ---------------------------------------------------------------------

def test_gelu():
    x = rand((3, 70), lo=-6, hi=6)
    check_against_ort(contrib_model("Gelu", ["X"], ["Y"], {"X": x}), {"X": x}, rtol=1e-5, atol=1e-6,
                      providers_list=CPU_REF)


@pytest.mark.parametrize("c", [7, 16, 64, 100])
def test_bias_gelu(c):
    a = rand((2, 3, c), lo=-5, hi=5)
    b = rand((c,))
    feeds = {"A": a, "B": b}
    check_against_ort(contrib_model("BiasGelu", ["A", "B"], ["C"], feeds), feeds, rtol=1e-5, atol=1e-6,
                      providers_list=CPU_REF)


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("c", [5, 32, 77])
def test_fast_gelu(with_bias, c):
    x = rand((4, c), lo=-5, hi=5)
    feeds = {"X": x}
    inputs = ["X"]
    if with_bias:
        feeds["bias"] = rand((c,))
        inputs.append("bias")
    check_against_ort(contrib_model("FastGelu", inputs, ["Y"], feeds), feeds, rtol=1e-5, atol=1e-6,
                      providers_list=CPU_REF)


@pytest.mark.parametrize("alpha", [None, 1.0, 2.5])
def test_quick_gelu(alpha):
    x = rand((3, 5, 33), lo=-8, hi=8)
    attrs = {} if alpha is None else {"alpha": alpha}
    check_against_ort(contrib_model("QuickGelu", ["X"], ["Y"], {"X": x}, **attrs), {"X": x}, rtol=1e-5, atol=1e-6,
                      providers_list=CPU_REF)


@pytest.mark.parametrize("op,dtype", [("Gelu", np.float16), ("BiasGelu", np.float16), ("FastGelu", np.float16),
                                      ("FastGelu", np.float64), ("QuickGelu", np.float16), ("QuickGelu", np.float64)])
def test_gelus_other_types(op, dtype):
    x = rand((2, 12), dtype, lo=-4, hi=4)
    feeds = {"X": x}
    inputs = ["X"]
    if op in ("BiasGelu", "FastGelu"):
        feeds["B"] = rand((12,), dtype)
        inputs.append("B")
    tol = 2e-3 if dtype == np.float16 else 1e-6
    check_against_ort(contrib_model(op, inputs, ["Y"], feeds), feeds, rtol=tol, atol=tol, providers_list=ANY_REF)


# ---- BiasAdd -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,c", [(np.float32, 16), (np.float32, 37), (np.float16, 24)])
def test_bias_add(dtype, c):
    x = rand((2, 5, c), dtype)
    bias = rand((c,), dtype)
    skip = rand((2, 5, c), dtype)
    feeds = {"X": x, "bias": bias, "skip": skip}
    m = contrib_model("BiasAdd", ["X", "bias", "skip"], ["Y"], feeds)
    # ONNX Runtime runs BiasAdd on CUDA only: its oracle is the definition, Add(Add(X, bias), skip).
    oracle = contrib_model("Add", ["X", "bias"], ["T"], {"X": x, "bias": bias}, domain="")
    oracle.graph.node.append(helper.make_node("Add", ["T", "skip"], ["Y"]))
    oracle.graph.input.append(helper.make_tensor_value_info("skip", oracle.graph.input[0].type.tensor_type.elem_type,
                                                            list(skip.shape)))
    del oracle.graph.output[:]
    oracle.graph.output.append(helper.make_empty_tensor_value_info("Y"))
    check_against_ort(m, feeds, rtol=1e-6, atol=1e-6, providers_list=CPU_REF if dtype == np.float32 else ANY_REF,
                      ort_model=oracle)
