// tools/run_inputs.h: the --shape and --input value parsers (dims are whole non-negative integers).
#include "tools/run_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferry/error.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;
using ::testing::StrEq;
using ::testing::ThrowsMessage;

TEST(RunInputs, ParseDimsAcceptsBothSeparators) {
  EXPECT_EQ(tools::ParseDims("1x3x224x224", "--shape x"), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(tools::ParseDims("2,0,5", "--shape x"), (std::vector<int64_t>{2, 0, 5}));
  EXPECT_EQ(tools::ParseDims("+4", "--shape x"), (std::vector<int64_t>{4}));
  EXPECT_EQ(tools::ParseDims("", "--shape x"), (std::vector<int64_t>{}));  // a scalar
}

TEST(RunInputs, ParseDimsRejectsPartialNumbers) {
  const auto dims = [](const char* text) { return [text] { tools::ParseDims(text, "--shape x"); }; };
  EXPECT_THAT(dims("1x3a"), ThrowsMessage<InvalidArgumentError>(StrEq("--shape x: bad dimension '3a' in '1x3a'")));
  EXPECT_THAT(dims("1x 3"), ThrowsMessage<InvalidArgumentError>(StrEq("--shape x: bad dimension ' 3' in '1x 3'")));
  EXPECT_THAT(dims("1x-3"), ThrowsMessage<InvalidArgumentError>(StrEq("--shape x: bad dimension '-3' in '1x-3'")));
  EXPECT_THAT(dims("1x2.5"), ThrowsMessage<InvalidArgumentError>(StrEq("--shape x: bad dimension '2.5' in '1x2.5'")));
  EXPECT_THAT(dims("99999999999999999999"),
              ThrowsMessage<InvalidArgumentError>(HasSubstr("bad dimension '99999999999999999999'")));
  EXPECT_THAT(dims("1xx3"), ThrowsMessage<InvalidArgumentError>(HasSubstr("expected e.g. 1x3x224x224")));
}

TEST(RunInputs, ParseAssignmentSplitsAtTheLastEquals) {
  EXPECT_EQ(tools::ParseAssignment("a=b=1", "--input"), (std::pair<std::string, std::string>{"a=b", "1"}));
  EXPECT_THAT([] { tools::ParseAssignment("a=", "--input"); },
              ThrowsMessage<InvalidArgumentError>(StrEq("--input expects NAME=VALUE, got 'a='")));
}

}  // namespace
}  // namespace ferry
