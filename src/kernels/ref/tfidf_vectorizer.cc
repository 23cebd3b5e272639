// TfIdfVectorizer (opset 9): counts the n-grams of pool_int64s / pool_strings in each row of a [C] or [N, C]
// int32/int64/string input. The pool lists n-grams grouped by length: ngram_counts[i] is where the
// (i+1)-grams start; the k-th n-gram of the whole pool is reported at output column ngram_indexes[k]. Only
// lengths min_gram_length..max_gram_length are counted; an n-gram may skip up to max_skip_count items between
// its elements (the same skip throughout; unigrams are counted once). mode TF: counts; IDF: weights[col] (or 1)
// where the count is non-zero; TFIDF: count * weights[col] (or the count). Output float [max index + 1] or
// [N, max index + 1]. Prepare checks X's type and shape.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class TfIdfMode { kTf, kIdf, kTfIdf };

class TfIdfVectorizer : public OpKernel {
 public:
  explicit TfIdfVectorizer(const ir::Node& node) {
    const std::string what = node.Describe();
    min_n_ = node.GetInt("min_gram_length", 0);
    max_n_ = node.GetInt("max_gram_length", 0);
    max_skip_ = node.GetInt("max_skip_count", 0);
    const std::string mode = node.GetString("mode", "");
    if (mode == "TF") {
      mode_ = TfIdfMode::kTf;
    } else if (mode == "IDF") {
      mode_ = TfIdfMode::kIdf;
    } else if (mode == "TFIDF") {
      mode_ = TfIdfMode::kTfIdf;
    } else {
      throw InvalidModelError(what + ": mode must be TF, IDF or TFIDF, got '" + mode + "'");
    }
    if (min_n_ < 1 || max_n_ < min_n_ || max_skip_ < 0)
      throw InvalidModelError(what + ": need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
    const std::vector<int64_t> counts = node.GetInts("ngram_counts");
    const std::vector<int64_t> indexes = node.GetInts("ngram_indexes");
    weights_ = node.GetFloats("weights");
    strings_ = node.has_attr("pool_strings");
    if (strings_ == node.has_attr("pool_int64s"))
      throw InvalidModelError(what + ": exactly one of pool_strings and pool_int64s must be given");
    pool_strings_ = node.GetStrings("pool_strings");
    pool_ints_ = node.GetInts("pool_int64s");
    const int64_t total = strings_ ? static_cast<int64_t>(pool_strings_.size()) : static_cast<int64_t>(pool_ints_.size());
    for (int64_t idx : indexes)
      if (idx < 0) throw InvalidModelError(what + ": ngram_indexes must be non-negative");
    out_size_ = indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
    if (!weights_.empty() && static_cast<int64_t>(weights_.size()) < out_size_)
      throw InvalidModelError(what + ": weights has fewer entries than output columns");
    int64_t ordinal = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      const int64_t n = static_cast<int64_t>(i) + 1;
      const int64_t begin = counts[i];
      const int64_t end = i + 1 < counts.size() ? counts[i + 1] : total;
      if (begin < 0 || end < begin || end > total)
        throw InvalidModelError(what + ": ngram_counts is not an increasing list of pool offsets");
      if ((end - begin) % n != 0)
        throw InvalidModelError(what + ": the pool section for " + std::to_string(n) + "-grams is not a multiple of " +
                                std::to_string(n));
      for (int64_t p = begin; p < end; p += n, ++ordinal) {
        if (ordinal >= static_cast<int64_t>(indexes.size()))
          throw InvalidModelError(what + ": fewer ngram_indexes than n-grams in the pool");
        if (n < min_n_ || n > max_n_) continue;
        const int64_t col = indexes[static_cast<size_t>(ordinal)];
        if (strings_) {
          str_grams_.emplace(std::vector<std::string>(pool_strings_.begin() + p, pool_strings_.begin() + p + n), col);
        } else {
          int_grams_.emplace(std::vector<int64_t>(pool_ints_.begin() + p, pool_ints_.begin() + p + n), col);
        }
      }
    }
  }

  // X's type against the pool and its shape; Y float [max index + 1] or [N, max index + 1].
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const bool is_string = x.dtype == DataType::kString;
    if (is_string != strings_) {
      throw InvalidArgumentError(ctx.Describe() + ": input type " + std::string(DataTypeName(x.dtype)) +
                                 " does not match the pool (" + (strings_ ? "strings" : "int64s") + ")");
    }
    const size_t rank = x.shape.size();
    if (rank > 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input must have shape [C] or [N, C], got " +
                                 ShapeToString(x.shape) + " (" + ctx.InputString(0) + ")");
    }
    const int64_t rows = rank == 2 ? x.shape[0] : 1;
    // (Without rows there is nothing to read: any integer type passes.)
    if (!strings_ && rows > 0 && x.dtype != DataType::kInt64 && x.dtype != DataType::kInt32) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be int32, int64 or string, got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, DataType::kFloat, rank == 2 ? Shape{rows, out_size_} : Shape{out_size_});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
    const int64_t c = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
    Tensor& y = ctx.Output(0);
    std::vector<int64_t> freq(static_cast<size_t>(out_size_));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(freq.begin(), freq.end(), 0);
      if (strings_) {
        CountRow(x.strings() + r * c, c, str_grams_, freq);
      } else if (x.dtype() == DataType::kInt64) {
        CountRow(x.data<int64_t>() + r * c, c, int_grams_, freq);
      } else {  // int32 (Prepare checked)
        std::vector<int64_t> row(x.data<int32_t>() + r * c, x.data<int32_t>() + (r + 1) * c);
        CountRow(row.data(), c, int_grams_, freq);
      }
      float* out = y.data<float>() + r * out_size_;
      for (int64_t k = 0; k < out_size_; ++k) {
        const float f = static_cast<float>(freq[static_cast<size_t>(k)]);
        const float w = weights_.empty() ? 1.0f : weights_[static_cast<size_t>(k)];
        switch (mode_) {
          case TfIdfMode::kTf: out[k] = f; break;
          case TfIdfMode::kIdf: out[k] = f > 0 ? w : 0.0f; break;
          case TfIdfMode::kTfIdf: out[k] = f * w; break;
        }
      }
    }
  }

 private:
  template <typename K>
  void CountRow(const K* row, int64_t c, const std::map<std::vector<K>, int64_t>& grams,
                std::vector<int64_t>& freq) const {
    std::vector<K> key;
    for (int64_t skip = 0; skip <= max_skip_; ++skip) {
      const int64_t step = skip + 1;
      for (int64_t n = std::max<int64_t>(min_n_, skip > 0 ? 2 : 1); n <= max_n_; ++n) {
        for (int64_t start = 0; start + (n - 1) * step < c; ++start) {
          key.clear();
          for (int64_t j = 0; j < n; ++j) key.push_back(row[start + j * step]);
          auto it = grams.find(key);
          if (it != grams.end()) ++freq[static_cast<size_t>(it->second)];
        }
      }
    }
  }

  int64_t min_n_ = 0, max_n_ = 0, max_skip_ = 0, out_size_ = 0;
  TfIdfMode mode_ = TfIdfMode::kTf;
  bool strings_ = false;
  std::vector<float> weights_;
  std::vector<std::string> pool_strings_;
  std::vector<int64_t> pool_ints_;
  std::map<std::vector<std::string>, int64_t> str_grams_;
  std::map<std::vector<int64_t>, int64_t> int_grams_;
};

}  // namespace

void RegisterTfIdfVectorizerKernels(KernelRegistry& r) {
  r.Add({.op = "TfIdfVectorizer",
         .since = 9,
         .types = {{"T", {DataType::kString, DataType::kInt32, DataType::kInt64}}, {"T1", {DataType::kFloat}}},
         .create = MakeKernel<TfIdfVectorizer>});
}

}  // namespace ferry::ref
