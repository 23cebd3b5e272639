// core/parse_number.h: the whole text is one number or nothing; one leading '+'; finite doubles only.
#include "core/parse_number.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ferry {
namespace {

TEST(ParseNumber, Int64AcceptsWholeIntegers) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("42"), 42);
  EXPECT_EQ(ParseInt64("-7"), -7);
  EXPECT_EQ(ParseInt64("+7"), 7);  // std::stoll accepted it; so do we
  EXPECT_EQ(ParseInt64("007"), 7);
  EXPECT_EQ(ParseInt64("-0"), 0);
  EXPECT_EQ(ParseInt64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseInt64("-9223372036854775808"), std::numeric_limits<int64_t>::min());
}

TEST(ParseNumber, Int64RejectsJunkBlanksAndOverflow) {
  for (const char* bad : {"", "+", "-", "abc", "1abc", "12x", "1.5", "1e3", " 1", "1 ", "\t1", "0x10", "++1", "+-1",
                          "-+1", "1,2", "9223372036854775808", "-9223372036854775809", "99999999999999999999"}) {
    EXPECT_EQ(ParseInt64(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(ParseNumber, Int64StopsAtTheViewsEnd) {
  const std::string_view text = "123456";
  EXPECT_EQ(ParseInt64(text.substr(0, 3)), 123);  // not NUL-terminated: the characters after the view are not read
}

TEST(ParseNumber, DoubleAcceptsDecimalsAndExponents) {
  EXPECT_EQ(ParseDouble("0"), 0.0);
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_EQ(ParseDouble("-2.25"), -2.25);
  EXPECT_EQ(ParseDouble("+0.5"), 0.5);
  EXPECT_EQ(ParseDouble(".5"), 0.5);
  EXPECT_EQ(ParseDouble("+.5"), 0.5);
  EXPECT_EQ(ParseDouble("5."), 5.0);
  EXPECT_EQ(ParseDouble("1e3"), 1000.0);
  EXPECT_EQ(ParseDouble("1E+3"), 1000.0);
  EXPECT_EQ(ParseDouble("2.5e-3"), 2.5e-3);
  EXPECT_EQ(ParseDouble("-1e-3"), -1e-3);
  EXPECT_EQ(ParseDouble("99.9"), 99.9);
  EXPECT_EQ(ParseDouble("1e308"), 1e308);
  EXPECT_EQ(ParseDouble("1e-310"), 1e-310);  // subnormal, still representable
  const std::optional<double> negative_zero = ParseDouble("-0");
  ASSERT_TRUE(negative_zero.has_value());
  EXPECT_TRUE(*negative_zero == 0 && std::signbit(*negative_zero));
}

TEST(ParseNumber, DoubleRejectsJunkBlanksNonFiniteAndOutOfRange) {
  for (const char* bad : {"", "+", "-", ".", "e3", "1e", "1e+", "1abc", "1.5x", "0,1", "1.2.3", " 1", "1 ", "\n1",
                          "++1", "+-1", "inf", "-inf", "+inf", "infinity", "nan", "NaN", "-nan", "0x10", "0x1p3",
                          "1e400", "-1e400", "1e-400"}) {
    EXPECT_EQ(ParseDouble(bad), std::nullopt) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace ferry
