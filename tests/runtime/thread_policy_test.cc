// The adaptive thread policy (runtime/thread_policy.h): the decision, the measurement, serial runs, and sessions
// that use it.
#include "runtime/thread_policy.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/model_builder.h"

namespace ferry::runtime {
namespace {

int TeamSize(int threads) {
  int n = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp master
    n = omp_get_num_threads();
  }
  return n;
}

TEST(ThreadDecider, StaysParallelWhileRunsAreNotContended) {
  ThreadDecider d;
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(d.Next().parallel);
    d.Observe(false);
  }
  EXPECT_FALSE(d.serial());
}

TEST(ThreadDecider, OneContendedRunIsNoise) {
  ThreadDecider d;
  d.Observe(true);
  EXPECT_FALSE(d.serial());
  d.Observe(false);
  d.Observe(true);
  EXPECT_FALSE(d.serial()) << "strikes must be in a row";
  EXPECT_TRUE(d.Next().parallel);
}

TEST(ThreadDecider, ContendedRunsInARowMakeRunsSerialUntilAProbe) {
  ThreadDecider d;
  for (int i = 0; i < ThreadDecider::kStrikes; ++i) d.Observe(true);
  EXPECT_TRUE(d.serial());
  for (int i = 0; i < ThreadDecider::kFirstProbe; ++i) EXPECT_FALSE(d.Next().parallel) << "run " << i;
  const ThreadDecider::Choice probe = d.Next();
  EXPECT_TRUE(probe.parallel);
  EXPECT_TRUE(probe.probe);
  // Concurrent runs while the probe is out stay serial.
  EXPECT_FALSE(d.Next().parallel);
}

TEST(ThreadDecider, ProbesBackOffWhileTheHostStaysBusyAndResetWhenItIsFree) {
  ThreadDecider d;
  for (int i = 0; i < ThreadDecider::kStrikes; ++i) d.Observe(true);
  int interval = ThreadDecider::kFirstProbe;
  for (int round = 0; round < 8; ++round) {
    int serial_runs = 0;
    ThreadDecider::Choice c;
    while (!(c = d.Next()).parallel) ++serial_runs;
    EXPECT_TRUE(c.probe);
    EXPECT_EQ(serial_runs, interval) << "round " << round;
    d.Observe(true);
    interval = std::min(interval * 2, ThreadDecider::kMaxProbe);
  }
  EXPECT_EQ(d.probe_interval(), ThreadDecider::kMaxProbe);
  while (!d.Next().parallel) {
  }
  d.Observe(false);
  EXPECT_FALSE(d.serial());
  EXPECT_EQ(d.probe_interval(), ThreadDecider::kFirstProbe);
  EXPECT_TRUE(d.Next().parallel);
}

TEST(ThreadPolicyContended, NeedsAShareOfTheRunAndAnAbsoluteWait) {
  EXPECT_FALSE(Contended(100'000'000, 0));
  EXPECT_FALSE(Contended(100'000'000, 5'000'000));   // 5% of the run
  EXPECT_TRUE(Contended(100'000'000, 20'000'000));   // 20%
  EXPECT_FALSE(Contended(500'000, 150'000));         // 30% of a short run, but under kMinWaitNs
  EXPECT_TRUE(Contended(1'000'000, 300'000));
}

TEST(ThreadPolicyMeasure, ReadsEveryTeamMembersWaitAndItOnlyGrows) {
  std::vector<int64_t> before, after;
  if (!ReadTeamCpuWaits(2, &before)) GTEST_SKIP() << "no /proc/self/task/TID/schedstat here";
  ASSERT_EQ(before.size(), 2u);
  TeamSize(2);
  ASSERT_TRUE(ReadTeamCpuWaits(2, &after));
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_GE(after[i], before[i]) << "member " << i;
  // A wide team: 16 members, spread over it, are read.
  std::vector<int64_t> wide;
  ASSERT_TRUE(ReadTeamCpuWaits(40, &wide));
  EXPECT_EQ(wide.size(), 16u);
}

TEST(ThreadPolicyRun, SerialRunsHaveTeamsOfOneAndRestoreOpenMpAfter) {
  ThreadPolicy policy(2);
  const int levels = omp_get_max_active_levels();
  {
    ThreadPolicy::Run run(&policy);
    EXPECT_EQ(run.threads_used(), 2);
    EXPECT_EQ(TeamSize(2), 2);
  }
  for (int i = 0; i < ThreadDecider::kStrikes; ++i) policy.Observe(true);
  EXPECT_TRUE(policy.serial());
  {
    ThreadPolicy::Run run(&policy);
    EXPECT_EQ(run.threads_used(), 1);
    EXPECT_EQ(TeamSize(2), 1);
    run.Finish();
    EXPECT_LT(run.cpu_wait_ms(), 0) << "a serial run is not measured";
  }
  EXPECT_EQ(omp_get_max_active_levels(), levels);
  EXPECT_EQ(TeamSize(2), 2);
}

// A run far slower than the typical run of its signature runs its remaining steps on the calling thread and
// counts as contended; runs of another signature are not held to that time.
TEST(ThreadPolicyRun, ARunFarSlowerThanItsSignaturesTypicalRunsTheRestSerially) {
  ThreadPolicy policy(2);
  const int signature = 0, other = 0;
  const auto sleep_ms = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  for (int i = 0; i < 3; ++i) {
    ThreadPolicy::Run run(&policy, &signature);
    sleep_ms(2);
    run.AfterStep();
    run.Finish();
  }
  // The first of those was measured; on a busy test machine its idle team may have waited for a CPU: start clean.
  policy.Observe(false);
  for (int strike = 1; strike <= ThreadDecider::kStrikes; ++strike) {
    ThreadPolicy::Run slow(&policy, &signature);
    slow.AfterStep();
    EXPECT_EQ(TeamSize(2), 2);
    sleep_ms(30);
    slow.AfterStep();
    EXPECT_EQ(TeamSize(2), 1) << "strike " << strike;
    EXPECT_EQ(slow.threads_used(), 1);
    slow.Finish();
    EXPECT_EQ(policy.serial(), strike == ThreadDecider::kStrikes);
  }
  ThreadPolicy fresh(2);
  {
    ThreadPolicy::Run run(&fresh, &signature);
    sleep_ms(2);
    run.Finish();
  }
  ThreadPolicy::Run unlike(&fresh, &other);
  sleep_ms(30);
  unlike.AfterStep();
  EXPECT_EQ(TeamSize(2), 2) << "no typical time for this signature yet";
}

TEST(ThreadPolicyRun, AFixedCountDoesNothing) {
  ThreadPolicy::Run run(nullptr);
  EXPECT_EQ(TeamSize(2), 2);
  run.Finish();
  EXPECT_LT(run.cpu_wait_ms(), 0);
}

// Kernels whose library plans its split by the thread count it sees when it runs (oneDNN's GEMM behind MatMul,
// LayerNormalization): a serial run must tell them it has one thread, or they do half the work.
std::string LibraryKernelsModel() {
  constexpr int64_t kRows = 64, kK = 512, kN = 384;
  testing::ModelBuilder b;
  b.Input("x", onnx::TensorProto::FLOAT, {kRows, kK});
  b.Input("x3", onnx::TensorProto::FLOAT, {4, kRows, kK});
  b.Output("product", onnx::TensorProto::FLOAT, {kRows, kN});
  b.Output("batched", onnx::TensorProto::FLOAT, {4, kRows, kN});
  b.Output("softmax", onnx::TensorProto::FLOAT, {kRows, kN});
  b.Output("layer_norm", onnx::TensorProto::FLOAT, {kRows, kK});
  std::vector<float> w(static_cast<size_t>(kK * kN)), scale(kK, 1.5f), bias(kK, 0.25f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 7919 % 201) - 100) / 1024.0f;
  b.FloatInitializer("w", {kK, kN}, w).FloatInitializer("scale", {kK}, scale).FloatInitializer("bias", {kK}, bias);
  b.Node("MatMul", {"x", "w"}, {"product"});
  b.Node("MatMul", {"x3", "w"}, {"batched"});
  b.Node("Softmax", {"product"}, {"softmax"});
  b.Node("LayerNormalization", {"x", "scale", "bias"}, {"layer_norm"});
  return testing::WriteTempFile(b.Bytes(), "thread_policy_library_kernels.onnx");
}

// ONNX Attention (opset 23): its kernel splits the heads' rows into tasks for the thread count it prepared for,
// and each task's dnnl_sgemm runs with the thread count it is told.
std::string AttentionModel() {
  testing::ModelBuilder b(23, 10);
  for (const char* name : {"q", "k", "v"}) b.Input(name, onnx::TensorProto::FLOAT, {2, 4, 96, 32});
  b.Output("y", onnx::TensorProto::FLOAT, {2, 4, 96, 32});
  b.Node("Attention", {"q", "k", "v"}, {"y"});
  return testing::WriteTempFile(b.Bytes(), "thread_policy_attention.onnx");
}

Tensor Random(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t(DataType::kFloat, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Runs `model` with `feed` on a session with the adaptive policy while more threads than CPUs spin, until some
// runs went serial; every output must match a fixed-count session's.
void ExpectSerialRunsMatch(const std::string& model, const std::vector<NamedValue>& feed) {
  SessionOptions adaptive;
  adaptive.threads = 2;
  adaptive.adapt_threads = SessionOptions::ThreadAdaptation::kOn;
  SessionOptions fixed;
  fixed.threads = 2;
  auto a = Session::Create(model, adaptive);
  auto f = Session::Create(model, fixed);
  const std::vector<NamedValue> want = f->RunValues(feed);

  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  const int n = 2 * static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (int i = 0; i < n; ++i) {
    hogs.emplace_back([&] {
      volatile uint64_t k = 0;
      while (!stop.load(std::memory_order_relaxed)) k = k + 1;
    });
  }
  int serial_runs = 0;
  std::vector<std::string> wrong;
  for (int r = 0; r < 60 && serial_runs < 4; ++r) {
    RunStats stats;
    const std::vector<NamedValue> got = a->RunValues(feed, &stats);
    if (stats.threads_used == 1) ++serial_runs;
    for (size_t k = 0; k < want.size(); ++k) {
      const Tensor& g = got[k].second.tensor();
      const Tensor& e = want[k].second.tensor();
      double worst = 0;
      for (int64_t i = 0; i < e.size(); ++i) {
        worst = std::max(worst, static_cast<double>(std::fabs(g.data<float>()[i] - e.data<float>()[i])));
      }
      if (worst > 1e-3) {
        wrong.push_back("run " + std::to_string(r) + " (" + std::to_string(stats.threads_used) + " threads): " +
                        want[k].first + " off by " + std::to_string(worst));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(11));
  }
  stop = true;
  for (auto& h : hogs) h.join();
  EXPECT_GT(serial_runs, 0);
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " wrong outputs, first: " << wrong.front();
}

// The policy at work: with more busy threads than CPUs, a session with the default thread count finds its team
// waiting for CPUs and runs on one thread; the outputs stay those of a fixed-count session.
TEST(ThreadPolicySession, ABusyHostMakesRunsSerialWithTheSameOutputs) {
  std::vector<int64_t> probe;
  if (!ReadTeamCpuWaits(2, &probe)) GTEST_SKIP() << "no /proc/self/task/TID/schedstat here";
  ExpectSerialRunsMatch(std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx",
                        {{"input", Value(Random({1, 3, 32, 32}, 3))}});
}

TEST(ThreadPolicySession, SerialRunsOfLibraryKernelsDoAllTheWork) {
  std::vector<int64_t> probe;
  if (!ReadTeamCpuWaits(2, &probe)) GTEST_SKIP() << "no /proc/self/task/TID/schedstat here";
  ExpectSerialRunsMatch(LibraryKernelsModel(),
                        {{"x", Value(Random({64, 512}, 1))}, {"x3", Value(Random({4, 64, 512}, 2))}});
}

TEST(ThreadPolicySession, SerialRunsOfAttentionDoAllTheWork) {
  std::vector<int64_t> probe;
  if (!ReadTeamCpuWaits(2, &probe)) GTEST_SKIP() << "no /proc/self/task/TID/schedstat here";
  ExpectSerialRunsMatch(AttentionModel(), {{"q", Value(Random({2, 4, 96, 32}, 3))},
                                           {"k", Value(Random({2, 4, 96, 32}, 4))},
                                           {"v", Value(Random({2, 4, 96, 32}, 5))}});
}

TEST(ThreadPolicySession, AnExplicitCountIsFixedUnlessAsked) {
  const std::string model = std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx";
  SessionOptions o;
  o.threads = 2;
  auto s = Session::Create(model, o);
  Tensor x(DataType::kFloat, {1, 3, 32, 32});
  std::memset(x.raw_data(), 0, x.nbytes());
  RunStats stats;
  s->RunValues({{s->inputs()[0].name, Value(x)}}, &stats);
  EXPECT_EQ(stats.threads_used, 2);
  EXPECT_LT(stats.cpu_wait_ms, 0) << "a fixed count is not measured";
}

// The one parse --adapt-threads and Python's ferry.adapt_threads share.
TEST(ThreadPolicySession, AdaptationNamesParseAndOthersAreNamedInTheError) {
  using Adaptation = SessionOptions::ThreadAdaptation;
  EXPECT_EQ(SessionOptions::ParseThreadAdaptation("auto"), Adaptation::kAuto);
  EXPECT_EQ(SessionOptions::ParseThreadAdaptation("on"), Adaptation::kOn);
  EXPECT_EQ(SessionOptions::ParseThreadAdaptation("off"), Adaptation::kOff);
  try {
    SessionOptions::ParseThreadAdaptation("sometimes");
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_STREQ(e.what(), "expected auto, on or off, got 'sometimes'");
  }
}

TEST(ThreadPolicySession, AdaptingAndDeterminismExcludeEachOther) {
  SessionOptions o;
  o.threads = 2;
  o.deterministic = true;
  o.adapt_threads = SessionOptions::ThreadAdaptation::kOn;
  try {
    Session::Create(std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx", o);
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("adapt_threads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::runtime
