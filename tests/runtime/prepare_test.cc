// The executor's prepare phase (kernel.h: create -> prepare -> run): a signature's kernels are prepared before its
// first run and its arena is planned from what they declared; shape errors are raised by Prepare, naming the
// model, node and input; shape arithmetic on known values is computed during preparation so that a Reshape of a
// computed shape is planned; data-dependent outputs (NonZero) leave their readers to be prepared as they run; and a
// run whose shapes differ from a prepared signature gets a signature (and an arena) of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/buffer_pool.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

std::unique_ptr<Session> Create(const testing::ModelBuilder& b, const std::vector<std::string>& backends) {
  const std::string bytes = b.Bytes();
  SessionOptions options;
  options.threads = 1;
  options.backends = backends;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
}

Tensor Iota(const Shape& shape) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

const std::vector<std::vector<std::string>> kBackends = {{"cpu", "ref"}, {"ref"}};

// x: float[N, K] (symbolic K) times W: float[4, 3]: a K other than 4 is known only when the run gives x, and is
// Prepare's error, naming the node.
TEST(Prepare, AShapeErrorNamesTheModelNodeAndShapes) {
  for (const auto& backends : kBackends) {
    SCOPED_TRACE(backends.front());
    testing::ModelBuilder b;
    b.InputSym("x", kF, {2, -1}, "K");
    b.FloatInitializer("w", {4, 3}, std::vector<float>(12, 1.0f));
    b.Node("MatMul", {"x", "w"}, {"y"}, "project");
    b.Output("y", kF, {2, 3});
    auto session = Create(b, backends);
    try {
      session->Run({{"x", Iota({2, 5})}});
      FAIL() << "expected an error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("project"), std::string::npos) << what;
      EXPECT_NE(what.find("MatMul"), std::string::npos) << what;
      EXPECT_NE(what.find('5'), std::string::npos) << what;
    }
    // The session stays usable: a valid shape runs.
    auto out = session->Run({{"x", Iota({2, 4})}});
    EXPECT_EQ(out.at(0).second.shape(), (Shape{2, 3}));
    EXPECT_FLOAT_EQ(out.at(0).second.data<float>()[0], 0 + 1 + 2 + 3);
  }
}

// y = Relu(Relu(Reshape(Relu(x), Concat(Shape(x)[0], -1)))): the target shape is computed from x's shape alone, so
// the Reshape is prepared for it and the Relu after it is planned in the arena before the first run. Were the
// target known only at run time, that Relu would be prepared as it runs and its output allocated on its own.
TEST(Prepare, ShapeArithmeticIsComputedBeforeTheFirstRun) {
  for (const auto& backends : kBackends) {
    SCOPED_TRACE(backends.front());
    testing::ModelBuilder b;
    b.InputSym("x", kF, {-1, 4, 8}, "N");
    b.Int64Initializer("zero", {1}, {0});
    b.Int64Initializer("minus_one", {1}, {-1});
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Shape", {"x"}, {"s"});
    b.Node("Gather", {"s", "zero"}, {"n"});
    testing::ModelBuilder::IntAttr(b.Node("Concat", {"n", "minus_one"}, {"target"}), "axis", 0);
    b.Node("Reshape", {"r", "target"}, {"flat"});
    b.Node("Relu", {"flat"}, {"h"});
    b.Node("Relu", {"h"}, {"y"});
    b.graph().add_output()->set_name("y");
    b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
    auto session = Create(b, backends);
    for (int64_t n : {3, 5}) {
      const Tensor x = Iota({n, 4, 8});
      for (int run = 0; run < 2; ++run) {
        const uint64_t before = BufferAllocationCount();
        auto out = session->Run({{"x", x}});
        const uint64_t allocations = BufferAllocationCount() - before;
        const Tensor& y = out.at(0).second;
        ASSERT_EQ(y.shape(), (Shape{n, 32}));
        EXPECT_FLOAT_EQ(y.data<float>()[y.size() - 1], static_cast<float>(y.size() - 1));
        // The first run of a signature also prepares it: the three small values of the shape arithmetic and the
        // arena block. Every run then allocates its output alone: r and h come from the arena.
        EXPECT_LE(allocations, run == 0 ? 5u : 1u) << "run " << run << " of batch " << n;
      }
    }
    const std::vector<ArenaStats> arenas = session->arenas();
    ASSERT_EQ(arenas.size(), 2u);  // one per signature
    for (const ArenaStats& a : arenas) EXPECT_GE(a.buffers, 2u) << a.signature;
  }
}

// NonZero's output shape is known only from its data: the nodes reading it are prepared as they run, with the
// shapes each run gives them.
TEST(Prepare, DataDependentOutputsArePreparedAsTheyRun) {
  for (const auto& backends : kBackends) {
    SCOPED_TRACE(backends.front());
    testing::ModelBuilder b;
    b.Input("x", kF, {6});
    b.Node("NonZero", {"x"}, {"idx"});
    testing::ModelBuilder::IntAttr(b.Node("Cast", {"idx"}, {"f"}), "to", kF);
    b.Node("Relu", {"f"}, {"y"});
    b.graph().add_output()->set_name("y");
    b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
    auto session = Create(b, backends);
    const std::vector<std::vector<float>> runs = {{0, 1, 0, 2, 0, 3}, {1, 1, 1, 1, 1, 0}};
    for (const std::vector<float>& values : runs) {
      Tensor x(DataType::kFloat, {6});
      std::copy(values.begin(), values.end(), x.data<float>());
      auto out = session->Run({{"x", x}});
      const Tensor& y = out.at(0).second;
      int64_t nonzero = 0;
      for (float v : values) nonzero += v != 0;
      ASSERT_EQ(y.shape(), (Shape{1, nonzero}));
      int64_t k = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        if (values[i] == 0) continue;
        EXPECT_FLOAT_EQ(y.data<float>()[k++], static_cast<float>(i));
      }
    }
  }
}

// A Range whose limit is a graph input is data, not shape arithmetic: its reader is prepared at run time for the
// length each run gives, and a limit that changes between runs of one signature re-prepares it.
TEST(Prepare, RunTimeValuesAreNeverBakedIntoThePlan) {
  for (const auto& backends : kBackends) {
    SCOPED_TRACE(backends.front());
    testing::ModelBuilder b;
    b.Input("limit", kI64, {});
    b.Int64Initializer("start", {}, {0});
    b.Int64Initializer("delta", {}, {1});
    b.Node("Range", {"start", "limit", "delta"}, {"r"});
    testing::ModelBuilder::IntAttr(b.Node("Cast", {"r"}, {"f"}), "to", kF);
    b.Node("Relu", {"f"}, {"y"});
    b.graph().add_output()->set_name("y");
    b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
    auto session = Create(b, backends);
    for (int64_t limit : {4, 7, 2}) {
      Tensor l(DataType::kInt64, {});
      l.data<int64_t>()[0] = limit;
      auto out = session->Run({{"limit", l}});
      const Tensor& y = out.at(0).second;
      ASSERT_EQ(y.shape(), (Shape{limit}));
      EXPECT_FLOAT_EQ(y.data<float>()[limit - 1], static_cast<float>(limit - 1));
    }
  }
}

}  // namespace
}  // namespace ferry
