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
//                                      ("" none, Relu, LeakyRelu [alpha], Clip [min, max], Sigmoid, Tanh,
//                                      HardSigmoid [alpha, beta], HardSwish, Silu: x * sigmoid(x), Gelu:
//                                      x * 0.5 * (1 + erf(x / sqrt 2))) with its parameters in
//                                      `activation_params`. Z, when given, has Y's shape.
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
//                                      (Gelu included).
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
  r.SetMaxOpset(d, 1);
}

}  // namespace ferry::schemas
