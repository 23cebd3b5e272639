// Session::Run is safe to call from several threads at once on one session (the server relies on it):
// concurrent results must equal sequential ones bitwise.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "ferry/session.h"

namespace ferry {
namespace {

Tensor RandomInput(uint32_t seed) {
  Tensor t(DataType::kFloat, {1, 3, 32, 32});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

TEST(SessionConcurrency, ConcurrentRunsMatchSequentialBitwise) {
  SessionOptions options;
  options.threads = 1;
  auto session = Session::Create(std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx", options);
  ASSERT_EQ(session->inputs().size(), 1u);
  const std::string name = session->inputs()[0].name;
  constexpr int kInputs = 4, kThreads = 4, kRunsPerThread = 6;
  std::vector<Tensor> inputs, expected;
  for (int i = 0; i < kInputs; ++i) {
    inputs.push_back(RandomInput(static_cast<uint32_t>(i + 1)));
    expected.push_back(session->Run({{name, inputs.back()}}).at(0).second);
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsPerThread; ++r) {
        int which = (t + r) % kInputs;
        Tensor out = session->Run({{name, inputs[which]}}).at(0).second;
        const Tensor& want = expected[which];
        if (out.shape() != want.shape() || std::memcmp(out.raw_data(), want.raw_data(), want.nbytes()) != 0) {
          ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(SessionConcurrency, ErrorsInOneThreadDoNotDisturbOthers) {
  auto session = Session::Create(std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx");
  const std::string name = session->inputs()[0].name;
  Tensor good = RandomInput(9);
  Tensor want = session->Run({{name, good}}).at(0).second;
  std::atomic<int> errors{0}, bad_results{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 5; ++r) {
        if (t % 2) {
          try {
            session->Run({{name, Tensor(DataType::kFloat, {1, 3, 31, 32})}});
          } catch (const Error&) {
            ++errors;
          }
        } else {
          Tensor out = session->Run({{name, good}}).at(0).second;
          if (std::memcmp(out.raw_data(), want.raw_data(), want.nbytes()) != 0) ++bad_results;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 10);
  EXPECT_EQ(bad_results.load(), 0);
}

}  // namespace
}  // namespace ferry
