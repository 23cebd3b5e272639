// ONNX Runtime's remaining contrib ops (com.microsoft, group "misc") into ONNX primitives:
//   Pad(data, pads, value?)          -> Pad (opset 11+): pads flattened to 1-D, value reshaped to a scalar; modes
//                                       constant, edge, reflect are ONNX's.
//   ConvTransposeWithDynamicPads     -> ConvTranspose with the constant Pads input as its pads attribute (absent:
//                                       the attributes alone), B moved to input 2.
//   MatMulInteger16(A, B)            -> Cast both to int32 (uint32 when both are uint16), MatMul (opset 9+).
//   NhwcMaxPool(x)                   -> Transpose to channels-first, MaxPool (int8 / uint8: opset 12+), Transpose
//                                       back.
//   UnfoldTensor(input)              -> Gather of the windows' constant indices along dim ([windows, size]), then
//                                       Transpose moving the size axis last (dim's extent must be static).
// CropAndResize (its own sampling grid), MaxpoolWithMask (the mask ends a window's rows), Tokenizer, MurmurHash3,
// NGramRepeatBlock, BifurcationDetector and DynamicTimeWarping (data-dependent loops) have no expansion.
#include <numeric>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "legalize/decomposition.h"

namespace ferry::legalize {
namespace {

std::string NeedOpset(const char* op, int64_t need, int64_t opset) {
  if (opset >= need) return "";
  return std::string("com.microsoft::") + op + ": the ONNX form needs ai.onnx opset " + std::to_string(need) +
         ", the model has " + std::to_string(opset);
}

// ---- Pad ----

std::string RefusePad(const ir::Node& n, int64_t opset) {
  const std::string mode = n.GetString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") {
    return "com.microsoft::Pad: mode '" + mode + "' is unknown";
  }
  return NeedOpset("Pad", 11, opset);
}

void BuildPad(Builder& b) {
  std::vector<ir::Value*> inputs = {b.input(0), b.Reshape(b.input(1), {-1})};
  if (b.input(2)) inputs.push_back(b.Reshape(b.input(2), {}));
  b.SetOutput(0, b.Op("Pad", inputs, {ir::StringAttr("mode", b.node().GetString("mode", "constant"))}));
}

// ---- ConvTransposeWithDynamicPads ----

std::string RefuseConvTransposeWithDynamicPads(const ir::Node& n, int64_t) {
  if (n.input(2) && !ir::ConstantInts(n.input(2))) {
    return "com.microsoft::ConvTransposeWithDynamicPads: input Pads is not a constant (ConvTranspose's pads are "
           "an attribute)";
  }
  return "";
}

void BuildConvTransposeWithDynamicPads(Builder& b) {
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : b.node().attributes()) attrs.push_back(a);
  if (b.input(2)) attrs.push_back(ir::IntsAttr("pads", *ir::ConstantInts(b.input(2))));
  std::vector<ir::Value*> inputs = {b.input(0), b.input(1)};
  if (b.input(3)) inputs.push_back(b.input(3));
  b.SetOutput(0, b.Op("ConvTranspose", inputs, attrs));
}

// ---- MatMulInteger16 ----

std::string RefuseMatMulInteger16(const ir::Node& n, int64_t opset) {
  for (size_t i : {0, 1}) {
    const DataType t = ir::ElementType(n.input(i));
    if (t != DataType::kInt16 && t != DataType::kUint16) {
      return "com.microsoft::MatMulInteger16: the element type of input " + std::to_string(i) +
             " is unknown or not int16 / uint16";
    }
  }
  return NeedOpset("MatMulInteger16", 9, opset);
}

void BuildMatMulInteger16(Builder& b) {
  const bool unsigned_out = ir::ElementType(b.input(0)) == DataType::kUint16 &&
                            ir::ElementType(b.input(1)) == DataType::kUint16;
  const DataType to = unsigned_out ? DataType::kUint32 : DataType::kInt32;
  b.SetOutput(0, b.Op("MatMul", {b.Cast(b.input(0), to), b.Cast(b.input(1), to)}));
}

// ---- NhwcMaxPool ----

std::string RefuseNhwcMaxPool(const ir::Node& n, int64_t opset) {
  if (!ir::KnownRank(n.input(0))) return "com.microsoft::NhwcMaxPool: the rank of x is unknown";
  return NeedOpset("NhwcMaxPool", 12, opset);
}

void BuildNhwcMaxPool(Builder& b) {
  const int64_t rank = *ir::KnownRank(b.input(0));
  std::vector<int64_t> to_first = {0, rank - 1}, to_last = {0};
  for (int64_t d = 1; d < rank - 1; ++d) to_first.push_back(d);
  for (int64_t d = 2; d < rank; ++d) to_last.push_back(d);
  to_last.push_back(1);
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : b.node().attributes()) attrs.push_back(a);
  b.SetOutput(0, b.Transpose(b.Op("MaxPool", {b.Transpose(b.input(0), to_first)}, attrs), to_last));
}

// ---- UnfoldTensor ----

struct UnfoldGeometry {
  int64_t rank = 0, dim = 0, extent = 0, size = 0, step = 1;
};

std::optional<UnfoldGeometry> UnfoldOf(const ir::Node& n) {
  const std::optional<int64_t> rank = ir::KnownRank(n.input(0));
  if (!rank || *rank == 0) return std::nullopt;
  UnfoldGeometry g{*rank, n.GetInt("dim", -1), 0, n.GetInt("size", 0), n.GetInt("step", 1)};
  if (g.dim < 0) g.dim += g.rank;
  if (g.dim < 0 || g.dim >= g.rank) return std::nullopt;
  g.extent = ir::DimOrMinusOne(n.input(0), g.dim);
  if (g.extent < 0 || g.size < 1 || g.step < 1 || g.extent < g.size) return std::nullopt;
  return g;
}

std::string RefuseUnfoldTensor(const ir::Node& n, int64_t) {
  if (!UnfoldOf(n)) {
    return "com.microsoft::UnfoldTensor: the rank of input, or the extent of dimension dim, is unknown or smaller "
           "than size";
  }
  return "";
}

void BuildUnfoldTensor(Builder& b) {
  const UnfoldGeometry g = *UnfoldOf(b.node());
  const int64_t windows = (g.extent - g.size) / g.step + 1;
  std::vector<double> idx;
  for (int64_t w = 0; w < windows; ++w) {
    for (int64_t k = 0; k < g.size; ++k) idx.push_back(static_cast<double>(w * g.step + k));
  }
  ir::Value* indices = b.Constant(DataType::kInt64, {windows, g.size}, idx);
  // Gather: [.., windows, size, tail..]; the size axis (dim + 1) moves last.
  ir::Value* gathered = b.Op("Gather", {b.input(0), indices}, {ir::IntAttr("axis", g.dim)});
  std::vector<int64_t> perm;
  for (int64_t d = 0; d <= g.rank; ++d) {
    if (d != g.dim + 1) perm.push_back(d);
  }
  perm.push_back(g.dim + 1);
  b.SetOutput(0, b.Transpose(gathered, perm));
}

}  // namespace

void AddOrtMiscDecompositions(std::vector<Decomposition>& list) {
  const std::string ms = "com.microsoft";
  list.push_back({ms, "Pad", 1, INT64_MAX, "com.microsoft::Pad -> Reshape, Pad", RefusePad, BuildPad});
  list.push_back({ms, "ConvTransposeWithDynamicPads", 1, INT64_MAX,
                  "com.microsoft::ConvTransposeWithDynamicPads -> ConvTranspose", RefuseConvTransposeWithDynamicPads,
                  BuildConvTransposeWithDynamicPads});
  list.push_back({ms, "MatMulInteger16", 1, INT64_MAX, "com.microsoft::MatMulInteger16 -> Cast, Cast, MatMul",
                  RefuseMatMulInteger16, BuildMatMulInteger16});
  list.push_back({ms, "NhwcMaxPool", 1, INT64_MAX, "com.microsoft::NhwcMaxPool -> Transpose, MaxPool, Transpose",
                  RefuseNhwcMaxPool, BuildNhwcMaxPool});
  list.push_back({ms, "UnfoldTensor", 1, INT64_MAX, "com.microsoft::UnfoldTensor -> Gather, Transpose",
                  RefuseUnfoldTensor, BuildUnfoldTensor});
}

}  // namespace ferry::legalize
