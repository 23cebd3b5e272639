// com.microsoft::WordConvEmbedding (ONNX Runtime's contrib op): a character-level convolution embedding of each word.
// Sequence [S, L] (int32 character ids, one word per row), W [M, 1, w, E] (M filters over w characters), B [M],
// C [V, E] (the character embeddings) -> Y [S, M], float. Following ONNX Runtime's CPU kernel:
//   - a word's length n is 0 when its first id is <= 0, else the count of its ids > 0;
//   - a word of length 0 gives a row of zeros (ONNX Runtime leaves that row unwritten);
//   - otherwise its first max(n, w) characters are looked up in C (ids there must be in [0, V): an id past the
//     word's length, usually the padding 0, is looked up too, as ONNX Runtime does), and for each of the
//     max(n, w) - w + 1 windows t: z[m] = B[m] + sum_{i < w, e < E} C[id(t + i), e] W[m, 0, i, e];
//   - Y[s, m] = the maximum over the windows of tanh(z[m]) (pooled as std::max(tanh, acc) from -1e12, so a NaN
//     sample replaces the running maximum and the next sample replaces a NaN).
// Attributes embedding_size (M), conv_window_size (w) and char_embedding_size (E) are optional checks of the shapes.
// Prepare refuses w > L (ONNX Runtime reads past the word then). ref sums and takes tanh in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/word_conv_embedding.h"
#include "kernels/registry.h"

namespace ferry::ref {

WordConvEmbeddingAttributes ParseWordConvEmbeddingAttributes(const ir::Node& node) {
  WordConvEmbeddingAttributes a;
  a.embedding_size = node.GetInt("embedding_size", -1);
  a.conv_window_size = node.GetInt("conv_window_size", -1);
  a.char_embedding_size = node.GetInt("char_embedding_size", -1);
  return a;
}

WordConvEmbeddingGeometry CheckWordConvEmbeddingInputs(const PrepareContext& ctx,
                                                       const WordConvEmbeddingAttributes& a) {
  const Shape& seq = ctx.tensor_input(0).shape;
  const Shape& w = ctx.tensor_input(1).shape;
  const Shape& b = ctx.tensor_input(2).shape;
  const Shape& c = ctx.tensor_input(3).shape;
  auto fail = [&](const std::string& what) {
    throw InvalidArgumentError(ctx.Describe() + ": " + what + " (Sequence " + ctx.InputString(0) + ", W " +
                               ctx.InputString(1) + ", B " + ctx.InputString(2) + ", C " + ctx.InputString(3) + ")");
  };
  if (seq.size() != 2) fail("input 'Sequence' must be 2-D [words, chars]");
  if (c.size() != 2) fail("input 'C' must be 2-D [vocabulary, char_embedding_size]");
  if (w.size() != 4 || w[1] != 1 || w[3] != c[1]) {
    fail("input 'W' must be [embedding_size, 1, conv_window_size, char_embedding_size] with C's char_embedding_size");
  }
  if (b.size() != 1 || b[0] != w[0]) fail("input 'B' must be [embedding_size], W's first dim");
  if (a.embedding_size != -1 && a.embedding_size != w[0]) {
    fail("attribute embedding_size = " + std::to_string(a.embedding_size) + " does not match W's dim 0");
  }
  if (a.conv_window_size != -1 && a.conv_window_size != w[2]) {
    fail("attribute conv_window_size = " + std::to_string(a.conv_window_size) + " does not match W's dim 2");
  }
  if (a.char_embedding_size != -1 && a.char_embedding_size != c[1]) {
    fail("attribute char_embedding_size = " + std::to_string(a.char_embedding_size) + " does not match C's dim 1");
  }
  if (w[2] < 1 || w[2] > seq[1]) fail("the convolution window (W's dim 2) must be in [1, the word length]");
  WordConvEmbeddingGeometry g;
  g.words = seq[0];
  g.word_len = seq[1];
  g.filters = w[0];
  g.window = w[2];
  g.char_dim = c[1];
  g.vocab = c[0];
  return g;
}

namespace {

class WordConvEmbedding : public OpKernel {
 public:
  explicit WordConvEmbedding(const ir::Node& node) : attrs_(ParseWordConvEmbeddingAttributes(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    const WordConvEmbeddingGeometry g = CheckWordConvEmbeddingInputs(ctx, attrs_);
    ctx.EmplaceState(g);
    ctx.SetOutput(0, DataType::kFloat, {g.words, g.filters});
  }

  void Compute(KernelContext& ctx) const override {
    const WordConvEmbeddingGeometry& g = ctx.state<WordConvEmbeddingGeometry>();
    const int32_t* seq = ctx.required_input(0).data<int32_t>();
    const float* w = ctx.required_input(1).data<float>();
    const float* bias = ctx.required_input(2).data<float>();
    const float* emb = ctx.required_input(3).data<float>();
    float* y = ctx.OutputUninitialized(0).data<float>();
    const int64_t L = g.word_len, M = g.filters, K = g.window, E = g.char_dim;
    for (int64_t s = 0; s < g.words; ++s) {
      const int32_t* chars = seq + s * L;
      float* out = y + s * M;
      const int64_t n = WordLength(chars, L);
      if (n == 0) {
        std::fill(out, out + M, 0.0f);
        continue;
      }
      const int64_t looked_up = std::max(n, K);
      for (int64_t c = 0; c < looked_up; ++c) {
        if (chars[c] < 0 || chars[c] >= g.vocab) {
          throw InvalidArgumentError(ctx.Describe() + ": Sequence[" + std::to_string(s) + ", " + std::to_string(c) +
                                     "] = " + std::to_string(chars[c]) + " is not a row of C [" +
                                     std::to_string(g.vocab) + ", " + std::to_string(E) + "]");
        }
      }
      std::fill(out, out + M, kPoolStart);
      for (int64_t t = 0; t + K <= looked_up; ++t) {
        for (int64_t m = 0; m < M; ++m) {
          double z = bias[m];
          for (int64_t i = 0; i < K; ++i) {
            const float* e = emb + static_cast<int64_t>(chars[t + i]) * E;
            const float* wm = w + (m * K + i) * E;
            for (int64_t j = 0; j < E; ++j) z += static_cast<double>(e[j]) * static_cast<double>(wm[j]);
          }
          out[m] = PoolMax(static_cast<float>(std::tanh(z)), out[m]);
        }
      }
    }
  }

 private:
  WordConvEmbeddingAttributes attrs_;
};

}  // namespace

void RegisterWordConvEmbeddingKernels(KernelRegistry& r) {
  r.Add({.op = "WordConvEmbedding",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kInt32}}, {"T1", {DataType::kFloat}}},
         .create = MakeKernel<WordConvEmbedding>});
}

}  // namespace ferry::ref
