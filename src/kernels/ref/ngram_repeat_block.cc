// com.microsoft::NGramRepeatBlock (ONNX Runtime's no-repeat-ngram rule of beam search): scores_out = scores
// ([batch, vocab], float) with -inf at every token that would repeat an n-gram of input_ids ([batch, cur_len],
// int64): for each i with i + ngram_size <= cur_len whose ngram_size - 1 tokens input_ids[b, i..] equal the last
// ngram_size - 1 tokens of the row, token input_ids[b, i + ngram_size - 1] is banned. Nothing is banned when
// cur_len + 1 < ngram_size. ngram_size (required) > 0; a banned token id outside [0, vocab) is an error.
#include <limits>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class NGramRepeatBlock : public OpKernel {
 public:
  explicit NGramRepeatBlock(const ir::Node& node) {
    node.RequireAttr("ngram_size");
    ngram_ = node.GetInt("ngram_size", 0);
    if (ngram_ <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute ngram_size = " + std::to_string(ngram_) +
                              ", expected > 0");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& ids = ctx.tensor_input(0);
    const InputSpec& scores = ctx.tensor_input(1);
    if (ids.shape.size() != 2 || scores.shape.size() != 2 || ids.shape[0] != scores.shape[0]) {
      throw InvalidArgumentError(ctx.Describe() + ": input_ids [batch, cur_len] and scores [batch, vocab] must be " +
                                 "2-D with one batch, got " + ctx.InputString(0) + " and " + ctx.InputString(1));
    }
    ctx.SetOutput(0, scores.dtype, scores.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& ids = ctx.required_input(0);
    const Tensor& scores = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    const float* s = scores.data<float>();
    float* o = out.data<float>();
    std::copy(s, s + scores.size(), o);
    const int64_t batch = ids.dim(0), len = ids.dim(1), vocab = scores.dim(1);
    if (len + 1 < ngram_) return;
    const int64_t* id = ids.data<int64_t>();
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t* row = id + b * len;
      for (int64_t i = 0; i + ngram_ <= len; ++i) {
        bool banned = true;
        for (int64_t j = 0; j < ngram_ - 1 && banned; ++j) banned = row[i + j] == row[len + 1 - ngram_ + j];
        if (!banned) continue;
        const int64_t token = row[i + ngram_ - 1];
        if (token < 0 || token >= vocab) {
          throw InvalidArgumentError(ctx.Describe() + ": banned token id " + std::to_string(token) + " (input_ids[" +
                                     std::to_string(b) + ", " + std::to_string(i + ngram_ - 1) +
                                     "]) is outside the vocabulary [0, " + std::to_string(vocab) + ")");
        }
        o[b * vocab + token] = -std::numeric_limits<float>::infinity();
      }
    }
  }

 private:
  int64_t ngram_ = 0;
};

}  // namespace

void RegisterNGramRepeatBlockKernels(KernelRegistry& r) {
  r.Add({.op = "NGramRepeatBlock",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"Tid", {DataType::kInt64}}, {"T", {DataType::kFloat}}},
         .create = MakeKernel<NGramRepeatBlock>});
}

}  // namespace ferry::ref
