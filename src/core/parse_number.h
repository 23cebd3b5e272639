// Whole-string number parsing for flag values and option text ("--batch 1,2,4", "opt=2", "--range x=0,1"): the
// whole text must be one number, so "1abc", "", " 1" and "1 " fail instead of reading a prefix as std::stoll and
// std::stod do. Callers turn a failure into their own error naming the flag, the text and what was expected.
//
// Syntax (std::from_chars, plus one optional leading '+', which the std::sto* functions these replace accepted):
//   ParseInt64:  [+|-]DIGITS, base 10; a value outside int64_t fails.
//   ParseDouble: [+|-]DIGITS[.DIGITS][(e|E)[+|-]DIGITS], also ".5" and "5."; finite values only: "inf", "nan",
//                hex floats and values that overflow (1e400) or underflow to zero (1e-400) fail.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ferry {

std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);

}  // namespace ferry
