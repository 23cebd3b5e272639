// tools/run_inputs.h: the --shape and --input value parsers (dims are whole non-negative integers) and the
// tensor file reader.
#include "tools/run_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "ferry/error.h"
#include "testing/fifo.h"

namespace ferry {
namespace {

using ::testing::AllOf;
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

// The hang: `--input x=pipe.npy` (or .pb) naming a FIFO blocked `ferry run` forever. Only regular files
// are read, and refusing anything else never blocks (testing/fifo.h turns a regression into a failure).
TEST(RunInputs, TensorFilesMustBeRegularFiles) {
  const std::string dir = ::testing::TempDir() + "/ferry_run_inputs_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/dir.npy");
  for (const char* name : {"pipe.npy", "pipe.pb"}) {
    SCOPED_TRACE(name);
    testing::Fifo fifo(dir + "/" + name);
    EXPECT_THAT([&] { tools::LoadTensorFile(fifo.path()); },
                ThrowsMessage<InvalidArgumentError>(
                    AllOf(HasSubstr(fifo.path()), HasSubstr("is a FIFO, not a regular file"))));
    EXPECT_FALSE(fifo.fired()) << "the reader blocked on the FIFO";
  }
  EXPECT_THAT([&] { tools::LoadTensorFile(dir + "/dir.npy"); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("is a directory, not a regular file")));
  EXPECT_THAT([&] { tools::LoadTensorFile(dir + "/missing.pb"); },
              ThrowsMessage<InvalidArgumentError>(AllOf(HasSubstr("missing.pb"), HasSubstr("does not exist"))));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry
