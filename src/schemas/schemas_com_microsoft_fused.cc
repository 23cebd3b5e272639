// com.microsoft fusions and activations that ONNX Runtime's graph optimizers emit (schemas_ort_contrib.h).
//
// FusedConv(X, W, B?, Z?) -> Y         Conv's attributes plus `activation` (ONNX Runtime's names: Relu, Tanh,
//                                      Sigmoid, LeakyRelu, Clip, HardSigmoid) and `activation_params`; Z is added
//                                      before the activation.
// FusedGemm(A, B, C?) -> Y             Gemm plus `activation` and its `activation_alpha/beta/gamma`.
// FusedMatMul(A, B) -> Y               alpha * MatMul(op(A), op(B)): `transA` / `transB` swap the last two dims,
//                                      `transBatchA` / `transBatchB` move the first dim past the batch dims.
// TransposeMatMul(A, B) -> Y           FusedMatMul without the batch transposes (kept for old models).
// Gelu(X) -> Y                         x * Phi(x) (erf).
// BiasGelu(A, B) -> C                  Gelu(A + B), B 1-D.
// FastGelu(X, bias?) -> Y              the tanh approximation of Gelu of X (+ bias).
// QuickGelu(X) -> Y                    x * Sigmoid(alpha * x), alpha 1.702.
// BiasAdd(X, bias, skip) -> Y          X + bias + skip; X and skip [N, S, C], bias [C].
#include "schemas/op_origin.h"
#include "schemas/schemas_ort_contrib.h"

namespace ferry::schemas {

using ir::AttrType;

void RegisterMsFusedSchemas(SchemaRegistry& r) {
  const std::string d(kMsDomain);
  auto op = [&](const char* name) { return NewOp(name, 1, d); };
  const TypeList f16_32_64 = Types({"float16", "float", "double"});
  const TypeList floats_bf = Types({"float16", "float", "double", "bfloat16"});

  r.Add(op("FusedConv")
            .In("X", "T")
            .In("W", "T")
            .OptIn("B", "T")
            .OptIn("Z", "T")
            .Out("Y", "T")
            .AttrString("auto_pad", "NOTSET")
            .AttrOptional("kernel_shape", AttrType::kInts)
            .AttrOptional("dilations", AttrType::kInts)
            .AttrOptional("strides", AttrType::kInts)
            .AttrOptional("pads", AttrType::kInts)
            .AttrInt("group", 1)
            .AttrOptional("activation", AttrType::kString)
            .AttrOptional("activation_params", AttrType::kFloats)
            .Constrain("T", f16_32_64));
  r.Add(op("FusedGemm")
            .In("A", "T")
            .In("B", "T")
            .OptIn("C", "T")
            .Out("Y", "T")
            .AttrInt("transA", 0)
            .AttrInt("transB", 0)
            .AttrFloat("alpha", 1.0f)
            .AttrFloat("beta", 1.0f)
            .AttrOptional("activation", AttrType::kString)
            .AttrOptional("activation_alpha", AttrType::kFloat)
            .AttrOptional("activation_beta", AttrType::kFloat)
            .AttrOptional("activation_gamma", AttrType::kFloat)
            .Constrain("T", Types({"float16", "float", "double", "uint32", "uint64", "int32", "int64"})));
  r.Add(op("FusedMatMul")
            .In("A", "T")
            .In("B", "T")
            .Out("Y", "T")
            .AttrFloat("alpha", 1.0f)
            .AttrInt("transA", 0)
            .AttrInt("transB", 0)
            .AttrInt("transBatchA", 0)
            .AttrInt("transBatchB", 0)
            .Constrain("T", floats_bf));
  r.Add(op("TransposeMatMul")
            .In("A", "T")
            .In("B", "T")
            .Out("Y", "T")
            .AttrFloat("alpha", 1.0f)
            .AttrInt("transA", 0)
            .AttrInt("transB", 0)
            .Constrain("T", floats_bf));
  r.Add(op("Gelu").In("X", "T").Out("Y", "T").Constrain("T", floats_bf));
  r.Add(op("BiasGelu").In("A", "T").In("B", "T").Out("C", "T").Constrain("T", floats_bf));
  r.Add(op("FastGelu")
            .In("X", "T")
            .OptIn("bias", "T")
            .Out("Y", "T")
            .Constrain("T", Types({"float", "double", "float16", "bfloat16"})));
  r.Add(op("QuickGelu").In("X", "T").Out("Y", "T").AttrFloat("alpha", 1.702f).Constrain("T", floats_bf));
  r.Add(op("BiasAdd")
            .In("X", "T")
            .In("bias", "T")
            .In("skip", "T")
            .Out("Y", "T")
            .Constrain("T", Types({"float16", "float"})));
}

}  // namespace ferry::schemas
