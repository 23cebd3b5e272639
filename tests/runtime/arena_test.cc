// The executor's activation arena (runtime/arena.h) and the session's memory prediction and limit: steady-state
// runs take no activation buffers from the allocator, results are bitwise those of per-buffer allocation, a plan
// that a run does not follow falls back instead of sharing memory, and the limit fails session creation.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>

#include "core/buffer_pool.h"
#include "ferry/session.h"
#include "runtime/arena.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

const std::string kModel = std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx";

Tensor RandomInput(uint32_t seed) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(DataType::kFloat, {1, 3, 32, 32}, rng);
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(Arena, SteadyStateRunsAllocateOnlyTheirOutputs) {
  for (const auto& backends : std::vector<std::vector<std::string>>{{"cpu", "ref"}, {"ref"}}) {
    SCOPED_TRACE(backends.front());
    SessionOptions options;
    options.threads = 1;
    options.backends = backends;
    auto session = Session::Create(kModel, options);
    const std::string name = session->inputs()[0].name;
    const Tensor x = RandomInput(1);
    session->Run({{name, x}});  // takes the arena block planned when the session was created
    session->Run({{name, x}});  // reuses it
    const uint64_t before = BufferAllocationCount();
    auto out = session->Run({{name, x}});
    const uint64_t allocations = BufferAllocationCount() - before;
    // The graph output outlives the run, so it is not in the arena; nothing else may allocate.
    EXPECT_LE(allocations, session->outputs().size());
    ASSERT_EQ(session->arenas().size(), 1u);
    const ArenaStats a = session->arenas()[0];
    EXPECT_EQ(a.blocks, 1u);
    EXPECT_GE(a.buffers, 5u);
    EXPECT_GE(a.arena_bytes, a.lower_bound);
    EXPECT_LE(static_cast<double>(a.arena_bytes), 1.2 * static_cast<double>(a.lower_bound));
  }
}

TEST(Arena, ResultsMatchPerBufferAllocationBitwise) {
  SessionOptions with, without;
  with.threads = without.threads = 1;
  without.memory_arena = false;
  auto a = Session::Create(kModel, with);
  auto b = Session::Create(kModel, without);
  const std::string name = a->inputs()[0].name;
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const Tensor x = RandomInput(seed);
    const Tensor got = a->Run({{name, x}}).at(0).second;
    const Tensor want = b->Run({{name, x}}).at(0).second;
    EXPECT_TRUE(SameBits(got, want)) << "run " << seed;
  }
  EXPECT_TRUE(b->arenas().empty());
}

TEST(Arena, OutputsOfEarlierRunsSurviveLaterRuns) {
  auto session = Session::Create(kModel);
  const std::string name = session->inputs()[0].name;
  std::vector<Tensor> kept, copies;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    kept.push_back(session->Run({{name, RandomInput(seed)}}).at(0).second);
    copies.push_back(kept.back().Clone());
  }
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_TRUE(SameBits(kept[i], copies[i])) << "run " << i;
}

// Two buffers planned one after the other share their bytes; when a run keeps the first alive longer than
// predicted, the second must not take the shared slice.
TEST(Arena, ASliceStillHeldBlocksTheSliceSharingItsBytes) {
  const std::vector<runtime::PlannedBuffer> buffers = {{0, 0, 1024, 0, 1, -1}, {2, 0, 1024, 2, 3, -1}};
  auto plan = runtime::PlanArena(buffers);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->slices().size(), 2u);
  EXPECT_EQ(plan->slices()[0].offset, plan->slices()[1].offset);  // disjoint lifetimes share bytes
  EXPECT_EQ(plan->arena_bytes(), 1024);

  {
    runtime::ArenaRun run(plan);
    Tensor a, b;
    run.set_step(0);
    ASSERT_TRUE(run.Allocate(0, DataType::kFloat, {256}, true, &a));
    run.set_step(2);
    // `a` is still held: the slice it shares with step 2's output is not free, so the allocator declines.
    EXPECT_FALSE(run.Allocate(0, DataType::kFloat, {256}, true, &b));
    // Larger than planned, or not planned at all: declined too.
    EXPECT_FALSE(run.Allocate(0, DataType::kFloat, {512}, true, &b));
    run.set_step(5);
    EXPECT_FALSE(run.Allocate(0, DataType::kFloat, {16}, true, &b));
  }
  {
    runtime::ArenaRun run(plan);  // the block went back to the plan: no new arena
    Tensor a, b;
    run.set_step(0);
    ASSERT_TRUE(run.Allocate(0, DataType::kFloat, {256}, false, &a));
    a = Tensor();
    run.set_step(2);
    ASSERT_TRUE(run.Allocate(0, DataType::kFloat, {128}, true, &b));  // smaller fits
    EXPECT_EQ(b.data<float>()[127], 0.0f);
  }
  EXPECT_EQ(plan->blocks_created(), 1u);
}

// An in-place buffer (alias_of) shares its target's bytes; a second request for one (step, output) is declined.
TEST(Arena, AnInPlaceBufferTakesItsTargetsBytesAndEachSliceServesOnce) {
  const std::vector<runtime::PlannedBuffer> buffers = {{0, 0, 256, 0, 1, -1}, {1, 0, 256, 1, 2, 0}};
  auto plan = runtime::PlanArena(buffers);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->slices()[0].offset, plan->slices()[1].offset);
  EXPECT_EQ(plan->arena_bytes(), 256);
  runtime::ArenaRun run(plan);
  Tensor a, b;
  run.set_step(0);
  ASSERT_TRUE(run.Allocate(0, DataType::kFloat, {64}, false, &a));
  EXPECT_FALSE(run.Allocate(0, DataType::kFloat, {64}, false, &b));  // one slice, one tensor
  EXPECT_EQ(runtime::PlanArena({}), nullptr);
}

// The first run of a signature already takes its activations from the planned arena: the kernels were prepared
// before it, so it allocates no more than the runs after it.
TEST(Arena, TheFirstRunAllocatesOnlyItsOutputs) {
  for (const auto& backends : std::vector<std::vector<std::string>>{{"cpu", "ref"}, {"ref"}}) {
    SCOPED_TRACE(backends.front());
    SessionOptions options;
    options.threads = 1;
    options.backends = backends;
    auto session = Session::Create(kModel, options);
    const std::string name = session->inputs()[0].name;
    const Tensor x = RandomInput(1);
    const uint64_t before = BufferAllocationCount();
    auto out = session->Run({{name, x}});
    const uint64_t first = BufferAllocationCount() - before;
    const uint64_t before_second = BufferAllocationCount();
    auto again = session->Run({{name, x}});
    const uint64_t second = BufferAllocationCount() - before_second;
    // One arena block (the first run's) and the graph outputs, which outlive the run.
    EXPECT_LE(first, session->outputs().size() + 1);
    EXPECT_LE(second, session->outputs().size());
    EXPECT_TRUE(SameBits(out.at(0).second, again.at(0).second));
  }
}

TEST(MemoryPrediction, CountsWeightsArenaAndIo) {
  SessionOptions options;
  options.backends = {"ref"};
  auto session = Session::Create(kModel, options);
  const MemoryPrediction& p = session->PredictMemory();
  EXPECT_GT(p.weights_bytes, 0);
  EXPECT_EQ(p.kernel_bytes, 0);  // ref packs nothing
  EXPECT_GT(p.arena_bytes, 0);
  EXPECT_GE(p.arena_bytes, p.lower_bound);
  EXPECT_EQ(p.io_bytes, (3 * 32 * 32 + static_cast<int64_t>(session->outputs()[0].dims.back())) * 4);
  EXPECT_TRUE(p.unknown.empty());
}

TEST(MemoryPrediction, InputShapesFixSymbolicDims) {
  // x: float[N,64], three chained Relus; without fixed shapes the symbolic N leaves sizes unknown.
  testing::ModelBuilder b;
  constexpr int32_t kF = onnx::TensorProto::FLOAT;
  b.InputSym("x", kF, {-1, 64}, "N");
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Relu", {"a"}, {"c"});
  b.Node("Relu", {"c"}, {"y"});
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  const std::string bytes = b.Bytes();
  const std::span<const uint8_t> model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  SessionOptions options;
  options.backends = {"ref"};
  EXPECT_FALSE(Session::CreateFromBytes(model, options)->PredictMemory().unknown.empty());
  options.input_shapes["x"] = {8, 64};
  auto fixed = Session::CreateFromBytes(model, options);
  const MemoryPrediction& p = fixed->PredictMemory();
  EXPECT_TRUE(p.unknown.empty()) << p.unknown.front();
  EXPECT_EQ(p.arena_bytes, 2 * 8 * 64 * 4);  // a and c; y is an output
  EXPECT_EQ(p.lower_bound, 2 * 8 * 64 * 4);
  EXPECT_EQ(p.io_bytes, 2 * 8 * 64 * 4);
  EXPECT_THROW(fixed->Run({{"x", Tensor(DataType::kFloat, {4, 64})}}), InvalidArgumentError);
}

TEST(MemoryPrediction, LimitFailsSessionCreationNamingTheParts) {
  SessionOptions options;
  options.memory_limit = 1024;
  try {
    Session::Create(kModel, options);
    FAIL() << "a 1 KiB limit was accepted";
  } catch (const ResourceExhaustedError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("exceeds the memory limit of 1.0 KiB"), std::string::npos) << what;
    EXPECT_NE(what.find("activation arena"), std::string::npos) << what;
    EXPECT_NE(what.find("quickstart_cnn.onnx"), std::string::npos) << what;
  }
  options.memory_limit = int64_t{1} << 30;
  EXPECT_NO_THROW(Session::Create(kModel, options));
}

}  // namespace
}  // namespace ferry
