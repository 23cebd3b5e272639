// Ferry's own operators, domain "ai.ferry" (opset 1): what the optimizer rewrites standard ONNX into so that a
// backend can run it faster. Every one is exact ONNX semantics composed: the ref backend implements each by the
// definition below, so a graph the optimizer produced can always run, and be checked, on ref.
//
// Blocked channel layout (attribute `block`): for a block b >= 1 (8, 16), a tensor of logical shape [N, C, D1..Dk]
// is stored as [N, ceil(C/b), D1..Dk, b], element (n, c, d...) at [n, c / b, d..., c % b]; for b = 0 it is stored
// channels-last, [N, D1..Dk, C], element (n, c, d...) at [n, d..., c] (NHWC: one block holding every channel,
// without the unit dim). The channels past C that
// fill the last block are padding: they hold finite values of no meaning (ReorderToBlocked writes zeros; a
// BlockedConv's activation, a pool or an elementwise op may leave other finite values), and every reader ignores
// them (a BlockedConv multiplies them by zero weights, ReorderFromBlocked drops them).
//
// FusedConv(X, W, B?, Z?) -> Y        Y = act(Conv(X, W, B) + Z); Conv's attributes, plus `activation`
//                                      (one of the table in semantics/fused_activation.h: "" none, Relu,
//                                      LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Silu, Gelu,
//                                      GeluTanh, Mish) with its parameters in `activation_params` (empty: the
//                                      table's defaults). Z, when given, has Y's shape.
// BlockedConv(X, W, B?, Z?) -> Y      FusedConv on blocked X (plain X when plain_input = 1), Z and Y; `block`.
// BlockedPool(X) -> Y                  `mode` (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool) on blocked
//                                      X and Y, with that op's attributes; `block`.
// ReorderToBlocked(X) -> Y             plain [N, C, D...] -> blocked; `block` (0: channels-last).
// ReorderFromBlocked(X) -> Y           blocked -> plain; `block`, `channels` (C).
// Gelu(X) -> Y                         ONNX Gelu (opset 20) for models of any opset: x * Phi(x), `approximate`
//                                      "none" (erf) or "tanh".
// FusedMatMul(A, B, C?) -> Y           Y = act(MatMul(A, B) + C): ONNX MatMul's numpy semantics for A and B (1-D
//                                      operands promoted, batch dims broadcast); C, when given, has shape [N], N
//                                      the column count of B (its last dim; 1 for a 1-D B), added to every row;
//                                      Y has MatMul's shape. `activation` and `activation_params` as FusedConv's
//                                      (Gelu and GeluTanh included).
// LayerNormalization(X, Scale, B?)     ONNX LayerNormalization (opset 17: `axis`, `epsilon`, `stash_type`, the
//   -> (Y, Mean?, InvStdDev?)          optional statistics outputs) for models of any opset (fuse_layer_norm).
// RMSNormalization(X, scale) -> Y      ONNX RMSNormalization (opset 23) for models of any opset.
// SkipLayerNormalization(X, Skip,      S = X + Skip, Y = LayerNormalization(S, gamma, beta) over the dims [axis,
//   gamma, beta?) -> (Y, Sum?)         rank) (`axis`, default -1; `epsilon`); Sum, when requested, is S. Skip has
//                                      X's shape, or its dims (after leading 1s) are X's trailing dims: element i
//                                      of X (row-major) adds Skip's element i % size(Skip). gamma and beta hold
//                                      prod(X.shape[axis:]) values each, in the normalized dims' row-major order.
// ScaleShift(X, scale, shift) -> Y    Y = act(Add(Mul(X, scale), shift)): a Mul, an Add and the activation
//                                      (FusedConv's `activation` and `activation_params`) in one pass, each
//                                      rounded as the op it replaces; scale and shift broadcast numpy-style to
//                                      X's shape, which Y has (fuse_scale_shift: x * s + t by constants, an
//                                      inference BatchNormalization before an activation; blocked_layout: the
//                                      same on blocked X).
// Attention(Q, K, V, mask?) -> Y      Y = Softmax(scale * MatMul(Q, Kᵀ) + mask, axis = -1) V: scaled dot-product
//                                      attention (fuse_attention). Q [..., Sq, Dh]; K [..., Sk, Dh], or
//                                      [..., Dh, Sk] (Kᵀ itself) when `k_transposed` = 1; V [..., Sk, Dv]; mask
//                                      additive, of any rank, its last two dims 1 or Sq / Sk. The leading dims of
//                                      Q, K, V and mask broadcast numpy-style (as the MatMuls and the Add it
//                                      replaces do); Y [..., Sq, Dv]. `scale` (float, default 1). The softmax is
//                                      ONNX's: the row max subtracted, so a row that is -inf everywhere gives NaN.
#include "schemas/schema_builder.h"

namespace ferry::schemas {

using ir::AttrType;

namespace {

const TypeList kFloat = Types({"float"});

SchemaEdit WithConvAttrs(SchemaEdit s) {
  return std::move(s.AttrString("auto_pad", "NOTSET")
                       .AttrOptional("dilations", AttrType::kInts)
                       .AttrInt("group", 1)
                       .AttrOptional("kernel_shape", AttrType::kInts)
                       .AttrOptional("pads", AttrType::kInts)
                       .AttrOptional("strides", AttrType::kInts)
                       .AttrString("activation", "")
                       .AttrFloats("activation_params", {}));
}

}  // namespace

void RegisterFerrySchemas(SchemaRegistry& r) {
  const std::string d(kFerryDomain);
  auto op = [&](const char* name) { return NewOp(name, 1, d); };
  r.Add(WithConvAttrs(op("FusedConv").In("X", "T").In("W", "T").OptIn("B", "T").OptIn("Z", "T").Out("Y", "T"))
            .Constrain("T", kFloat));
  r.Add(WithConvAttrs(op("BlockedConv").In("X", "T").In("W", "T").OptIn("B", "T").OptIn("Z", "T").Out("Y", "T"))
            .AttrRequired("block", AttrType::kInt)
            .AttrInt("plain_input", 0)
            .Constrain("T", kFloat));
  r.Add(op("BlockedPool")
            .In("X", "T")
            .Out("Y", "T")
            .AttrRequired("block", AttrType::kInt)
            .AttrRequired("mode", AttrType::kString)
            .AttrString("auto_pad", "NOTSET")
            .AttrInt("ceil_mode", 0)
            .AttrInt("count_include_pad", 0)
            .AttrOptional("dilations", AttrType::kInts)
            .AttrOptional("kernel_shape", AttrType::kInts)
            .AttrOptional("pads", AttrType::kInts)
            .AttrOptional("strides", AttrType::kInts)
            .Constrain("T", kFloat));
  r.Add(op("ReorderToBlocked").In("X", "T").Out("Y", "T").AttrRequired("block", AttrType::kInt).Constrain("T", kFloat));
  r.Add(op("ReorderFromBlocked")
            .In("X", "T")
            .Out("Y", "T")
            .AttrRequired("block", AttrType::kInt)
            .AttrRequired("channels", AttrType::kInt)
            .Constrain("T", kFloat));
  r.Add(op("Gelu").In("X", "T").Out("Y", "T").AttrString("approximate", "none")
            .Constrain("T", Types({"float", "float16", "bfloat16", "double"})));
  r.Add(op("FusedMatMul")
            .In("A", "T")
            .In("B", "T")
            .OptIn("C", "T")
            .Out("Y", "T")
            .AttrString("activation", "")
            .AttrFloats("activation_params", {})
            .Constrain("T", kFloat));
  // The standard normalizations under Ferry's domain, for models whose opset predates them (fuse_layer_norm).
  r.Add(op("LayerNormalization")
            .In("X", "T")
            .In("Scale", "T")
            .OptIn("B", "T")
            .Out("Y", "T")
            .OptOut("Mean", "U")
            .OptOut("InvStdDev", "U")
            .AttrInt("axis", -1)
            .AttrFloat("epsilon", 1e-5f)
            .AttrInt("stash_type", 1)
            .Constrain("T", Types({"float", "float16", "bfloat16", "double"}))
            .Constrain("U", Types({"float", "bfloat16"})));
  r.Add(op("RMSNormalization")
            .In("X", "T")
            .In("scale", "V")
            .Out("Y", "V")
            .AttrInt("axis", -1)
            .AttrFloat("epsilon", 1e-5f)
            .AttrInt("stash_type", 1)
            .Constrain("T", Types({"float", "float16", "bfloat16", "double"}))
            .Constrain("V", Types({"float", "float16", "bfloat16", "double"})));
  r.Add(op("SkipLayerNormalization")
            .In("X", "T")
            .In("Skip", "T")
            .In("gamma", "T")
            .OptIn("beta", "T")
            .Out("Y", "T")
            .OptOut("Sum", "T")
            .AttrInt("axis", -1)
            .AttrFloat("epsilon", 1e-5f)
            .Constrain("T", kFloat));
  r.Add(op("ScaleShift")
            .In("X", "T")
            .In("scale", "T")
            .In("shift", "T")
            .Out("Y", "T")
            .AttrString("activation", "")
            .AttrFloats("activation_params", {})
            .Constrain("T", kFloat));
  r.Add(op("Attention")
            .In("Q", "T")
            .In("K", "T")
            .In("V", "T")
            .OptIn("mask", "T")
            .Out("Y", "T")
            .AttrFloat("scale", 1.0f)
            .AttrInt("k_transposed", 0)
            .Constrain("T", kFloat));
  r.SetMaxOpset(d, 1);
}

}  // namespace ferry::schemas
