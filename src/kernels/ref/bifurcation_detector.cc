// com.microsoft::BifurcationDetector (ONNX Runtime's aggressive-decoding step; int64 tokens, 1-D):
// 1. tokens = cur_tokens when pred_tokens is absent; else, with p = prev_suffix_match_idx (in [0, len(src)]) and
//    pred_tokens of length len(src) + 1 - p, the bifurcation index k is the first index where pred_tokens[k] !=
//    src_tokens[p + k] (len(src) - p when none), and tokens = cur_tokens ++ pred_tokens[0..k].
// 2. suffix_match_idx: for n from min_ngram_size (default 1) to max_ngram_size (default 3), while n <= len(tokens):
//    find the first occurrence of tokens' last n tokens in src_tokens; none: stop; its end e (start + n) >= len(src):
//    stop with e; a second occurrence (searched from start + 1): -1 and the next n; else e and the next n. The
//    result is the last value set (-1 when none). suffix_match_idx has prev_suffix_match_idx's shape.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class BifurcationDetector : public OpKernel {
 public:
  explicit BifurcationDetector(const ir::Node& node)
      : min_(node.GetInt("min_ngram_size", 1)), max_(node.GetInt("max_ngram_size", 3)) {
    if (min_ <= 0 || max_ < min_) {
      throw InvalidModelError(node.Describe() + ": attributes min_ngram_size = " + std::to_string(min_) +
                              ", max_ngram_size = " + std::to_string(max_) + ", expected 0 < min <= max");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    for (int i : {0, 1}) {
      if (ctx.tensor_input(i).shape.size() != 1) {
        throw InvalidArgumentError(what + ": input " + ctx.InputString(i) + " must be 1-D");
      }
    }
    const InputSpec& prev = ctx.tensor_input(2);
    if (ShapeElementCount(prev.shape) != 1) {
      throw InvalidArgumentError(what + ": input 'prev_suffix_match_idx' must hold one value, got " +
                                 ctx.InputString(2));
    }
    if (ctx.has_input(3) && ctx.tensor_input(3).shape.size() != 1) {
      throw InvalidArgumentError(what + ": input " + ctx.InputString(3) + " must be 1-D");
    }
    if (ctx.has_input(3)) ctx.SetOutputDynamic(0);
    else ctx.SetOutput(0, DataType::kInt64, ctx.tensor_input(1).shape);
    ctx.SetOutput(1, DataType::kInt64, prev.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& src_t = ctx.required_input(0);
    const Tensor& cur_t = ctx.required_input(1);
    const int64_t* src = src_t.data<int64_t>();
    const int64_t* cur = cur_t.data<int64_t>();
    const int64_t src_len = src_t.size();
    std::vector<int64_t> tokens(cur, cur + cur_t.size());
    if (const Tensor* pred_t = ctx.input(3)) {
      const int64_t p = ctx.required_input(2).data<int64_t>()[0];
      if (p < 0 || p > src_len || pred_t->size() != src_len + 1 - p) {
        throw InvalidArgumentError(ctx.Describe() + ": prev_suffix_match_idx = " + std::to_string(p) +
                                   " must be in [0, " + std::to_string(src_len) + "] and pred_tokens must have " +
                                   "len(src_tokens) + 1 - prev_suffix_match_idx values, got " +
                                   std::to_string(pred_t->size()));
      }
      const int64_t* pred = pred_t->data<int64_t>();
      int64_t k = 0;
      while (k < src_len - p && pred[k] == src[k + p]) ++k;
      tokens.insert(tokens.end(), pred, pred + k + 1);
      Tensor& out = ctx.Output(0, DataType::kInt64, {static_cast<int64_t>(tokens.size())});
      std::copy(tokens.begin(), tokens.end(), out.data<int64_t>());
    } else {
      Tensor& out = ctx.OutputUninitialized(0);
      std::copy(tokens.begin(), tokens.end(), out.data<int64_t>());
    }
    const auto len = static_cast<int64_t>(tokens.size());
    int64_t suffix = -1;
    for (int64_t n = min_; n <= max_ && n <= len; ++n) {
      const int64_t* needle = tokens.data() + len - n;
      const int64_t* it = std::search(src, src + src_len, needle, needle + n);
      if (it == src + src_len) break;
      suffix = (it - src) + n;
      if (suffix >= src_len) break;
      if (std::search(it + 1, src + src_len, needle, needle + n) != src + src_len) suffix = -1;
    }
    ctx.Output(1).data<int64_t>()[0] = suffix;
  }

 private:
  int64_t min_, max_;
};

}  // namespace

void RegisterBifurcationDetectorKernels(KernelRegistry& r) {
  r.Add({.op = "BifurcationDetector",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kInt64}}},
         .create = MakeKernel<BifurcationDetector>});
}

}  // namespace ferry::ref
