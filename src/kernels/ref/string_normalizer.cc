// StringNormalizer (opset 10): drops the elements of a [C] or [1, C] string tensor that equal one of `stopwords`
// (compared case-insensitively unless is_case_sensitive=1), then applies case_change_action LOWER / UPPER / NONE.
// When every element is dropped the output is a single empty string of shape [1] (or [1, 1]). Prepare checks X;
// Y's shape is known before the run only without stopwords.
//
// Case mapping does not depend on any installed C/C++ locale (the `locale` attribute is accepted and ignored):
// strings are decoded as UTF-8 and mapped with a built-in table covering ASCII, Latin-1 (U+00C0-U+00FE),
// Latin Extended-A (U+0100-U+017F), Greek (U+0391-U+03C9) and basic Cyrillic (U+0400-U+045F). Other code points
// and malformed UTF-8 bytes pass through unchanged. One-to-many mappings (e.g. U+00DF -> "SS") are not applied.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

uint32_t ToUpperCp(uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0x80) return c;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 0x20;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x131) return 'I';
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 0) ? c - 1 : c;
    if (c == 0x17F) return 'S';
    if (c == 0x130 || c == 0x138 || c == 0x149 || c == 0x178) return c;
    return (c % 2 == 1) ? c - 1 : c;
  }
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 0x20;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x3AC && c <= 0x3CE) {
    if (c == 0x3AC) return 0x386;
    if (c >= 0x3AD && c <= 0x3AF) return c - 0x25;
    if (c == 0x3CC) return 0x38C;
    if (c == 0x3CD || c == 0x3CE) return c - 0x3F;
  }
  if (c >= 0x430 && c <= 0x44F) return c - 0x20;
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  return c;
}

uint32_t ToLowerCp(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0x80) return c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130) return 'i';
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 1) ? c + 1 : c;
    if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return c;
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 0x20;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 0x3F;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return c;
}

void AppendUtf8(uint32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Maps every well-formed UTF-8 sequence of up to 2 bytes (all the table covers) through `map`; other bytes are
// copied unchanged.
template <typename Map>
std::string MapCase(const std::string& s, Map map) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      out.push_back(static_cast<char>(map(b0)));
      ++i;
      continue;
    }
    if ((b0 & 0xE0) == 0xC0 && b0 >= 0xC2 && i + 1 < s.size() &&
        (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
      uint32_t c = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
      AppendUtf8(map(c), out);
      i += 2;
      continue;
    }
    out.push_back(s[i]);
    ++i;
  }
  return out;
}

enum class CaseAction { kNone, kLower, kUpper };

class StringNormalizer : public OpKernel {
 public:
  explicit StringNormalizer(const ir::Node& node)
      : case_sensitive_(node.GetInt("is_case_sensitive", 0) != 0) {
    std::string a = node.GetString("case_change_action", "NONE");
    if (a == "NONE") {
      action_ = CaseAction::kNone;
    } else if (a == "LOWER") {
      action_ = CaseAction::kLower;
    } else if (a == "UPPER") {
      action_ = CaseAction::kUpper;
    } else {
      throw InvalidModelError(node.Describe() + ": case_change_action must be LOWER, UPPER or NONE, got '" + a + "'");
    }
    for (const auto& w : node.GetStrings("stopwords")) stopwords_.push_back(case_sensitive_ ? w : Lower(w));
  }

  // X a [C] or [1, C] string tensor. Without stopwords nothing is dropped: Y's shape is known; else it is the
  // data's (dynamic).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kString) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be a string tensor, got " + ctx.InputString(0));
    }
    const bool two_d = x.shape.size() == 2;
    if (!(x.shape.size() == 1 || (two_d && x.shape[0] == 1))) {
      throw InvalidArgumentError(ctx.Describe() + ": input must have shape [C] or [1, C], got " +
                                 ShapeToString(x.shape) + " (" + ctx.InputString(0) + ")");
    }
    if (!stopwords_.empty()) return ctx.SetOutputDynamic(0);
    const int64_t c = std::max<int64_t>(ShapeElementCount(x.shape), 1);  // all dropped: one empty string
    ctx.SetOutput(0, DataType::kString, two_d ? Shape{1, c} : Shape{c});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const bool two_d = x.rank() == 2;
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x.size(); ++i) {
      const std::string& s = x.strings()[i];
      if (IsStopword(s)) continue;
      switch (action_) {
        case CaseAction::kNone: kept.push_back(s); break;
        case CaseAction::kLower: kept.push_back(Lower(s)); break;
        case CaseAction::kUpper: kept.push_back(MapCase(s, ToUpperCp)); break;
      }
    }
    if (kept.empty()) kept.emplace_back();
    const int64_t c = static_cast<int64_t>(kept.size());
    const OutputSpec* prepared = ctx.prepared_output(0);
    Tensor& y = prepared && prepared->is_tensor() ? ctx.Output(0)
                                                  : ctx.Output(0, DataType::kString, two_d ? Shape{1, c} : Shape{c});
    for (int64_t i = 0; i < c; ++i) y.strings()[i] = std::move(kept[static_cast<size_t>(i)]);
  }

 private:
  static std::string Lower(const std::string& s) { return MapCase(s, ToLowerCp); }

  bool IsStopword(const std::string& s) const {
    if (stopwords_.empty()) return false;
    const std::string key = case_sensitive_ ? s : Lower(s);
    for (const auto& w : stopwords_)
      if (w == key) return true;
    return false;
  }

  bool case_sensitive_;
  CaseAction action_ = CaseAction::kNone;
  std::vector<std::string> stopwords_;
};

}  // namespace

void RegisterStringNormalizerKernels(KernelRegistry& r) {
  r.Add({.op = "StringNormalizer", .since = 10, .create = MakeKernel<StringNormalizer>});
}

}  // namespace ferry::ref
