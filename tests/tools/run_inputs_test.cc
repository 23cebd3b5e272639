// tools/run_inputs.h: the --shape and --input value parsers (dims are whole non-negative integers), the tensor
// file reader, and the shapes `ferry run --shape/--batch` fix at session creation (with ReadModelInputs).
#include "tools/run_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/fifo.h"

namespace ferry {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Pair;
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

IoInfo Input(const std::string& name, std::vector<int64_t> dims) {
  IoInfo info;
  info.name = name;
  info.dtype = DataType::kFloat;
  info.has_shape = true;
  info.dims = std::move(dims);
  info.dim_names.assign(info.dims.size(), "");
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (info.dims[i] < 0) info.dim_names[i] = i == 0 ? "batch" : "seq";
  }
  return info;
}

TEST(RunInputs, FixedShapesAreTheGivenShapesWithoutBatch) {
  tools::InputSpec spec;
  spec.shapes["x"] = {2, 4};
  EXPECT_THAT(tools::FixedInputShapes({Input("x", {-1, 4})}, spec), ElementsAre(Pair("x", ElementsAre(2, 4))));
}

TEST(RunInputs, BatchFixesEveryRandomInputWithOnlyAFreeLeadingDim) {
  tools::InputSpec spec;
  spec.batch = 3;
  spec.shapes["given"] = {5, 2};
  spec.files["from_file"] = "f.npy";
  const std::vector<IoInfo> inputs = {Input("image", {-1, 3, 8, 8}), Input("tokens", {-1, -1}),
                                      Input("given", {-1, 2}), Input("from_file", {-1, 4}),
                                      Input("static", {1, 4})};
  // tokens keeps its symbolic dims (sized per run); a --shape wins; a file's shape is the file's.
  EXPECT_THAT(tools::FixedInputShapes(inputs, spec),
              ElementsAre(Pair("given", ElementsAre(5, 2)), Pair("image", ElementsAre(3, 3, 8, 8))));
}

TEST(RunInputs, BatchOnAModelWithAFixedBatchIsRefusedNamingTheInputs) {
  tools::InputSpec spec;
  spec.batch = 2;
  IoInfo unranked;
  unranked.name = "any";
  EXPECT_THAT([&] { tools::FixedInputShapes({Input("x", {1, 3}), unranked}, spec); },
              ThrowsMessage<InvalidArgumentError>(StrEq(
                  "--batch 2: no input has a symbolic leading dim: the model's batch is fixed (inputs 'x' "
                  "[1,3], 'any' (rank unknown))")));
}

// An LSTM's [seq, batch, features]: its symbolic dim is not the leading one, so the batch is not "fixed".
TEST(RunInputs, BatchOnAModelWhoseSymbolicDimIsNotLeadingSaysToUseShape) {
  tools::InputSpec spec;
  spec.batch = 2;
  IoInfo x = Input("x", {5, -1, 32});
  x.dim_names = {"", "batch", ""};
  EXPECT_THAT([&] { tools::FixedInputShapes({x}, spec); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr(
                  "no input has a symbolic leading dim (the symbolic dims are not the first: give the shape with "
                  "--shape NAME=DIMS)")));
}

TEST(RunInputs, ModelInputsAreReadWithoutASession) {
  const std::vector<IoInfo> inputs = ReadModelInputs(std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx");
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].name, "input");
  EXPECT_THAT(inputs[0].dims, ElementsAre(1, 3, 32, 32));
  const std::vector<uint8_t> garbage = {1, 2, 3, 4, 5};
  EXPECT_THROW(ReadModelInputs(std::span<const uint8_t>(garbage)), InvalidModelError);
  EXPECT_THAT([] { ReadModelInputs(std::string("/nonexistent/m.onnx")); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("/nonexistent/m.onnx")));
}

}  // namespace
}  // namespace ferry
