// ONNX Runtime's com.microsoft EmbedLayerNormalization (BERT's embeddings, as its transformer optimizer fuses
// them), computed by its definition in the accumulator type (float for float16): for each token (b, s),
//   e = word_embedding[input_ids[b, s]] + position_embedding[p] + segment_embedding[g]
// with p = position_ids[b or 0, s] when position_ids is given, else s; g = segment_ids[b, s], or 0 when only
// segment_embedding is given (ONNX Runtime's reading), no term without segment_embedding; then the layer
// normalization of e over its H values, mean and the variance about the mean, output = (e - mean) / sqrt(var +
// epsilon) * gamma + beta (epsilon default 1e-12). embedding_sum is e (rounded to the output type); mask_index
// counts the mask elements equal to 1 in each batch row (zeros without mask). An index out of its embedding's rows
// is an error (ONNX Runtime's "input index out of range"), checked before any is read. Prepare checks the inputs
// (shared with cpu); Compute gathers and normalizes the tokens in parallel.
#include "kernels/ref/embed_layer_normalization.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {

namespace {

const char* const kInputNames[] = {"input_ids",         "segment_ids", "word_embedding", "position_embedding",
                                   "segment_embedding", "gamma",       "beta",           "mask",
                                   "position_ids"};

}  // namespace

void PrepareEmbedLayerNorm(PrepareContext& ctx) {
  const std::string what = ctx.Describe();
  const auto fail = [&](int i, const std::string& why) {
    throw InvalidArgumentError(what + ": input '" + kInputNames[i] + "' " + why + ", got " + ctx.InputString(i));
  };
  const InputSpec& ids = ctx.tensor_input(0);
  if (ids.dtype != DataType::kInt32 || ids.shape.size() != 2) fail(0, "must be int32 [batch, sequence]");
  EmbedLayerNormShape s;
  s.batch = ids.shape[0];
  s.seq = ids.shape[1];
  const InputSpec& word = ctx.tensor_input(2);
  if (word.shape.size() != 2) fail(2, "must be 2-D [vocabulary, hidden]");
  if (!IsFloatingPoint(word.dtype)) fail(2, "must be floating-point");
  s.words = word.shape[0];
  s.hidden = word.shape[1];
  const auto embedding = [&](int i, int64_t* rows) {
    const InputSpec& e = ctx.tensor_input(i);
    if (e.dtype != word.dtype) fail(i, "must have word_embedding's element type");
    if (e.shape.size() != 2 || e.shape[1] != s.hidden) {
      fail(i, "must be 2-D [rows, " + std::to_string(s.hidden) + "] (word_embedding's hidden size)");
    }
    *rows = e.shape[0];
  };
  embedding(3, &s.positions);
  if (ctx.has_input(4)) embedding(4, &s.segments);
  for (int i : {5, 6}) {
    const InputSpec& p = ctx.tensor_input(i);
    if (p.dtype != word.dtype) fail(i, "must have word_embedding's element type");
    if (p.shape != Shape{s.hidden}) fail(i, "must be [" + std::to_string(s.hidden) + "] (the hidden size)");
  }
  for (int i : {1, 7}) {
    if (!ctx.has_input(i)) continue;
    const InputSpec& t = ctx.tensor_input(i);
    if (t.dtype != DataType::kInt32 || t.shape != ids.shape) {
      fail(i, "must be int32 of input_ids' shape " + ShapeToString(ids.shape));
    }
  }
  s.segment_ids = ctx.has_input(1);
  if (s.segment_ids && !s.segments) fail(1, "needs segment_embedding (input 4)");
  s.mask = ctx.has_input(7);
  if (ctx.has_input(8)) {
    const InputSpec& p = ctx.tensor_input(8);
    if (p.dtype != DataType::kInt32 || p.shape.size() != 2 || p.shape[1] != s.seq ||
        (p.shape[0] != 1 && p.shape[0] != s.batch)) {
      fail(8, "must be int32 [1 or batch, sequence] = [1 or " + std::to_string(s.batch) + ", " + std::to_string(s.seq) +
                  "]");
    }
    s.position_rows = p.shape[0];
  } else if (s.seq > s.positions && s.batch > 0) {
    fail(3, "has fewer rows than the sequence length " + std::to_string(s.seq) + " (positions 0.." +
                std::to_string(s.seq - 1) + " without position_ids)");
  }
  ctx.EmplaceState(s);
  const Shape out{s.batch, s.seq, s.hidden};
  ctx.SetOutput(0, word.dtype, out);
  if (ctx.output_count() > 1) ctx.SetOutput(1, DataType::kInt32, {s.batch});
  if (ctx.output_count() > 2) ctx.SetOutput(2, word.dtype, out);
}

void CheckEmbedIndices(const KernelContext& ctx, const EmbedLayerNormShape& s) {
  const auto check = [&](int i, int64_t limit) {
    const Tensor& t = ctx.required_input(i);
    const int32_t* p = t.data<int32_t>();
    for (int64_t k = 0; k < t.size(); ++k) {
      if (p[k] < 0 || p[k] >= limit) {
        throw InvalidArgumentError(ctx.Describe() + ": input '" + kInputNames[i] + "' element " + std::to_string(k) +
                                   " = " + std::to_string(p[k]) + " is out of range [0, " + std::to_string(limit) +
                                   ") (the rows of " +
                                   kInputNames[i == 0   ? 2
                                               : i == 1 ? 4
                                                        : 3] +
                                   ")");
      }
    }
  };
  check(0, s.words);
  if (s.segment_ids) check(1, s.segments);
  if (s.position_rows) check(8, s.positions);
}

void WriteMaskIndex(KernelContext& ctx, const EmbedLayerNormShape& s) {
  if (!ctx.output_requested(1)) return;
  int32_t* out = ctx.OutputUninitialized(1).data<int32_t>();
  const int32_t* mask = s.mask ? ctx.required_input(7).data<int32_t>() : nullptr;
  for (int64_t b = 0; b < s.batch; ++b) {
    out[b] = mask ? static_cast<int32_t>(std::count(mask + b * s.seq, mask + (b + 1) * s.seq, 1)) : 0;
  }
}

namespace {

class EmbedLayerNormalization : public OpKernel {
 public:
  explicit EmbedLayerNormalization(const ir::Node& node) : epsilon_(node.GetFloat("epsilon", 1e-12f)) {}

  void Prepare(PrepareContext& ctx) const override { PrepareEmbedLayerNorm(ctx); }

  void Compute(KernelContext& ctx) const override {
    const EmbedLayerNormShape& s = ctx.state<EmbedLayerNormShape>();
    CheckEmbedIndices(ctx, s);
    WriteMaskIndex(ctx, s);
    Tensor& y = ctx.Output(0);
    Tensor* sum_out = ctx.output_requested(2) ? &ctx.Output(2) : nullptr;
    if (y.size() == 0) return;
    const int32_t* ids = ctx.required_input(0).data<int32_t>();
    const int32_t* seg_ids = s.segment_ids ? ctx.required_input(1).data<int32_t>() : nullptr;
    const int32_t* pos_ids = s.position_rows ? ctx.required_input(8).data<int32_t>() : nullptr;
    Dispatch(FloatTypes{}, y.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* word = ctx.required_input(2).data<T>();
      const T* pos = ctx.required_input(3).data<T>();
      const T* seg = s.segments ? ctx.required_input(4).data<T>() : nullptr;
      const T* gamma = ctx.required_input(5).data<T>();
      const T* beta = ctx.required_input(6).data<T>();
      T* yp = y.data<T>();
      T* sp = sum_out ? sum_out->data<T>() : nullptr;
      const int64_t h = s.hidden;
      const A eps = static_cast<A>(epsilon_);
      ParallelFor(ctx.threads(), s.batch * s.seq, std::max<int64_t>(1, 8192 / std::max<int64_t>(h, 1)),
                  [&](int64_t begin, int64_t end) {
                    std::vector<A> e(static_cast<size_t>(h));
                    for (int64_t t = begin; t < end; ++t) {
                      const int64_t b = t / s.seq, q = t % s.seq;
                      const T* wr = word + ids[t] * h;
                      const T* pr = pos + (pos_ids ? pos_ids[(s.position_rows == 1 ? 0 : b) * s.seq + q] : q) * h;
                      const T* gr = seg ? seg + (seg_ids ? seg_ids[t] : 0) * h : nullptr;
                      A total = 0;
                      for (int64_t i = 0; i < h; ++i) {
                        A v = static_cast<A>(wr[i]) + static_cast<A>(pr[i]);
                        if (gr) v += static_cast<A>(gr[i]);
                        e[static_cast<size_t>(i)] = v;
                        total += v;
                        if (sp) sp[t * h + i] = static_cast<T>(v);
                      }
                      const A mean = total / static_cast<A>(h);
                      A sq = 0;
                      for (int64_t i = 0; i < h; ++i) {
                        const A d = e[static_cast<size_t>(i)] - mean;
                        sq += d * d;
                      }
                      const A inv = A(1) / std::sqrt(sq / static_cast<A>(h) + eps);
                      for (int64_t i = 0; i < h; ++i) {
                        yp[t * h + i] = static_cast<T>((e[static_cast<size_t>(i)] - mean) * inv *
                                                           static_cast<A>(gamma[i]) +
                                                       static_cast<A>(beta[i]));
                      }
                    }
                  });
    });
  }

 private:
  float epsilon_;
};

}  // namespace

void RegisterEmbedLayerNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "EmbedLayerNormalization",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T1", {DataType::kInt32}}, {"T", {DataType::kFloat, DataType::kFloat16}}},
         .create = MakeKernel<EmbedLayerNormalization>});
}

}  // namespace ferry::ref
