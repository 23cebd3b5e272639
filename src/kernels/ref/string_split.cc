// StringSplit (opset 20): splits every element of a string tensor, like Python's str.split. With a non-empty
// `delimiter` the string is split at each occurrence (consecutive delimiters give empty substrings); without one
// (absent or "") it is split at runs of whitespace and leading/trailing whitespace is dropped. `maxsplit` caps
// the number of splits (the remainder stays whole). Outputs: substrings, shape X.shape + [max count], padded
// with "" (dynamic: its width is the data's); and the count per element (int64, shape X.shape).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

class StringSplit : public OpKernel {
 public:
  explicit StringSplit(const ir::Node& node)
      : delimiter_(node.GetString("delimiter", "")),
        maxsplit_(node.has_attr("maxsplit") ? node.GetInt("maxsplit", -1) : -1) {}

  // X a string tensor; the substrings' width is the data's (dynamic), the counts have X's shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kString) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be a string tensor, got " + ctx.InputString(0));
    }
    ctx.SetOutputDynamic(0);
    if (ctx.output_count() > 1) ctx.SetOutput(1, DataType::kInt64, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(x.size()));
    size_t widest = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      auto& p = parts[static_cast<size_t>(i)];
      p = delimiter_.empty() ? SplitWhitespace(x.strings()[i]) : SplitDelimiter(x.strings()[i]);
      widest = std::max(widest, p.size());
    }
    Shape ys = x.shape();
    ys.push_back(static_cast<int64_t>(widest));
    Tensor& y = ctx.Output(0, DataType::kString, ys);
    Tensor& n = ctx.Output(1);
    for (int64_t i = 0; i < x.size(); ++i) {
      auto& p = parts[static_cast<size_t>(i)];
      n.data<int64_t>()[i] = static_cast<int64_t>(p.size());
      for (size_t j = 0; j < p.size(); ++j) y.strings()[static_cast<size_t>(i) * widest + j] = std::move(p[j]);
    }
  }

 private:
  bool MaySplit(size_t splits) const { return maxsplit_ < 0 || static_cast<int64_t>(splits) < maxsplit_; }

  std::vector<std::string> SplitDelimiter(const std::string& s) const {
    std::vector<std::string> out;
    size_t start = 0;
    while (MaySplit(out.size())) {
      size_t pos = s.find(delimiter_, start);
      if (pos == std::string::npos) break;
      out.push_back(s.substr(start, pos - start));
      start = pos + delimiter_.size();
    }
    out.push_back(s.substr(start));
    return out;
  }

  std::vector<std::string> SplitWhitespace(const std::string& s) const {
    std::vector<std::string> out;
    size_t i = 0;
    while (true) {
      while (i < s.size() && IsSpace(s[i])) ++i;
      if (i >= s.size()) break;
      if (!MaySplit(out.size())) {  // the remainder stays whole (trailing whitespace kept, as in Python)
        out.push_back(s.substr(i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !IsSpace(s[j])) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    }
    return out;
  }

  std::string delimiter_;
  int64_t maxsplit_;
};

}  // namespace

void RegisterStringSplitKernels(KernelRegistry& r) {
  r.Add({.op = "StringSplit",
         .since = 20,
         .types = {{"T1", {DataType::kString}}, {"T2", {DataType::kString}}, {"T3", {DataType::kInt64}}},
         .create = MakeKernel<StringSplit>});
}

}  // namespace ferry::ref
