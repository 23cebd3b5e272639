// The ref kernels' Prepare (kernel.h: create -> prepare -> run), group a (Adagrad .. DynamicQuantizeLinear): shape
// errors that only the run's shapes reveal are raised by Prepare, naming the model, the node and the input; inputs
// that carry an axis or a shape as data are resolved by Prepare when they are initializers and by Compute when
// they are run-time values, which may differ from run to run.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

std::unique_ptr<Session> CreateRef(const testing::ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  SessionOptions options;
  options.threads = 1;
  options.backends = {"ref"};
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
}

// Declares graph output `name` with element type `elem_type` and no shape.
void OutputOfType(testing::ModelBuilder& b, const std::string& name, int32_t elem_type) {
  auto* o = b.graph().add_output();
  o->set_name(name);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

Tensor Iota(const Shape& shape) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

// Runs `session` on `feeds` and returns the message of the error it must raise.
template <typename E>
std::string RunError(Session& session, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  try {
    session.Run(feeds);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected error type: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

// Prepare's messages start with the model's description; Compute's name only the node.
void ExpectPrepareError(const std::string& what, const std::string& node, const std::string& detail) {
  EXPECT_NE(what.find("model <bytes>"), std::string::npos) << what;
  EXPECT_NE(what.find("'" + node + "'"), std::string::npos) << what;
  EXPECT_NE(what.find(detail), std::string::npos) << what;
}

// Det of a non-square matrix: the symbolic dim is known only from the run's input.
TEST(RefPrepareA, DetRefusesANonSquareInput) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {2, -1, 3}, "M");
  b.Node("Det", {"x"}, {"y"}, "det");
  OutputOfType(b, "y", kF);
  auto session = CreateRef(b);
  ExpectPrepareError(RunError<InvalidArgumentError>(*session, {{"x", Iota({2, 4, 3})}}), "det", "[2,4,3]");
  // The session stays usable.
  auto out = session->Run({{"x", Iota({2, 3, 3})}});
  EXPECT_EQ(out.at(0).second.shape(), (Shape{2}));
}

// DepthToSpace with channels that blocksize^2 does not divide: the message names the input.
TEST(RefPrepareA, DepthToSpaceNamesTheInput) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {1, -1, 2, 2}, "C");
  testing::ModelBuilder::IntAttr(b.Node("DepthToSpace", {"x"}, {"y"}, "d2s"), "blocksize", 2);
  OutputOfType(b, "y", kF);
  auto session = CreateRef(b);
  ExpectPrepareError(RunError<InvalidArgumentError>(*session, {{"x", Iota({1, 3, 2, 2})}}), "d2s",
                     "input 0 'x' float32[1,3,2,2]");
  auto out = session->Run({{"x", Iota({1, 8, 2, 2})}});
  EXPECT_EQ(out.at(0).second.shape(), (Shape{1, 2, 4, 4}));
}

// Concat of inputs that differ outside the axis.
TEST(RefPrepareA, ConcatNamesTheMismatchedInput) {
  testing::ModelBuilder b;
  b.InputSym("a", kF, {-1, 3}, "N");
  b.FloatInitializer("b", {2, 3}, std::vector<float>(6, 1.0f));
  testing::ModelBuilder::IntAttr(b.Node("Concat", {"a", "b"}, {"y"}, "join"), "axis", 1);
  OutputOfType(b, "y", kF);
  auto session = CreateRef(b);
  ExpectPrepareError(RunError<InvalidArgumentError>(*session, {{"a", Iota({4, 3})}}), "join",
                     "input 1 'b' float32[2,3]");
  auto out = session->Run({{"a", Iota({2, 3})}});
  EXPECT_EQ(out.at(0).second.shape(), (Shape{2, 6}));
}

// ConvTranspose with a bias of the wrong length.
TEST(RefPrepareA, ConvTransposeChecksTheBias) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {-1, 1, 3, 3}, "N");
  b.FloatInitializer("w", {1, 2, 2, 2}, std::vector<float>(8, 1.0f));
  b.FloatInitializer("bias", {3}, {1, 2, 3});
  b.Node("ConvTranspose", {"x", "w", "bias"}, {"y"}, "deconv");
  OutputOfType(b, "y", kF);
  auto session = CreateRef(b);
  ExpectPrepareError(RunError<InvalidArgumentError>(*session, {{"x", Iota({1, 1, 3, 3})}}), "deconv",
                     "input 2 'bias' float32[3]");
}

// ArgMax over an axis of length 0 (with a non-empty output).
TEST(RefPrepareA, ArgMaxRefusesAnEmptyAxis) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {2, -1}, "K");
  testing::ModelBuilder::IntAttr(b.Node("ArgMax", {"x"}, {"y"}, "argmax"), "axis", 1);
  OutputOfType(b, "y", kI64);
  auto session = CreateRef(b);
  ExpectPrepareError(RunError<InvalidArgumentError>(*session, {{"x", Iota({2, 0})}}), "argmax", "empty axis 1");
  auto out = session->Run({{"x", Iota({2, 3})}});
  EXPECT_EQ(out.at(0).second.data<int64_t>()[1], 2);
}

// CumSum's axis as an initializer is resolved by Prepare: out of range, the error names the model too.
TEST(RefPrepareA, CumSumResolvesAKnownAxisInPrepare) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {2, -1}, "K");
  b.Int64Initializer("axis", {}, {5});
  b.Node("CumSum", {"x", "axis"}, {"y"}, "cumsum");
  OutputOfType(b, "y", kF);
  auto session = CreateRef(b);
  ExpectPrepareError(RunError<InvalidArgumentError>(*session, {{"x", Iota({2, 3})}}), "cumsum",
                     "axis 5 is out of range");
}

// CumSum's axis as a graph input is data: each run's value is used, and a bad one is Compute's error, naming the
// node.
TEST(RefPrepareA, CumSumReadsARunTimeAxisEveryRun) {
  testing::ModelBuilder b;
  b.Input("x", kF, {2, 3});
  b.Input("axis", kI64, {});
  b.Node("CumSum", {"x", "axis"}, {"y"}, "cumsum");
  b.Output("y", kF, {2, 3});
  auto session = CreateRef(b);
  auto axis = [](int64_t v) {
    Tensor t(DataType::kInt64, {});
    t.data<int64_t>()[0] = v;
    return t;
  };
  const Tensor x = Iota({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  auto rows = session->Run({{"x", x}, {"axis", axis(1)}});
  EXPECT_FLOAT_EQ(rows.at(0).second.data<float>()[2], 0 + 1 + 2);
  auto cols = session->Run({{"x", x}, {"axis", axis(0)}});
  EXPECT_FLOAT_EQ(cols.at(0).second.data<float>()[2], 2);
  EXPECT_FLOAT_EQ(cols.at(0).second.data<float>()[5], 2 + 5);
  const std::string what = RunError<InvalidArgumentError>(*session, {{"x", x}, {"axis", axis(7)}});
  EXPECT_NE(what.find("'cumsum'"), std::string::npos) << what;
  EXPECT_NE(what.find("axis 7"), std::string::npos) << what;
}

// ConstantOfShape of a run-time shape: the output is dynamic and follows each run's values.
TEST(RefPrepareA, ConstantOfShapeFollowsARunTimeShape) {
  testing::ModelBuilder b;
  b.Input("shape", kI64, {2});
  b.Node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  OutputOfType(b, "y", kF);
  auto session = CreateRef(b);
  for (int64_t n : {2, 5}) {
    Tensor s(DataType::kInt64, {2});
    s.data<int64_t>()[0] = n;
    s.data<int64_t>()[1] = 3;
    auto out = session->Run({{"shape", s}});
    EXPECT_EQ(out.at(0).second.shape(), (Shape{n, 3}));
  }
}

}  // namespace
}  // namespace ferry
