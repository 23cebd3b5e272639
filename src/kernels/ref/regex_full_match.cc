// RegexFullMatch (opset 20): true where the whole string matches `pattern`.
//
// ONNX specifies RE2 syntax; Ferry has no RE2 dependency and uses std::regex with the ECMAScript grammar, the
// closest available engine. Differences: RE2-only constructs (named groups `(?P<name>...)`, `\pL`-style Unicode
// classes, inline flags like `(?i)`) fail to compile and are rejected at session creation; ECMAScript-only ones
// (backreferences, lookahead) are accepted though RE2 would reject them; `\w`, `\d`, `\s` and `\b` are ASCII-only
// and `.` matches single bytes (not UTF-8 code points). Matching is not linear-time as RE2's is.
#include <regex>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class RegexFullMatch : public OpKernel {
 public:
  explicit RegexFullMatch(const ir::Node& node) {
    node.RequireAttr("pattern");
    const std::string pattern = node.GetString("pattern", "");
    try {
      regex_ = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw InvalidModelError(node.Describe() + ": pattern '" + pattern +
                              "' is not a valid regular expression (ECMAScript grammar): " + e.what());
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kString)
      throw InvalidArgumentError(ctx.Describe() + ": input must be a string tensor, got " + ctx.InputString(0));
    ctx.SetOutput(0, DataType::kBool, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    for (int64_t i = 0; i < x.size(); ++i) {
      try {
        y.data<bool>()[i] = std::regex_match(x.strings()[i], regex_);
      } catch (const std::regex_error& e) {  // e.g. error_complexity / error_stack on pathological input
        throw InvalidArgumentError(ctx.Describe() + ": matching element " + std::to_string(i) + " failed: " + e.what());
      }
    }
  }

 private:
  std::regex regex_;
};

}  // namespace

void RegisterRegexFullMatchKernels(KernelRegistry& r) {
  r.Add({.op = "RegexFullMatch",
         .since = 20,
         .types = {{"T1", {DataType::kString}}, {"T2", {DataType::kBool}}},
         .create = MakeKernel<RegexFullMatch>});
}

}  // namespace ferry::ref
