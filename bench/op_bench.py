#!/usr/bin/python3
"""The per-op benchmark: single-node ONNX models, Ferry's cpu backend against ONNX Runtime, op by op.

For every op the cpu backend registers (`ferry ops --backend cpu --json`), the table CASES below gives two or three
realistic shapes (taken from ResNet/MobileNet, BERT/GPT-2, U-Net/YOLO and RNN models); each becomes a one-node model
(onnx.helper; weights and other constant inputs as initializers) in --models DIR, and runs on Ferry with
`--backends cpu` (so a missing or rejected cpu kernel fails loudly instead of falling back to ref) and on ORT,
interleaved in lock step (bench/compare_ort.py's bench()), batch 1, 1 thread unless --threads. Printed: per case the
shape, Ferry p50, ORT p50, their ratio, then the node's own time in each runtime's profiler (a second lock-step
pass, Ferry --profile-summary against ORT's trace; --no-kernel-times skips it) and its ratio, and the largest
relative difference of the outputs; then the geometric means and the worst ratios; the cpu ops without a table
entry ("no benchmark shape"), and the cases that failed. The whole-run p50 of ORT includes onnxruntime-node's
per-run costs (inputs and outputs turned into JS typed arrays, a hop to a worker thread: ~0.3 ms, more for large
outputs), which dominate a node under a millisecond; the node-time ratio leaves them out on both sides.

    /usr/bin/python3 bench/op_bench.py [--ferry build/bin/ferry] [--only Conv,MatMul] [--skip LSTM]
        [--rounds 2] [--runs 10] [--threads 1] [--json FILE] [--all]
    /usr/bin/python3 bench/op_bench.py --list      # the cpu ops, their cases, and the gaps; no run

--all also runs the table's cases for ops the cpu backend does not register (yet): they fail, loudly.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper as onh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from compare_ort import (Stepper, alternate, bench, check_outputs, ferry_cmd, input_specs,  # noqa: E402
                         ort_cmd)  # the lock-step measurement and the output comparison
from profile_ort import ort_node_ms  # noqa: E402  ORT's per-node kernel times from its trace


# ----------------------------------------------------------------------------------------------------------------
# Input specs: F = float32 fed at run time, I = int64 fed, B = bool fed, C = a constant (initializer), "" = an
# omitted optional input.

class F:
    def __init__(self, shape, lo=None, hi=None):
        self.shape, self.lo, self.hi = list(shape), lo, hi

    def value(self, rng):
        if self.lo is None:
            return rng.standard_normal(self.shape).astype(np.float32)
        return rng.uniform(self.lo, self.hi, self.shape).astype(np.float32)


class I:
    def __init__(self, shape, high, low=0):
        self.shape, self.high, self.low = list(shape), high, low

    def value(self, rng):
        return rng.integers(self.low, self.high, self.shape).astype(np.int64)


class B:
    def __init__(self, shape):
        self.shape = list(shape)

    def value(self, rng):
        return rng.random(self.shape) < 0.5


class V:
    """Fed at run time with exactly this value (a shape, a range limit: as a constant, the runtimes would fold the
    node away)."""

    def __init__(self, array):
        self.array = array

    def value(self, rng):
        return self.array


class C:
    """A constant: an array as given, or a random float32 (std `scale`) of a shape."""

    def __init__(self, value, scale=0.1):
        self.array = value if isinstance(value, np.ndarray) else None
        self.shape, self.scale = (None if self.array is not None else list(value)), scale

    def value(self, rng):
        if self.array is not None:
            return self.array
        return (rng.standard_normal(self.shape) * self.scale).astype(np.float32)


def i64(*v):
    return np.array(v, dtype=np.int64)


def f32(*v):
    return np.array(v, dtype=np.float32)


def case(label, inputs, opset=17, outputs=1, domain="", **attrs):
    return {"label": label.replace(", ", ","), "inputs": inputs, "opset": opset, "outputs": outputs,
            "domain": domain, "attrs": attrs}


IMG = [1, 64, 112, 112]   # a ResNet stem activation
TXT = [1, 128, 768]       # BERT-base hidden states
FEAT = [1, 256, 56, 56]   # a ResNet layer1 activation


def unary(lo=None, hi=None, opset=17, **attrs):
    return [case(str(IMG), [F(IMG, lo, hi)], opset, **attrs), case(str(TXT), [F(TXT, lo, hi)], opset, **attrs)]


def binary(opset=17, lo=None, hi=None, ints=False):
    if ints:
        return [case(f"{IMG} int64 same shape", [I(IMG, 100, 1), I(IMG, 100, 1)], opset),
                case(f"{TXT} int64 + [768]", [I(TXT, 100, 1), I([768], 100, 1)], opset)]
    return [case(f"{IMG} same shape", [F(IMG, lo, hi), F(IMG, lo, hi)], opset),
            case(f"{TXT} + [768]", [F(TXT, lo, hi), F([768], lo, hi)], opset),
            case(f"{FEAT} + [1,256,1,1]", [F(FEAT, lo, hi), F([1, 256, 1, 1], lo, hi)], opset)]


_RNG = np.random.default_rng(24)  # fixed inputs for the cases fed with V(...)


def bitwise():
    return [case(f"{IMG} int32 same shape", [V(_RNG.integers(-1 << 30, 1 << 30, IMG, dtype=np.int32)),
                                              V(_RNG.integers(-1 << 30, 1 << 30, IMG, dtype=np.int32))], 18)]


def _unpool_indices(channels, size):
    """MaxPool 2x2/2 indices into a [1, channels, 2*size, 2*size] output: one tap of each window."""
    c, h, w = np.meshgrid(np.arange(channels), np.arange(size), np.arange(size), indexing="ij")
    taps = _RNG.integers(0, 4, c.shape)
    return ((c * 2 * size + 2 * h + taps // 2) * 2 * size + 2 * w + taps % 2).reshape(1, channels, size, size) \
        .astype(np.int64)


def compare():
    return [case(f"{IMG} same shape", [F(IMG), F(IMG)]), case(f"{TXT} vs [768]", [F(TXT), F([768])])]


def logical():
    return [case(f"{IMG} same shape", [B(IMG), B(IMG)]), case("[1,1,128,128] vs [1,12,128,128]",
                                                            [B([1, 1, 128, 128]), B([1, 12, 128, 128])])]


def reduce(opset=18):
    """Reductions with axes as an input (opset 18; ReduceSum since 13)."""
    return [case(f"{FEAT} axes 2,3 keepdims", [F(FEAT, 0.1, 2.0), C(i64(2, 3))], opset, keepdims=1),
            case(f"{TXT} axes -1", [F(TXT, 0.1, 2.0), C(i64(-1))], opset, keepdims=1),
            case("[1,12,128,128] axes 1 no keepdims", [F([1, 12, 128, 128], 0.1, 2.0), C(i64(1))], opset, keepdims=0)]


def lstm_like(op, gates):
    def c(seq, hidden, inp, direction="forward", **attrs):
        dirs = 2 if direction == "bidirectional" else 1
        return case(f"seq {seq} hidden {hidden} input {inp}{' bidirectional' if dirs == 2 else ''}",
                    [F([seq, 1, inp]), C([dirs, gates * hidden, inp]), C([dirs, gates * hidden, hidden]),
                     C([dirs, 2 * gates * hidden])], 14, outputs=1, hidden_size=hidden, direction=direction, **attrs)
    extra = {"linear_before_reset": 1} if op == "GRU" else {}
    return [c(32, 256, 256, **extra), c(64, 512, 256, **extra), c(32, 256, 128, "bidirectional", **extra)]


def boxes(n, lo, hi, seed=7):
    """[1, n, 4] float32 boxes (x1, y1, x2, y2) with x1 < x2, y1 < y2, inside [lo, hi]."""
    p = np.sort(np.random.default_rng(seed).uniform(lo, hi, (n, 2, 2)), axis=1)  # [[x1, y1], [x2, y2]]
    return p.reshape(1, n, 4).astype(np.float32)



CASES = {
    # -- convolutions, GEMMs --
    "Conv": [case("[1,64,56,56] 3x3 64 pad 1", [F([1, 64, 56, 56]), C([64, 64, 3, 3]), C([64])],
                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             case("[1,3,224,224] 7x7 s2 64", [F([1, 3, 224, 224]), C([64, 3, 7, 7]), C([64])],
                  kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3]),
             case("[1,144,56,56] depthwise 3x3", [F([1, 144, 56, 56]), C([144, 1, 3, 3]), C([144])],
                  kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=144),
             case("[1,256,56,56] 1x1 64", [F(FEAT), C([64, 256, 1, 1]), C([64])], kernel_shape=[1, 1])],
    "ConvTranspose": [case("[1,64,28,28] 4x4 s2 -> 32", [F([1, 64, 28, 28]), C([64, 32, 4, 4]), C([32])],
                           kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]),
                      case("[1,256,14,14] 2x2 s2 -> 128", [F([1, 256, 14, 14]), C([256, 128, 2, 2]), C([128])],
                           kernel_shape=[2, 2], strides=[2, 2]),
                      # an audio decoder's upsampling (1-D) and a 3-D U-Net's (volumes)
                      case("[1,256,1000] k4 s2 -> 128", [F([1, 256, 1000]), C([256, 128, 4]), C([128])],
                           kernel_shape=[4], strides=[2], pads=[1, 1]),
                      case("[1,32,16,32,32] 3x3x3 s2 -> 16", [F([1, 32, 16, 32, 32]), C([32, 16, 3, 3, 3]), C([16])],
                           kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6, output_padding=[1, 1, 1])],
    "MatMul": [case("[1,128,768]x[768,768]", [F(TXT), C([768, 768])]),
               case("[1,128,768]x[768,3072]", [F(TXT), C([768, 3072])]),
               case("[1,12,128,64]x[1,12,64,128]", [F([1, 12, 128, 64]), F([1, 12, 64, 128])]),
               # skinny products on large constant weights: a decoder step, a detector's box head (9 boxes)
               case("[1,1,768]x[768,3072]", [F([1, 1, 768]), C([768, 3072])]),
               case("[9,12544]x[12544,1024]", [F([9, 12544]), C([12544, 1024])])],
    "Gemm": [case("[1,2048]x[1000,2048]^T + bias", [F([1, 2048]), C([1000, 2048]), C([1000])], transB=1),
             case("[16,768]x[768,768] + bias", [F([16, 768]), C([768, 768]), C([768])])],
    # -- normalizations, pooling, softmax --
    "BatchNormalization": [case(str(IMG), [F(IMG), C([64]), C([64]), C([64]), C(np.ones(64, np.float32))]),
                           case(str(FEAT), [F(FEAT), C([256]), C([256]), C([256]), C(np.ones(256, np.float32))])],
    "LayerNormalization": [case(f"{TXT} axis -1", [F(TXT), C([768]), C([768])], axis=-1),
                           case("[1,197,768] axis -1", [F([1, 197, 768]), C([768]), C([768])], axis=-1),
                           case("[1,3136,96] axis -1", [F([1, 3136, 96]), C([96]), C([96])], axis=-1)],
    "RMSNormalization": [case(f"{TXT} axis -1", [F(TXT), C([768])], 23, axis=-1),
                         case("[1,64,4096] axis -1", [F([1, 64, 4096]), C([4096])], 23, axis=-1)],
    "InstanceNormalization": [case(str(IMG), [F(IMG), C([64]), C([64])]),
                              case("[1,256,64,64]", [F([1, 256, 64, 64]), C([256]), C([256])])],
    "GroupNormalization": [case(f"{FEAT} 32 groups", [F(FEAT), C([256]), C([256])], 21, num_groups=32),
                           case("[1,512,32,32] 32 groups", [F([1, 512, 32, 32]), C([512]), C([512])], 21,
                                num_groups=32)],
    "LpNormalization": [case(f"{TXT} axis -1 p 2", [F(TXT)], axis=-1, p=2),
                        case(f"{FEAT} axis 1 p 2", [F(FEAT)], axis=1, p=2)],
    "LRN": [case("[1,64,56,56] size 5", [F([1, 64, 56, 56])], size=5, alpha=1e-4, beta=0.75, bias=2.0),
            case("[1,96,55,55] size 5", [F([1, 96, 55, 55])], size=5, alpha=1e-4, beta=0.75, bias=2.0)],
    "MeanVarianceNormalization": [case(f"{FEAT} axes 0,2,3", [F(FEAT)], axes=[0, 2, 3]),
                                  case(f"{TXT} axes 2", [F(TXT)], axes=[2])],
    "Softmax": [case("[1,12,128,128] axis -1", [F([1, 12, 128, 128])], axis=-1),
                case("[1,1000] axis -1", [F([1, 1000])], axis=-1),
                case("[1,128,30522] axis -1", [F([1, 128, 30522])], axis=-1)],
    "LogSoftmax": [case("[1,12,128,128] axis -1", [F([1, 12, 128, 128])], axis=-1),
                   case("[1,128,30522] axis -1", [F([1, 128, 30522])], axis=-1)],
    "Hardmax": [case("[1,1000] axis -1", [F([1, 1000])], axis=-1), case(f"{TXT} axis -1", [F(TXT)], axis=-1)],
    "MaxPool": [case(f"{IMG} 3x3 s2 pad 1", [F(IMG)], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                case("[1,256,28,28] 2x2 s2", [F([1, 256, 28, 28])], kernel_shape=[2, 2], strides=[2, 2]),
                case("[1,256,20,20] 5x5 s1 pad 2 (SPPF)", [F([1, 256, 20, 20])], kernel_shape=[5, 5],
                     pads=[2, 2, 2, 2])],
    "AveragePool": [case("[1,64,56,56] 3x3 s1 pad 1", [F([1, 64, 56, 56])], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=0),
                    case("[1,256,28,28] 2x2 s2", [F([1, 256, 28, 28])], kernel_shape=[2, 2], strides=[2, 2])],
    "GlobalAveragePool": [case("[1,2048,7,7]", [F([1, 2048, 7, 7])]), case(str(FEAT), [F(FEAT)])],
    "GlobalMaxPool": [case("[1,2048,7,7]", [F([1, 2048, 7, 7])]), case(str(FEAT), [F(FEAT)])],
    "LpPool": [case("[1,64,56,56] 3x3 p2", [F([1, 64, 56, 56])], kernel_shape=[3, 3], p=2)],
    "GlobalLpPool": [case("[1,2048,7,7] p2", [F([1, 2048, 7, 7])], p=2)],
    # -- recurrent --
    "LSTM": lstm_like("LSTM", 4),
    "GRU": lstm_like("GRU", 3),
    "RNN": lstm_like("RNN", 1),
    # -- resize and data movement --
    "Resize": [case("[1,256,28,28] nearest x2", [F([1, 256, 28, 28]), "", C(f32(1, 1, 2, 2))], 13, mode="nearest"),
               case("[1,64,112,112] linear x2 half_pixel", [F(IMG), "", C(f32(1, 1, 2, 2))], 13, mode="linear",
                    coordinate_transformation_mode="half_pixel"),
               case("[1,3,480,640] linear -> 224x224", [F([1, 3, 480, 640]), "", "", C(i64(1, 3, 224, 224))], 13,
                    mode="linear"),
               case("[1,64,56,56] cubic x2", [F([1, 64, 56, 56]), "", C(f32(1, 1, 2, 2))], 13, mode="cubic")],
    "Upsample": [],
    "Transpose": [case("[1,128,12,64] perm 0,2,1,3", [F([1, 128, 12, 64])], perm=[0, 2, 1, 3]),
                  case(f"{FEAT} perm 0,2,3,1", [F(FEAT)], perm=[0, 2, 3, 1]),
                  case("[1,12,128,64] perm 0,1,3,2", [F([1, 12, 128, 64])], perm=[0, 1, 3, 2])],
    "Concat": [case("2x [1,64,56,56] axis 1", [F([1, 64, 56, 56]), F([1, 64, 56, 56])], axis=1),
               case("3x [1,128,256] axis 2", [F([1, 128, 256])] * 3, axis=2),
               case("[1,128,40,40]+[1,256,40,40] axis 1", [F([1, 128, 40, 40]), F([1, 256, 40, 40])], axis=1)],
    "Split": [case("[1,128,2304] axis 2 into 3", [F([1, 128, 2304]), C(i64(768, 768, 768))], 13, outputs=3,
                   axis=2),
              case(f"{FEAT} axis 1 into 2", [F(FEAT), C(i64(128, 128))], 13, outputs=2, axis=1)],
    "Slice": [case("[1,128,2304] [..., 768:1536]", [F([1, 128, 2304]), C(i64(768)), C(i64(1536)), C(i64(2))]),
              case(f"{IMG} [:, :, ::2, ::2]", [F(IMG), C(i64(0, 0)), C(i64(112, 112)), C(i64(2, 3)),
                                               C(i64(2, 2))]),
              case(f"{TXT} [:, 0]", [F(TXT), C(i64(0)), C(i64(1)), C(i64(1))])],
    "Reshape": [case(f"{TXT} -> [1,128,12,64]", [F(TXT), C(i64(1, 128, 12, 64))]),
                case(f"{FEAT} -> [1,256,3136]", [F(FEAT), C(i64(1, 256, -1))])],
    "Flatten": [case("[1,2048,7,7] axis 1", [F([1, 2048, 7, 7])], axis=1), case(str(FEAT), [F(FEAT)], axis=1)],
    "Squeeze": [case("[1,2048,1,1] axes 2,3", [F([1, 2048, 1, 1]), C(i64(2, 3))]),
                case("[1,128,1,768] axes 2", [F([1, 128, 1, 768]), C(i64(2))])],
    "Unsqueeze": [case("[1,128] axes 1,2", [F([1, 128]), C(i64(1, 2))]), case(f"{TXT} axes 0", [F(TXT), C(i64(0))])],
    "Identity": [case(str(TXT), [F(TXT)]), case(str(IMG), [F(IMG)])],
    "Expand": [case("[1,1,128,128] -> [1,12,128,128]", [F([1, 1, 128, 128]), C(i64(1, 12, 128, 128))]),
               case("[768] -> [1,128,768]", [F([768]), C(i64(1, 128, 768))])],
    "Tile": [case("[1,1,128,64] x [1,12,1,1]", [F([1, 1, 128, 64]), C(i64(1, 12, 1, 1))]),
             case("[1,64,56,56] x [1,1,2,2]", [F([1, 64, 56, 56]), C(i64(1, 1, 2, 2))])],
    "Pad": [case("[1,64,56,56] constant 1", [F([1, 64, 56, 56]), C(i64(0, 0, 1, 1, 0, 0, 1, 1))], mode="constant"),
            case("[1,3,224,224] reflect 3", [F([1, 3, 224, 224]), C(i64(0, 0, 3, 3, 0, 0, 3, 3))], mode="reflect"),
            case("[1,64,112,112] edge 1", [F(IMG), C(i64(0, 0, 1, 1, 0, 0, 1, 1))], mode="edge")],
    "Gather": [case("[30522,768] embedding, [1,128] ids", [C([30522, 768]), I([1, 128], 30522)], axis=0),
               case(f"{TXT} index 0 axis 1", [F(TXT), C(np.array(0, dtype=np.int64))], axis=1),
               case("[1,12,128,128] 64 ids axis 3", [F([1, 12, 128, 128]), I([64], 128)], axis=3)],
    "GatherElements": [case("[1000,256] axis 1", [F([1000, 256]), I([1000, 256], 256)], axis=1),
                       case(f"{TXT} axis 2", [F(TXT), I(TXT, 768)], axis=2)],
    "GatherND": [case("[1,128,768] 32 rows", [F(TXT), I([1, 32, 1], 128)], batch_dims=1)],
    "ScatterND": [case("[1,128,768] 32 rows", [F(TXT), C(np.stack([np.zeros(32, np.int64), np.arange(0, 128, 4)], 1)),
                                               F([32, 768])], 16)],
    "ScatterElements": [case("[1000,256] axis 1", [F([1000, 256]), I([1000, 64], 256), F([1000, 64])], 16,
                             axis=1)],
    "Where": [case("[1,1,128,128] mask, [1,12,128,128], scalar",
                   [B([1, 1, 128, 128]), F([1, 12, 128, 128]), C(f32(-1e4).reshape(()))]),
              case(f"{IMG} all same shape", [B(IMG), F(IMG), F(IMG)])],
    "DepthToSpace": [case(f"{FEAT} block 2 DCR", [F(FEAT)], blocksize=2, mode="DCR"),
                     case("[1,48,112,112] block 2 CRD", [F([1, 48, 112, 112])], blocksize=2, mode="CRD")],
    "SpaceToDepth": [case(f"{IMG} block 2", [F(IMG)], blocksize=2),
                     case("[1,3,640,640] block 2", [F([1, 3, 640, 640])], blocksize=2)],
    "Cast": [case(f"{TXT} float32 -> float16", [F(TXT)], to=onnx.TensorProto.FLOAT16),
             case("[1,1,128,128] bool -> float32", [B([1, 1, 128, 128])], to=onnx.TensorProto.FLOAT),
             case(f"{IMG} float32 -> int64", [F(IMG)], to=onnx.TensorProto.INT64)],
    "CumSum": [case(f"{TXT} axis 1", [F(TXT), C(np.array(1, dtype=np.int64))]),
               case("[1,25200] axis 1", [F([1, 25200]), C(np.array(1, dtype=np.int64))])],
    "TopK": [case("[1,1000] k 5", [F([1, 1000]), C(i64(5))], outputs=2, axis=-1),
             case("[1,25200] k 100", [F([1, 25200]), C(i64(100))], outputs=2, axis=-1)],
    "ArgMax": [case("[1,1000] axis 1", [F([1, 1000])], axis=1), case(f"{TXT} axis -1", [F(TXT)], axis=-1)],
    "ArgMin": [case("[1,1000] axis 1", [F([1, 1000])], axis=1), case(f"{TXT} axis -1", [F(TXT)], axis=-1)],
    "NonZero": [case("[1,64,56,56] float, ~all nonzero", [F([1, 64, 56, 56])]),
                case("[1,25200] float, 50% zero", [V(np.where(np.arange(25200) % 2 == 0, 1.0, 0.0)
                                                      .astype(np.float32).reshape(1, 25200))])],
    "Trilu": [case("[1,12,128,128] upper", [F([1, 12, 128, 128])], upper=1),
              case("[1,128,128] lower k 0", [F([1, 128, 128]), C(np.array(0, dtype=np.int64))], upper=0)],
    "Range": [case("int64 0..4096 step 1", [V(np.array(0, np.int64)), V(np.array(4096, np.int64)),
                                            V(np.array(1, np.int64))]),
              case("float 0..1e5 step 0.5", [V(np.array(0, np.float32)), V(np.array(1e5, np.float32)),
                                             V(np.array(0.5, np.float32))])],
    "ConstantOfShape": [case("[1,12,128,128]", [V(i64(1, 12, 128, 128))], value=onh.from_array(f32(0.0))),
                        case("[1,128,768]", [V(i64(1, 128, 768))], value=onh.from_array(f32(1.0)))],
    "Dropout": [case(f"{TXT} inference", [F(TXT)], 13), case(f"{IMG} inference", [F(IMG)], 13)],
    "Shape": [case(str(TXT), [F(TXT)], 15)],
    "Size": [case(str(TXT), [F(TXT)])],
    "OneHot": [case("[1,128] ids depth 1000", [I([1, 128], 1000), C(i64(1000)), C(f32(0, 1))], axis=-1)],
    "Einsum": [case("bhqd,bhkd->bhqk [1,12,128,64]", [F([1, 12, 128, 64]), F([1, 12, 128, 64])], 12,
                    equation="bhqd,bhkd->bhqk")],
    "GridSample": [case("[1,64,28,28] grid [1,28,28,2] bilinear", [F([1, 64, 28, 28]), F([1, 28, 28, 2], -1, 1)], 16,
                        align_corners=1),
                   case("[1,96,56,56] grid [1,56,56,2] bilinear", [F([1, 96, 56, 56]), F([1, 56, 56, 2], -1, 1)], 16)],
    "RoiAlign": [case("[1,256,50,50] 100 rois 7x7", [F([1, 256, 50, 50]), V(boxes(100, 0, 49)[0]),
                                                       V(np.zeros(100, np.int64))], 16, output_height=7,
                      output_width=7, sampling_ratio=2, spatial_scale=1.0)],
    "NonMaxSuppression": [case("1000 boxes, 80 classes, top 100", [V(boxes(1000, 0, 600)), F([1, 80, 1000], 0, 1),
                                                                   C(i64(100)), C(f32(0.5)), C(f32(0.05))])],
    # -- elementwise --
    "Add": binary(), "Sub": binary(), "Mul": binary(), "Div": binary(lo=0.5, hi=2.0),
    "Pow": [case(f"{IMG} ^ 2 (scalar)", [F(IMG, 0.1, 2.0), C(f32(2.0).reshape(()))]),
            case(f"{TXT} ^ {TXT}", [F(TXT, 0.1, 2.0), F(TXT, -2.0, 2.0)])],
    "Mod": [case(f"{IMG} fmod", [F(IMG), F(IMG, 0.5, 2.0)], fmod=1),
            case(f"{TXT} int64 % [768]", [I(TXT, 1000), I([768], 100, 1)], fmod=0)],
    "PRelu": [case(f"{IMG} slope [64,1,1]", [F(IMG), C([64, 1, 1])]),
              case(f"{TXT} slope [768]", [F(TXT), C([768])])],
    "Max": binary(), "Min": binary(), "Mean": binary(),
    "Sum": [case("3x " + str(IMG), [F(IMG)] * 3), case(f"{TXT} + [768]", [F(TXT), F([768])])],
    "Equal": [case(f"{IMG} int64 same shape", [I(IMG, 4), I(IMG, 4)]), case(f"{TXT} int64 vs [768]",
                                                                         [I(TXT, 4), I([768], 4)])],
    "Less": compare(), "Greater": compare(), "LessOrEqual": compare(), "GreaterOrEqual": compare(),
    "And": logical(), "Or": logical(), "Xor": logical(),
    "Not": [case(str(IMG), [B(IMG)])],
    "Clip": [case(f"{IMG} [0,6]", [F(IMG), C(f32(0).reshape(())), C(f32(6).reshape(()))]),
             case(f"{TXT} [-1,1]", [F(TXT), C(f32(-1).reshape(())), C(f32(1).reshape(()))])],
    "Gelu": unary(opset=20), "Erf": unary(), "Relu": unary(), "Sigmoid": unary(), "Tanh": unary(), "Exp": unary(),
    "Abs": unary(), "Neg": unary(), "Sqrt": unary(0.01, 10.0), "Log": unary(0.01, 10.0),
    "Reciprocal": unary(0.1, 10.0), "LeakyRelu": unary(alpha=0.1), "Elu": unary(), "Selu": unary(), "Celu": unary(),
    "HardSigmoid": unary(), "HardSwish": unary(), "Softplus": unary(), "Softsign": unary(), "Mish": unary(opset=18),
    "ThresholdedRelu": unary(), "Shrink": unary(), "Floor": unary(), "Ceil": unary(), "Round": unary(),
    "Sign": unary(), "Sin": unary(), "Cos": unary(), "Tan": unary(-1.0, 1.0), "Asin": unary(-0.99, 0.99),
    "Acos": unary(-0.99, 0.99), "Atan": unary(), "Sinh": unary(-3.0, 3.0), "Cosh": unary(-3.0, 3.0),
    "Asinh": unary(), "Acosh": unary(1.01, 10.0), "Atanh": unary(-0.99, 0.99), "IsNaN": unary(), "IsInf": unary(),
    # -- reductions --
    "ReduceMean": reduce(), "ReduceSum": reduce(), "ReduceMax": reduce(), "ReduceMin": reduce(),
    "ReduceProd": [case("[1,128,16] axes -1", [F([1, 128, 16], 0.9, 1.1), C(i64(-1))], 18, keepdims=1),
                   case("[1,256,7,7] axes 2,3", [F([1, 256, 7, 7], 0.95, 1.05), C(i64(2, 3))], 18, keepdims=1)],
    "ReduceL1": reduce(), "ReduceL2": reduce(), "ReduceLogSum": reduce(), "ReduceLogSumExp": reduce(),
    "ReduceSumSquare": reduce(),
    # -- integer bit ops, casts, data movement, losses (ops added to cpu in issue 24's second pass) --
    "BitShift": [case(f"{IMG} uint32 << [0,8)", [V(_RNG.integers(0, 1 << 20, IMG, dtype=np.uint32)),
                                                 V(_RNG.integers(0, 8, IMG, dtype=np.uint32))], 11,
                      direction="LEFT")],
    "BitwiseAnd": bitwise(), "BitwiseOr": bitwise(), "BitwiseXor": bitwise(),
    "BitwiseNot": [case(f"{IMG} int32", [V(_RNG.integers(-1 << 30, 1 << 30, IMG, dtype=np.int32))], 18)],
    "CastLike": [case(f"{TXT} float32 like float16", [F(TXT), C(np.zeros(1, np.float16))], 15),
                 case(f"{IMG} int64 like float32", [I(IMG, 1000), C(np.zeros(1, np.float32))], 15)],
    "Compress": [case("[1000,256] axis 0, half kept", [F([1000, 256]), V(np.arange(1000) % 2 == 0)], 11, axis=0)],
    "CumProd": [case(f"{TXT} axis 1", [F(TXT, 0.99, 1.01), C(np.array(1, dtype=np.int64))], 26)],
    "EyeLike": [case("[512,512]", [F([512, 512])], 9)],
    "MaxUnpool": [case("[1,64,56,56] 2x2 s2 -> [1,64,112,112]", [F([1, 64, 56, 56]), V(_unpool_indices(64, 56))],
                       11, kernel_shape=[2, 2], strides=[2, 2])],
    "NegativeLogLikelihoodLoss": [
        case("[64,1000] mean", [F([64, 1000]), V(_RNG.integers(0, 1000, [64]).astype(np.int64))], 13,
             reduction="mean"),
        case("[4,21,64,64] none", [F([4, 21, 64, 64]), V(_RNG.integers(0, 21, [4, 64, 64]).astype(np.int64))], 13,
             reduction="none")],
    "SoftmaxCrossEntropyLoss": [
        case("[64,1000] mean", [F([64, 1000]), V(_RNG.integers(0, 1000, [64]).astype(np.int64))], 13,
             reduction="mean"),
        case("[4,21,64,64] mean", [F([4, 21, 64, 64]), V(_RNG.integers(0, 21, [4, 64, 64]).astype(np.int64))], 13,
             reduction="mean")],
    "ReverseSequence": [case("[64,16,256] time-major", [F([64, 16, 256]),
                                                         V(_RNG.integers(1, 65, [16]).astype(np.int64))], 10,
                             time_axis=0, batch_axis=1)],
    "RotaryEmbedding": [case("[1,12,128,64] position ids", [F([1, 12, 128, 64]), C([128, 32], 1.0), C([128, 32], 1.0),
                                                            V(np.arange(128, dtype=np.int64).reshape(1, 128))], 23)],
    "AffineGrid": [case("theta [1,2,3] -> [1,56,56,2]", [F([1, 2, 3]), V(i64(1, 64, 56, 56))], 20)],
    "Swish": unary(opset=24),
    # -- attention (ai.onnx Attention, opset 23) --
    "Attention": [case("q,k,v [1,12,128,64]", [F([1, 12, 128, 64]), F([1, 12, 128, 64]), F([1, 12, 128, 64])], 23),
                  case("q,k,v [1,12,197,64] causal", [F([1, 12, 197, 64])] * 3, 23, is_causal=1)],
}
del CASES["Upsample"]  # deprecated since opset 10: Resize's cases cover it


def ir_version(opset):
    return 8 if opset <= 17 else 9 if opset <= 20 else 10 if opset <= 22 else 11


def build_case(models_dir, op, k, c, seed):
    """Writes models_dir/<op>__<k>/ (model.onnx, input_b1_<j>.npy, info.json); returns (name, info)."""
    name = f"{op}__{k}"
    d = os.path.join(models_dir, name)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    rng = np.random.default_rng(seed)
    node_inputs, graph_inputs, inits, feeds = [], [], [], []
    for j, spec in enumerate(c["inputs"]):
        if isinstance(spec, str):  # an omitted optional input
            node_inputs.append("")
            continue
        n = f"in{j}"
        node_inputs.append(n)
        v = spec.value(rng)
        if isinstance(spec, C):
            inits.append(onh.from_array(v, n))
            continue
        v = np.ascontiguousarray(v)
        elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype]
        graph_inputs.append(oh.make_tensor_value_info(n, elem, list(v.shape)))
        file = f"input_b1_{len(feeds)}.npy"
        np.save(os.path.join(d, file), v, allow_pickle=False)
        feeds.append({"name": n, "file": file})
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    outputs = [f"out{j}" for j in range(c["outputs"])]
    node = oh.make_node(op, node_inputs, outputs, domain=c["domain"], **c["attrs"])
    graph = oh.make_graph([node], name, graph_inputs, [oh.make_empty_tensor_value_info(o) for o in outputs], inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid(c["domain"], c["opset"])],
                          producer_name="ferry op_bench")
    model.ir_version = ir_version(c["opset"])
    onnx.save(model, os.path.join(d, "model.onnx"))
    info = {"name": name, "op": op, "label": c["label"], "input": feeds[0]["name"] if feeds else "",
            "inputs": feeds, "outputs": outputs}
    with open(os.path.join(d, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
    return name, info


def cpu_ops(ferry):
    """{op: "domain"} for the ops with a cpu kernel, from `ferry ops --backend cpu --json`."""
    out = subprocess.run([ferry, "ops", "--backend", "cpu", "--json"], check=True, capture_output=True, text=True)
    ops = {}
    for o in json.loads(out.stdout)["ops"]:
        if any(s["backend"] == "cpu" and s.get("kernels") for s in o.get("support", [])):
            ops.setdefault(o["op"], set()).add(o["domain"])
    return ops


def kernel_ms(args, name, info, threads):
    """The node's own time in each runtime, from the profilers, in lock step (median over --runs runs after a
    warm-up): Ferry `--profile-summary` (all of its profiled nodes), ORT's trace (its "_kernel_time" events).
    Unlike the p50 of a whole run, this leaves out onnxruntime-node's per-run costs (turning the inputs and
    outputs into JS typed arrays, the hop to a worker thread), which dominate a one-node model under ~1 ms."""
    d = os.path.join(args.models, name)
    model, feeds = os.path.join(d, "model.onnx"), input_specs(info, d, 1)
    with tempfile.TemporaryDirectory() as tmp:
        procs = {"ferry": Stepper(ferry_cmd(args, model, feeds, None, threads, 1, extra=args.ferry_args) +
                                  ["--lockstep", "--profile-summary", "--profile-top", "0"]),
                 "ort": Stepper(ort_cmd(model, feeds, None, threads, 1, extra=args.ort_args) +
                                ["--lockstep", "--profile", os.path.join(tmp, "ort")])}
        alternate(procs, ["ferry", "ort"], args.runs + 1)
        fj, oj = procs["ferry"].finish(), procs["ort"].finish()
        ort = sum(ort_node_ms(oj["profile_file"], lambda t: t).values())
    return sum(n["ms"] for n in fj["profile"]["nodes"]), ort


def geomean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def last_line(e):
    msg = getattr(e, "stderr", None) or str(e)
    lines = [ln for ln in msg.strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "?")[:240].replace("|", "/")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ferry", default=os.path.join(ROOT, "build", "bin", "ferry"))
    p.add_argument("--models", default="/tmp/op-bench-models", help="where the one-node models are written")
    p.add_argument("--only", default="")
    p.add_argument("--skip", default="")
    p.add_argument("--threads", default="1")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--json", default="")
    p.add_argument("--list", action="store_true")
    p.add_argument("--all", action="store_true", help="also the table's ops that the cpu backend lacks")
    p.add_argument("--no-kernel-times", action="store_true", help="skip the profiled per-node times")
    p.add_argument("--ferry-args", default="")
    p.add_argument("--ort-args", default="")
    args = p.parse_args()
    args.backends = "cpu"  # a missing cpu kernel fails loudly instead of running on ref
    registered = cpu_ops(args.ferry)
    onnx_ops = {op for op, domains in registered.items() if "ai.onnx" in domains or "" in domains}
    internal = sorted(op for op, domains in registered.items() if op not in onnx_ops)
    no_shape = sorted(op for op in onnx_ops if op not in CASES)
    ops = sorted(set(CASES) if args.all else onnx_ops & set(CASES))
    only = [o for o in args.only.split(",") if o]
    if only:
        unknown = [o for o in only if o not in CASES]
        if unknown:
            p.error(f"no benchmark shape for: {', '.join(unknown)}")
        ops = only
    skip = set(o for o in args.skip.split(",") if o)
    ops = [o for o in ops if o not in skip]
    if args.list:
        for op in ops:
            state = "cpu" if op in onnx_ops else "NOT on cpu"
            for c in CASES[op]:
                print(f"{op}\t{state}\topset {c['opset']}\t{c['label']}")
        print(f"no benchmark shape ({len(no_shape)}): {', '.join(no_shape) or '-'}")
        print(f"internal ops (ai.ferry, not in ORT): {', '.join(internal)}")
        print(f"table ops not on cpu yet: {', '.join(sorted(set(CASES) - onnx_ops))}")
        return 0
    os.makedirs(args.models, exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    rows, failed = [], []
    seed = 0
    for op in ops:
        for k, c in enumerate(CASES[op]):
            seed += 1
            name, info = build_case(args.models, op, k, c, seed)
            try:
                diff = check_outputs(args, name, info, with_ref=False)[0]
                for t in threads:
                    r = bench(args, name, info, 1, t)
                    r.update(op=op, shape=c["label"], max_rel_diff=diff)
                    if not args.no_kernel_times:
                        r["ferry_kernel_ms"], r["ort_kernel_ms"] = kernel_ms(args, name, info, t)
                        r["kernel_ratio"] = r["ferry_kernel_ms"] / r["ort_kernel_ms"] if r["ort_kernel_ms"] else None
                    rows.append(r)
                    print(f"[op_bench] {op} {c['label']} t{t}: ferry {r['ferry_p50']:.3f} ms, ort "
                          f"{r['ort_p50']:.3f} ms, ratio {r['ratio']:.2f}", file=sys.stderr, flush=True)
            except (RuntimeError, subprocess.CalledProcessError, ValueError, OSError) as e:
                failed.append({"op": op, "shape": c["label"], "reason": last_line(e)})
                print(f"[op_bench] {op} {c['label']} failed: {failed[-1]['reason']}", file=sys.stderr, flush=True)
    for t in threads:
        trows = [r for r in rows if r["threads"] == t]
        print(f"\n### one node, batch 1, {t} thread{'s' if t > 1 else ''}, Ferry --backends cpu\n")
        kt = not args.no_kernel_times
        print("| op | shape | Ferry p50 ms | ORT p50 ms | Ferry/ORT p50 |" +
              (" Ferry node ms | ORT node ms | Ferry/ORT node |" if kt else "") + " max rel. diff vs ORT |")
        print("|---|---|---:|---:|---:|" + ("---:|---:|---:|" if kt else "") + "---:|")
        for r in trows:
            diff = r["max_rel_diff"]
            node = (f" {r['ferry_kernel_ms']:.3f} | {r['ort_kernel_ms']:.3f} | **{r['kernel_ratio']:.2f}** |"
                    if kt and r.get("kernel_ratio") else " - | - | - |" if kt else "")
            print(f"| {r['op']} | {r['shape']} | {r['ferry_p50']:.3f} | {r['ort_p50']:.3f} | {r['ratio']:.2f} |{node} "
                  f"{'shape/missing' if diff == float('inf') else f'{diff:.1e}'} |")
        if trows:
            for key, what in (("ratio", "p50"), ("kernel_ratio", "node time")):
                vals = [r for r in trows if r.get(key)]
                if not vals:
                    continue
                worst = max(vals, key=lambda r: r[key])
                print(f"\n{t} thread(s), {len(vals)} cases: geometric mean Ferry/ORT {what} "
                      f"**{geomean([r[key] for r in vals]):.3f}**; worst {worst[key]:.2f} "
                      f"({worst['op']} {worst['shape']})")
    if failed:
        print("\n### Failed\n\n| op | shape | reason |\n|---|---|---|")
        for f in failed:
            print(f"| {f['op']} | {f['shape']} | {f['reason']} |")
    print(f"\ncpu ops with no benchmark shape ({len(no_shape)}): {', '.join(no_shape) or '-'}")
    print(f"internal cpu ops (ai.ferry domain, not in ORT; not benchmarked): {', '.join(internal)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "failed": failed, "no_benchmark_shape": no_shape, "internal": internal}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
