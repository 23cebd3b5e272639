#include "core/parse_number.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <system_error>

namespace ferry {
namespace {

// Drops one leading '+' when a digit or '.' follows it (so "+-1", "++1" and "+inf" still fail).
std::string_view StripPlus(std::string_view text) {
  if (text.size() >= 2 && text[0] == '+' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.')) {
    text.remove_prefix(1);
  }
  return text;
}

template <typename T>
std::optional<T> ParseWhole(std::string_view text) {
  text = StripPlus(text);
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int64_t> ParseInt64(std::string_view text) { return ParseWhole<int64_t>(text); }

std::optional<double> ParseDouble(std::string_view text) {
  const std::optional<double> v = ParseWhole<double>(text);
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

}  // namespace ferry
