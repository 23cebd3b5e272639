// com.microsoft::WordConvEmbedding's node, shared by the ref and cpu kernels (semantics: word_conv_embedding.cc):
// the attributes, Prepare's checks of the inputs and the per-word rules both kernels follow.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

struct WordConvEmbeddingAttributes {
  int64_t embedding_size = -1, conv_window_size = -1, char_embedding_size = -1;  // -1: not given, not checked
};

WordConvEmbeddingAttributes ParseWordConvEmbeddingAttributes(const ir::Node& node);

struct WordConvEmbeddingGeometry {
  int64_t words = 0, word_len = 0;  // Sequence [words, word_len]
  int64_t filters = 0, window = 0;  // W [filters, 1, window, char_dim]
  int64_t char_dim = 0, vocab = 0;  // C [vocab, char_dim]
};

// The shapes (Sequence 2-D int32, W [M, 1, window, E], B [M], C [V, E], float; 1 <= window <= word_len) and the
// attributes against them; throws InvalidArgumentError naming the node and input.
WordConvEmbeddingGeometry CheckWordConvEmbeddingInputs(const PrepareContext& ctx, const WordConvEmbeddingAttributes& a);

// The length of word `chars` (word_len ids): 0 when its first id is <= 0, else the number of ids > 0 in it.
inline int64_t WordLength(const int32_t* chars, int64_t word_len) {
  if (word_len == 0 || chars[0] <= 0) return 0;
  int64_t n = 0;
  for (int64_t c = 0; c < word_len; ++c) n += chars[c] > 0 ? 1 : 0;
  return n;
}

// The max-pool step as ONNX Runtime writes it, std::max(v, acc): a NaN v replaces acc, a NaN acc is replaced by the
// next v.
inline float PoolMax(float v, float acc) { return v < acc ? acc : v; }

// The pool's start value (ONNX Runtime's): below every tanh.
inline constexpr float kPoolStart = -1e12f;

}  // namespace ferry::ref
