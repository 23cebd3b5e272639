// ONNX Runtime's com.microsoft EmbedLayerNormalization into Gather, Slice, Add and the LayerNormalization primitives
// (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add); mask_index into Equal, Cast, ReduceSum, Reshape.
// Identity: its definition (kernels/ref/embed_layer_normalization.cc): e = Gather(word_embedding, input_ids) +
// Gather(position_embedding, position_ids) (without position_ids: its first S rows, S the static sequence length)
// + Gather(segment_embedding, segment_ids) (without segment_ids: its row 0; no term without segment_embedding);
// output = LayerNormalization(e, gamma, beta) over the last dim (epsilon default 1e-12, half precision normalized in
// float); embedding_sum = e; mask_index = the count of mask elements equal to 1 per batch row (zeros of the static
// batch size without mask). Gather wraps a negative index where the kernel refuses it: they differ on invalid
// indices only.
#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

std::string Refuse(const ir::Node& n, int64_t) {
  const DataType t = ElementType(n.input(2));
  if (t != DataType::kFloat && t != DataType::kFloat16) {
    return "EmbedLayerNormalization: word_embedding's element type is unknown or not float or float16";
  }
  if (RankOrMinusOne(n.input(0)) != 2) return "EmbedLayerNormalization: input_ids' rank is unknown or not 2";
  const bool position_ids = n.num_inputs() > 8 && n.input(8);
  if (!position_ids && ir::DimOrMinusOne(n.input(0), 1) < 0) {
    return "EmbedLayerNormalization: no position_ids and the sequence length is not static";
  }
  const bool mask = n.num_inputs() > 7 && n.input(7);
  if (OutputUsed(n, 1) && !mask && ir::DimOrMinusOne(n.input(0), 0) < 0) {
    return "EmbedLayerNormalization: mask_index without a mask and the batch size is not static";
  }
  return "";
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* ids = b.input(0);
  const DataType t = ElementType(b.input(2));
  ir::Value* position_ids = n.num_inputs() > 8 ? b.input(8) : nullptr;
  ir::Value* e = b.Op("Gather", {b.input(2), ids});
  e = b.Add(e, position_ids ? b.Op("Gather", {b.input(3), position_ids})
                            : b.Slice(b.input(3), 0, ir::DimOrMinusOne(ids, 1), 0));
  if (n.num_inputs() > 4 && b.input(4)) {
    e = b.Add(e, b.input(1) ? b.Op("Gather", {b.input(4), b.input(1)}) : b.Slice(b.input(4), 0, 1, 0));
  }
  const LayerNormParts ln = BuildLayerNorm(b, e, b.input(5), b.input(6), 2, 3, n.GetFloat("epsilon", 1e-12f),
                                           StashType(t, 1));
  b.SetOutput(0, ln.y);
  if (OutputUsed(n, 1)) {
    ir::Value* mask = n.num_inputs() > 7 ? b.input(7) : nullptr;
    if (mask) {
      ir::Value* ones = b.Cast(b.Op("Equal", {mask, b.Scalar(1, DataType::kInt32)}, {}, DataType::kBool),
                               DataType::kInt32);
      b.SetOutput(1, b.Reshape(b.Reduce("ReduceSum", ones, {1}), {-1}));
    } else {
      const int64_t batch = ir::DimOrMinusOne(ids, 0);
      b.SetOutput(1, b.Constant(DataType::kInt32, {batch}, std::vector<double>(static_cast<size_t>(batch), 0.0)));
    }
  }
  if (OutputUsed(n, 2)) b.SetOutput(2, e);
}

}  // namespace

void AddEmbedLayerNormalizationDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"com.microsoft", "EmbedLayerNormalization", 1, INT64_MAX,
                  "com.microsoft::EmbedLayerNormalization -> Gather, Gather, Add, Gather, Add, ReduceMean, Sub, Mul, "
                  "ReduceMean, Add, Sqrt, Div, Mul, Add; Equal, Cast, ReduceSum, Reshape",
                  Refuse, Build, false});
}

}  // namespace ferry::legalize
