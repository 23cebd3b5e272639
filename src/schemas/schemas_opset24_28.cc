// Default-domain schema versions introduced in opsets 24-28, as data.
// Source: ONNX docs/Changelog.md (Version 24..28 of the default ONNX operator set).
#include "schemas/schema_opset_helpers.h"

namespace ferry::schemas {

using namespace types;  // NOLINT(build/namespaces)
using ir::AttrType;

namespace {

void RegisterOpset24(SchemaRegistry& r) {
  const TypeList kE8M0 = Types({"float8e8m0"});
  ExpandAllTypeOps(r, 24, kE8M0);
  for (const char* op : {"Cast", "CastLike"}) {
    SchemaEdit s(*r.Find("", op, 24));
    r.Add(s.AttrString("round_mode", "up"));
  }
  r.Add(Derive(r, "Attention", 24).SetIn(6, FormalParam{"nonpad_kv_seqlen", "tensor(int64)", ParamOption::kOptional}));
  r.Add(Derive(r, "DequantizeLinear", 24).AddTypes("T2", kE8M0));
  r.Add(Derive(r, "QuantizeLinear", 24).AddTypes("T2", kE8M0));
  r.Add(AddBfloat16(Derive(r, "SplitToSequence", 24)));
  r.Add(NewOp("Swish", 24).In("X", "T").Out("Y", "T").AttrFloat("alpha", 1.0f).Constrain("T", kFloatBf));
  r.Add(NewOp("TensorScatter", 24)
            .In("past_cache", "T")
            .In("update", "T")
            .OptIn("write_indices", "tensor(int64)")
            .Out("present_cache", "T")
            .AttrInt("axis", -2)
            .AttrString("mode", "linear")
            .Constrain("T", kAllIr12));
  r.Add(AddBfloat16(Derive(r, "TopK", 24)));
}

void RegisterOpset25(SchemaRegistry& r) {
  const TypeList kInt2 = Types({"uint2", "int2"});
  ExpandAllTypeOps(r, 25, kInt2);
  r.Add(Derive(r, "DequantizeLinear", 25).AddTypes("T1", kInt2));
  r.Add(Derive(r, "QuantizeLinear", 25).AddTypes("T3", kInt2));
}

void RegisterOpset26(SchemaRegistry& r) {
  TypeList bit_castable = kAllIr13;
  std::erase(bit_castable, "tensor(string)");
  r.Add(NewOp("BitCast", 26)
            .In("input", "T1")
            .Out("output", "T2")
            .AttrRequired("to", AttrType::kInt)
            .Constrain("T1", bit_castable)
            .Constrain("T2", bit_castable));
  r.Add(NewOp("CumProd", 26)
            .In("x", "T")
            .In("axis", "T2")
            .Out("y", "T")
            .AttrInt("exclusive", 0)
            .AttrInt("reverse", 0)
            .Constrain("T", Types({"bfloat16", "double", "float", "float16", "int32", "int64", "uint32", "uint64"}))
            .Constrain("T2", Types({"int32", "int64"})));
}

void RegisterOpset27(SchemaRegistry& r) {
  const TypeList kHalfAndFloat = Types({"bfloat16", "float", "float16"});
  r.Add(NewOp("CausalConvWithState", 27)
            .In("input", "T")
            .In("weight", "T")
            .OptIn("bias", "T")
            .OptIn("past_state", "T")
            .Out("output", "T")
            .OptOut("present_state", "T")
            .AttrString("activation", "none")
            .Constrain("T", kHalfAndFloat));
  r.Add(NewOp("LinearAttention", 27)
            .In("query", "T")
            .In("key", "T")
            .In("value", "T")
            .OptIn("past_state", "S")
            .OptIn("decay", "T")
            .OptIn("beta", "T")
            .Out("output", "T")
            .OptOut("present_state", "S")
            .AttrInt("chunk_size", 64)
            .AttrRequired("kv_num_heads", AttrType::kInt)
            .AttrRequired("q_num_heads", AttrType::kInt)
            .AttrFloat("scale", 0.0f)
            .AttrString("update_rule", "gated_delta")
            .Constrain("T", kHalfAndFloat)
            .Constrain("S", kHalfAndFloat));
  r.Add(Derive(r, "Range", 27)
            .AttrInt("stash_type", 1)
            .Constrain("T", Types({"bfloat16", "double", "float", "float16", "int16", "int32", "int64"})));
}

void RegisterOpset28(SchemaRegistry& r) {
  r.Add(NewOp("SwiGLU", 28).In("A", "T").In("B", "T").Out("Y", "T").AttrFloat("alpha", 1.0f).Constrain("T", kFloatBf));
  r.Add(Derive(r, "Celu", 28).Constrain("T", kFloatBf));
}

}  // namespace

void RegisterOpset24To28Schemas(SchemaRegistry& r) {
  RegisterOpset24(r);
  RegisterOpset25(r);
  RegisterOpset26(r);
  RegisterOpset27(r);
  RegisterOpset28(r);
}

}  // namespace ferry::schemas
