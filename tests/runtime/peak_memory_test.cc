// Peak RSS of session creation and of the first runs, against the memory prediction (issue 8): what creation frees
// leaves the process (weights its kernels packed, the heap pages they leave), and the first run of an input
// signature, which takes its activations from the arena planned before it, peaks near its live bytes.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/buffer_pool.h"
#include "core/isa.h"
#include "core/jit_code_memory.h"
#include "core/peak_rss.h"
#include "ferry/session.h"
#include "testing/model_builder.h"
#include "testing/random_values.h"

namespace ferry {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int64_t kMiB = int64_t{1} << 20;

// A field of /proc/self/status in bytes ("VmRSS", or "RssAnon": the resident set without the pages of files,
// which include the code of this test binary as it first runs it); -1 when it cannot be read.
int64_t StatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  return -1;
}

int64_t RssBytes() { return StatusBytes("VmRSS"); }

// Starts a measurement: hands freed heap pages back and resets the peak; false when /proc cannot do it.
bool StartMeasuring(int64_t* rss) {
  ::malloc_trim(0);
  *rss = RssBytes();
  return *rss > 0 && ResetPeakRss() && PeakRssKb() * 1024 <= *rss + kMiB;
}

// As in any process that has freed a large malloc'd block (a model's import does): glibc's dynamic mmap threshold
// rises to it, so blocks under it come from the heap instead of mappings of their own, and the heap is trimmed from
// its top only past twice that. Tests of what stays resident start from there, whatever ran before them.
void RaiseMallocMmapThreshold() {
  void* large = std::malloc(size_t{8} << 20);
  ASSERT_NE(large, nullptr);
  static_cast<volatile char*>(large)[0] = 1;
  std::free(large);
}

std::unique_ptr<Session> Load(const std::string& bytes, const SessionOptions& o) {
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

// sum_i = ReduceSum(Expand(x, [n_i])): one activation alive at a time, each written whole and 1.5x the size of the
// one before, so no freed block of the buffer pool fits the next request (it takes a class up to a third larger at
// most).
constexpr int kExpands = 6;
int64_t ExpandElements(int i, double first_mib = 1) {
  double mib = first_mib;
  for (int k = 0; k < i; ++k) mib *= 1.5;
  return static_cast<int64_t>(mib * kMiB / 4);
}

std::string GrowingExpands(double first_mib = 1) {
  testing::ModelBuilder b;
  b.Input("x", kF, {1});
  for (int i = 0; i < kExpands; ++i) {
    const std::string n = std::to_string(i);
    b.Int64Initializer("shape" + n, {1}, {ExpandElements(i, first_mib)});
    b.Node("Expand", {"x", "shape" + n}, {"y" + n});
    testing::ModelBuilder::IntAttr(b.Node("ReduceSum", {"y" + n}, {"sum" + n}), "keepdims", 0);
    b.Output("sum" + n, kF, {});
  }
  return b.Bytes();
}

TEST(PeakMemory, FirstRunPeaksNearItsLiveBytesNotTheirSum) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer allocators keep freed memory";
#endif
  SessionOptions o;
  o.threads = 1;
  auto session = Load(GrowingExpands(), o);
  const Tensor x = Tensor::FromVector(DataType::kFloat, {1}, std::vector<float>{1.0f});
  ReleasePooledBuffers();
  int64_t before = 0;
  if (!StartMeasuring(&before)) GTEST_SKIP() << "no VmRSS/VmHWM, or the peak cannot be reset";
  for (int run = 0; run < 3; ++run) {
    auto out = session->Run({{"x", x}});
    ASSERT_EQ(out.size(), static_cast<size_t>(kExpands));
    EXPECT_EQ(out[kExpands - 1].second.data<float>()[0], static_cast<float>(ExpandElements(kExpands - 1)));
  }
  const int64_t peak = PeakRssKb() * 1024 - before;
  ASSERT_EQ(session->arenas().size(), 1u);
  const int64_t arena = session->arenas()[0].arena_bytes;  // the largest activation: none overlap
  EXPECT_EQ(arena, ExpandElements(kExpands - 1) * 4);
  int64_t sum = 0;
  for (int i = 0; i < kExpands; ++i) sum += ExpandElements(i) * 4;
  // Kept in the pool, the first run's blocks would add up to `sum` (20.8 MiB); freed as they die, the runs peak
  // at one activation (7.6 MiB) or the arena that replaces it.
  EXPECT_LT(peak, arena + 2 * kMiB) << "peak RSS of the runs " << peak / kMiB << " MiB, arena " << arena / kMiB
                                    << " MiB, all activations " << sum / kMiB << " MiB";
}

// Activations under kMapMinBytes would come from malloc's heap: the first run takes them from the arena planned
// before it, so what stays resident after it is that arena (kept for the next run), and nothing beside it.
TEST(PeakMemory, FirstRunHandsBackTheHeapPagesItFreed) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer allocators keep freed memory";
#endif
  constexpr double kFirstMiB = 0.09375;  // 96 KiB to 729 KiB: 2 MiB in all
  RaiseMallocMmapThreshold();
  SessionOptions o;
  o.threads = 1;
  auto session = Load(GrowingExpands(kFirstMiB), o);
  const Tensor x = Tensor::FromVector(DataType::kFloat, {1}, std::vector<float>{1.0f});
  ReleasePooledBuffers();
  int64_t before = 0;
  if (!StartMeasuring(&before)) GTEST_SKIP() << "no VmRSS/VmHWM, or the peak cannot be reset";
  // Anonymous pages only: the first run also maps code pages of the binary and its libraries, which VmRSS counts
  // (16 to 432 KiB of them between runs of this test on one machine, while RssAnon grew by 16 KiB each time).
  const int64_t anon_before = StatusBytes("RssAnon");
  if (anon_before < 0) GTEST_SKIP() << "no RssAnon in /proc/self/status";
  auto out = session->Run({{"x", x}});
  const int64_t kept = StatusBytes("RssAnon") - anon_before;
  ASSERT_EQ(session->arenas().size(), 1u);
  const int64_t arena = session->arenas()[0].arena_bytes;
  EXPECT_LT(kept, arena + (256 << 10)) << "anonymous RSS after the first run " << kept / 1024
                                       << " KiB more than before it, arena " << arena / 1024 << " KiB";
}

// Four layers of a small transformer's MatMuls: x[128,256] @ 256x768 @ 768x256 @ 256x1024 @ 1024x256. The
// 768 KiB weights come from malloc's heap; their kernels pack them and the session frees them.
std::string MatMulLayers() {
  testing::ModelBuilder b;
  b.Input("x", kF, {128, 256});
  std::string prev = "x";
  uint32_t seed = 1;
  for (int layer = 0; layer < 4; ++layer) {
    for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{{256, 768}, {768, 256}, {256, 1024}, {1024, 256}}) {
      const std::string w = "w" + std::to_string(seed), y = "h" + std::to_string(seed);
      b.FloatInitializer(w, {k, n}, testing::UniformFloats(static_cast<size_t>(k * n), seed++));
      b.Node("MatMul", {prev, w}, {y});
      prev = y;
    }
  }
  b.Output(prev, kF, {128, 256});
  return b.Bytes();
}

TEST(PeakMemory, CreationKeepsNoFreedWeightsResident) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer allocators keep freed memory";
#endif
  const std::string model = MatMulLayers();
  SessionOptions o;
  o.threads = 1;
  RaiseMallocMmapThreshold();
  ::malloc_trim(0);
  const int64_t before = StatusBytes("RssAnon");
  if (before < 0) GTEST_SKIP() << "no RssAnon in /proc/self/status";
  auto session = Load(model, o);
  const int64_t grown = StatusBytes("RssAnon") - before;
  const MemoryPrediction& p = session->PredictMemory();
  if (p.kernel_bytes == 0) GTEST_SKIP() << "oneDNN keeps the plain weight layout for these MatMuls on this CPU";
  ASSERT_EQ(p.weights_bytes, 0);  // every weight was packed and freed
  const int64_t held = p.kernel_bytes + p.jit_code_bytes;
  // Measured: 2.4 MiB besides (the model, its kernels and primitives, the heap's fragments); without handing the
  // heap's free pages back, the weights under 1 MiB and the protobuf's data stayed resident too: 8.1 MiB besides.
  EXPECT_LT(grown, held + 4 * kMiB) << "anonymous RSS after creation " << grown / 1024 << " KiB, packed weights and JIT code "
                                << held / 1024 << " KiB";
}

// y = MatMul(x, W) with shapes no other test uses, so that oneDNN has no primitive for them yet.
std::string OddMatMul() {
  testing::ModelBuilder b;
  b.Input("x", kF, {37, 203});
  b.FloatInitializer("W", {203, 91}, testing::UniformFloats(203 * 91, 5));
  b.Node("MatMul", {"x", "W"}, {"y"});
  b.Output("y", kF, {37, 91});
  return b.Bytes();
}

// The JIT code the kernels' oneDNN primitives generated counts in the prediction (and in the limit): measured
// while the session was built, it is what the process gained then, so a second session whose layers the primitive
// cache already holds adds none; `ref` kernels generate none.
TEST(PeakMemory, PredictionCountsTheJitCodeBuildingTheKernelsGenerated) {
  if (ResidentJitCodeBytes() < 0) GTEST_SKIP() << "no /proc/self/maps";
  SessionOptions o;
  o.threads = 1;
  auto first = Load(OddMatMul(), o);
  const MemoryPrediction p = first->PredictMemory();
  if (p.jit_code_bytes == 0 && !DetectHostIsa().contains(IsaSet{Isa::kAvx512f})) {
    GTEST_SKIP() << "oneDNN generated no JIT code for this MatMul on this CPU (no AVX-512)";
  }
  EXPECT_GT(p.jit_code_bytes, 0);
  // The session holds its primitives, so the code it generated is still resident. (Not "at most what the process
  // gained around Load": code of earlier tests' primitives can leave meanwhile, and under ASan it did: 4 KiB
  // measured inside, 0 net around.)
  EXPECT_LE(p.jit_code_bytes, ResidentJitCodeBytes());
  EXPECT_EQ(p.total(),
            p.weights_bytes + p.kernel_bytes + p.arena_bytes + p.io_bytes + p.workspace_bytes + p.jit_code_bytes);
  EXPECT_EQ(Load(OddMatMul(), o)->PredictMemory().jit_code_bytes, 0);  // the same primitives, from the cache
  o.backends = {"ref"};
  EXPECT_EQ(Load(OddMatMul(), o)->PredictMemory().jit_code_bytes, 0);
}

}  // namespace
}  // namespace ferry
