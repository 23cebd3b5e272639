// com.microsoft::Tokenizer: splits each string of X ([C] or [N, C], UTF-8) into tokens, as ONNX Runtime does.
// Y has X's shape plus one dim, the most tokens of any string (plus 2 with mark); each row holds its string's
// tokens, then with mark=1 the end marker "\x03" after the start marker "\x02" that opens the row, then pad_value
// up to the row length. Attributes: mark, pad_value and mincharnum (> 0) are required; then exactly one of
//   separators: a list of regular expressions applied one after another: each splits every token the previous
//     ones left, dropping the matched text and the pieces shorter than mincharnum UTF-8 characters (the whole
//     string counts as the first token); when a separator leaves no token the string has none. [""] alone means
//     one token per UTF-8 character;
//   tokenexp: a regular expression whose matches are the tokens (those shorter than mincharnum are skipped, and
//     the search resumes one character after such a match's start); "." means one token per character.
// With char tokenization mincharnum must be 1. Matches are leftmost-longest (ONNX Runtime runs RE2 with
// longest_match). An empty input gives Y of shape [N, 0] ([0] for a 1-D X); no token in any string gives X's
// shape plus a 0 dim. Regular expressions use std::regex's ECMAScript grammar (regex_full_match.cc: Ferry has no
// RE2), with the longest match at the leftmost position found by trying every length: RE2-only syntax is refused
// when the session is created. Invalid UTF-8 in X is an error.
#include <algorithm>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Bytes of the UTF-8 sequence a lead byte starts (1 for a byte that starts none: the validator catches it).
size_t Utf8SeqBytes(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) return 2;
  if ((c >> 4) == 0xe) return 3;
  if ((c >> 3) == 0x1e) return 4;
  return 1;
}

// The UTF-8 characters of s, or nullopt when s is not valid UTF-8.
std::optional<size_t> Utf8Chars(std::string_view s) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++chars) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8SeqBytes(c);
    if ((n == 1 && c >= 0x80) || i + n > s.size()) return std::nullopt;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return std::nullopt;
    }
    i += n;
  }
  return chars;
}

size_t CharsOf(std::string_view s) { return Utf8Chars(s).value_or(s.size()); }

struct Match {
  size_t pos = 0, len = 0;
};

// The leftmost-longest match of `re` in text[start, text.size()) (text is the whole context: ^ matches only at
// text's start, $ only at its end).
std::optional<Match> FindLongest(const std::regex& re, std::string_view text, size_t start) {
  if (start > text.size()) return std::nullopt;
  const char* base = text.data();
  const char* end = base + text.size();
  const auto prev = start > 0 ? std::regex_constants::match_prev_avail : std::regex_constants::match_default;
  std::cmatch m;
  if (!std::regex_search(base + start, end, m, re, prev)) return std::nullopt;
  const size_t pos = start + static_cast<size_t>(m.position(0));
  const auto at = pos > 0 ? std::regex_constants::match_prev_avail : std::regex_constants::match_default;
  for (size_t len = text.size() - pos; len > static_cast<size_t>(m.length(0)); --len) {
    const auto flags = at | (pos + len < text.size() ? std::regex_constants::match_not_eol
                                                     : std::regex_constants::match_default);
    if (std::regex_match(base + pos, base + pos + len, re, flags)) return Match{pos, len};
  }
  return Match{pos, static_cast<size_t>(m.length(0))};
}

class Tokenizer : public OpKernel {
 public:
  explicit Tokenizer(const ir::Node& node) {
    for (const char* a : {"mark", "pad_value", "mincharnum"}) node.RequireAttr(a);
    mark_ = node.GetInt("mark", 0) != 0;
    pad_value_ = node.GetString("pad_value", "");
    const int64_t mincharnum = node.GetInt("mincharnum", 0);
    if (mincharnum <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute mincharnum = " + std::to_string(mincharnum) +
                              ", expected > 0");
    }
    mincharnum_ = static_cast<size_t>(mincharnum);
    std::vector<std::string> patterns;
    if (node.has_attr("separators")) {
      patterns = node.GetStrings("separators");
      if (patterns.empty()) throw InvalidModelError(node.Describe() + ": attribute separators is empty");
      char_level_ = patterns.size() == 1 && patterns[0].empty();
    } else {
      if (!node.has_attr("tokenexp")) {
        throw InvalidModelError(node.Describe() + ": one of the attributes separators and tokenexp is required");
      }
      patterns = {node.GetString("tokenexp", "")};
      if (patterns[0].empty()) throw InvalidModelError(node.Describe() + ": attribute tokenexp is empty");
      char_level_ = patterns[0] == ".";
      token_expression_ = true;
    }
    if (char_level_ && mincharnum_ > 1) {
      throw InvalidModelError(node.Describe() + ": mincharnum = " + std::to_string(mincharnum) +
                              " with character tokenization, expected 1");
    }
    if (char_level_) return;
    for (const std::string& p : patterns) {
      try {
        regexes_.emplace_back(p, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw InvalidModelError(node.Describe() + ": " + (token_expression_ ? "tokenexp" : "separator") + " '" + p +
                                "' is not a valid regular expression (ECMAScript grammar): " + e.what());
      }
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kString) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must be a string tensor, got " + ctx.InputString(0));
    }
    if (x.shape.size() != 1 && x.shape.size() != 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must be [C] or [N, C], got " + ctx.InputString(0));
    }
    ctx.SetOutputDynamic(0);  // the row length is the data's
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string* in = x.data<std::string>();
    if (x.size() == 0) {
      Shape shape = x.rank() == 2 ? Shape{x.dim(0), 0} : Shape{0};
      ctx.Output(0, DataType::kString, shape);
      return;
    }
    std::vector<std::vector<std::string_view>> rows(static_cast<size_t>(x.size()));
    size_t max_tokens = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      const std::string_view s = in[i];
      if (!Utf8Chars(s)) {
        throw InvalidArgumentError(ctx.Describe() + ": input string " + std::to_string(i) +
                                   " of 'X' is not valid UTF-8");
      }
      auto& row = rows[static_cast<size_t>(i)];
      if (char_level_) {
        for (size_t p = 0; p < s.size();) {
          const size_t n = Utf8SeqBytes(static_cast<unsigned char>(s[p]));
          row.push_back(s.substr(p, n));
          p += n;
        }
      } else if (token_expression_) {
        TokenExpression(s, row);
      } else {
        Separators(s, row);
      }
      max_tokens = std::max(max_tokens, row.size());
    }
    Shape shape = x.shape();
    if (max_tokens > 0 && mark_) max_tokens += 2;
    shape.push_back(static_cast<int64_t>(max_tokens));
    Tensor& y = ctx.Output(0, DataType::kString, shape);
    if (max_tokens == 0) return;
    std::string* out = y.data<std::string>();
    for (const auto& row : rows) {
      size_t k = 0;
      if (mark_) out[k++] = std::string(1, '\x02');
      for (std::string_view t : row) out[k++] = std::string(t);
      if (mark_) out[k++] = std::string(1, '\x03');
      while (k < max_tokens) out[k++] = pad_value_;
      out += max_tokens;
    }
  }

 private:
  // The matches of tokenexp of at least mincharnum characters, left to right.
  void TokenExpression(std::string_view s, std::vector<std::string_view>& row) const {
    if (CharsOf(s) < mincharnum_) return;
    size_t start = 0;
    while (const auto m = FindLongest(regexes_[0], s, start)) {
      if (CharsOf(s.substr(m->pos, m->len)) >= mincharnum_) {
        row.push_back(s.substr(m->pos, m->len));
        start = m->pos + m->len;
      } else {
        start = m->pos + (m->pos < s.size() ? Utf8SeqBytes(static_cast<unsigned char>(s[m->pos])) : 1);
      }
    }
  }

  // Each separator in turn splits every token the previous ones left.
  void Separators(std::string_view s, std::vector<std::string_view>& row) const {
    row.push_back(s);
    std::vector<std::string_view> next;
    for (const std::regex& sep : regexes_) {
      next.clear();
      for (std::string_view text : row) {
        size_t start = 0;
        while (true) {
          const auto m = FindLongest(sep, text, start);
          if (!m) {
            if (start <= text.size() && CharsOf(text.substr(start)) >= mincharnum_) next.push_back(text.substr(start));
            break;
          }
          if (CharsOf(text.substr(start, m->pos - start)) >= mincharnum_) {
            next.push_back(text.substr(start, m->pos - start));
          }
          // An empty match skips the character it stands before (ONNX Runtime's progress rule).
          start = m->pos + (m->len > 0
                                ? m->len
                                : (m->pos < text.size() ? Utf8SeqBytes(static_cast<unsigned char>(text[m->pos])) : 1));
        }
      }
      if (next.empty()) {
        row.clear();
        return;
      }
      row.swap(next);
    }
  }

  bool mark_ = false;
  std::string pad_value_;
  size_t mincharnum_ = 1;
  bool char_level_ = false;
  bool token_expression_ = false;
  std::vector<std::regex> regexes_;
};

}  // namespace

void RegisterTokenizerKernels(KernelRegistry& r) {
  r.Add({.op = "Tokenizer",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kString}}},
         .create = MakeKernel<Tokenizer>});
}

}  // namespace ferry::ref
