// SessionOptions are checked at Session creation: a value outside its range is an InvalidArgumentError naming the
// option, the value and the range, before anything is built on it.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstdlib>

#include "ferry/error.h"
#include "ferry/limits.h"
#include "ferry/session.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;

// y = Relu(Conv(x, w)): a convolution, where oneDNN runs a parallel region with the session's thread count.
std::string ConvModel() {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {1, 2, 6, 6});
  b.FloatInitializer("w", {4, 2, 3, 3}, std::vector<float>(4 * 2 * 3 * 3, 0.25f));
  b.Node("Conv", {"x", "w"}, {"c"}, "conv");
  b.Node("Relu", {"c"}, {"y"}, "relu");
  b.Output("y", onnx::TensorProto::FLOAT, {1, 4, 4, 4});
  return b.Bytes();
}

std::unique_ptr<Session> Create(const std::string& bytes, const SessionOptions& options) {
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
}

TEST(SessionOptions, ThreadsOutsideZeroToMaxAreInvalidArguments) {
  const std::string model = ConvModel();
  for (int threads : {-1, -100000, kMaxThreads + 1, 100000}) {
    SessionOptions o;
    o.threads = threads;
    try {
      Create(model, o);
      ADD_FAILURE() << "threads = " << threads << " was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_STREQ(e.what(), ("session options: threads = " + std::to_string(threads) +
                              " is out of range: expected 0 (all hardware threads) to 1024")
                                 .c_str());
    }
  }
}

// "" when a session with `threads` runs the convolution right, else what went wrong.
std::string RunConv(int threads) {
  SessionOptions o;
  o.threads = threads;
  auto s = Create(ConvModel(), o);
  const Tensor x = Tensor::FromVector<float>(DataType::kFloat, {1, 2, 6, 6}, std::vector<float>(72, 1.0f));
  const auto out = s->Run({{"x", x}});
  if (out.size() != 1 || out[0].second.shape() != std::vector<int64_t>({1, 4, 4, 4})) return "wrong output shape";
  for (int64_t i = 0; i < out[0].second.size(); ++i) {
    if (out[0].second.data<float>()[i] != 0.25f * 18) return "wrong value at " + std::to_string(i);
  }
  return "";
}

TEST(SessionOptions, ThreadBoundsThemselvesRun) {
  EXPECT_EQ(RunConv(1), "");
  // kMaxThreads: OpenMP starts that many threads for the convolution whatever the cores (on two, slow, not
  // wrong), and keeps them for the rest of the process, so in a child process of its own (re-executed, not forked
  // from this threaded one). A crash fails the exit-code check.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const std::string problem = RunConv(kMaxThreads);
        std::fprintf(stderr, "threads %d: %s\n", kMaxThreads, problem.empty() ? "ok" : problem.c_str());
        std::exit(problem.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "threads 1024: ok");
}

}  // namespace
}  // namespace ferry
