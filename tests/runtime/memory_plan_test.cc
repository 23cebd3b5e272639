// The memory planner (PlanMemory: greedy by size, best fit) on hand-made lifetimes with known answers, invalid
// input, random lifetimes (validity, bounds, determinism); and EstimateGraphMemory on small IR graphs and, when
// the test models are there, on ResNet-50 and a BERT encoder.
#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>

#include "core/human_format.h"
#include "ferry/error.h"
#include "ir/onnx_import.h"
#include "runtime/fix_input_shapes.h"
#include "runtime/memory_estimate.h"
#include "runtime/type_inference.h"

namespace ferry::runtime {
namespace {

constexpr int64_t kU = 64;  // one alignment unit

MemoryPlan Plan(const std::vector<BufferRequest>& requests, int64_t alignment = 64) {
  MemoryPlan plan = PlanMemory(requests, alignment);
  std::string why;
  EXPECT_TRUE(PlanIsValid(requests, plan, &why)) << why;
  EXPECT_GE(plan.arena_bytes, plan.lower_bound);
  return plan;
}

std::string InvalidMessage(const std::vector<BufferRequest>& requests, int64_t alignment = 64) {
  try {
    PlanMemory(requests, alignment);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "(no InvalidArgumentError)";
}

TEST(MemoryPlan, EmptyInputIsAnEmptyArena) {
  const MemoryPlan plan = Plan({});
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.arena_bytes, 0);
  EXPECT_EQ(plan.lower_bound, 0);
  EXPECT_EQ(plan.alignment, 64);
}

TEST(MemoryPlan, ChainOfEqualSizesNeedsTwoSlots) {
  // a -> b -> c: each buffer is read by the step that defines the next.
  const MemoryPlan plan = Plan({{100, 0, 1}, {100, 1, 2}, {100, 2, 3}});
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 2 * kU, 0}));
  EXPECT_EQ(plan.arena_bytes, 4 * kU);
  EXPECT_EQ(plan.lower_bound, 4 * kU);
}

TEST(MemoryPlan, DiamondReachesTheLowerBound) {
  // x = A(); y = B(x); z = C(x); w = D(y, z).
  const MemoryPlan plan = Plan({{kU, 0, 2}, {kU, 1, 3}, {kU, 2, 3}, {kU, 3, 3}});
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, kU, 2 * kU, 0}));
  EXPECT_EQ(plan.arena_bytes, 3 * kU);
  EXPECT_EQ(plan.lower_bound, 3 * kU);
}

TEST(MemoryPlan, LargestFirstAvoidsTheFragmentationOfInOrderPlacement) {
  // Placed in definition order (a@0, b@1, then c finds only a's one free unit), this needs 4 units; largest
  // first puts c at 0, a under it (disjoint lifetimes) and b above: 3 units, the lower bound.
  const std::vector<BufferRequest> requests = {{kU, 0, 1}, {kU, 1, 3}, {2 * kU, 2, 3}};
  const MemoryPlan plan = Plan(requests);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 2 * kU, 0}));
  EXPECT_EQ(plan.arena_bytes, 3 * kU);
  EXPECT_EQ(plan.lower_bound, 3 * kU);
}

TEST(MemoryPlan, BestFitPicksTheTightestGap) {
  // At step 1, x (1u) finds w's 3u hole at 0 and g's 1u hole at 5u free: it takes the tight one.
  const std::vector<BufferRequest> requests = {
      {3 * kU, 0, 0},  // w @0
      {2 * kU, 0, 1},  // m1 @3u
      {kU, 0, 0},      // g @5u
      {kU, 0, 1},      // m2 @6u
      {kU, 1, 1},      // x: next to m1 and m2 only
  };
  const MemoryPlan plan = Plan(requests);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 3 * kU, 5 * kU, 6 * kU, 5 * kU}));
  EXPECT_EQ(plan.arena_bytes, 7 * kU);
  EXPECT_EQ(plan.lower_bound, 7 * kU);
}

TEST(MemoryPlan, WhereTheOptimumExceedsTheLowerBound) {
  // Every step holds exactly 4 units, yet no placement fits in 4: b (2u, beside a at step 0) is at an edge at
  // step 1, so c and e share the other half; g (2u, beside h at step 4) is at an edge at step 3, so e and f
  // are adjacent on one half; at step 2 (c, d, e, f) f would then need c's unit. The optimum is 5 units.
  const std::vector<BufferRequest> requests = {
      {2 * kU, 0, 0},  // a
      {2 * kU, 0, 1},  // b
      {kU, 1, 2},      // c
      {kU, 2, 2},      // d
      {kU, 1, 3},      // e
      {kU, 2, 3},      // f
      {2 * kU, 3, 4},  // g
      {2 * kU, 4, 4},  // h
  };
  const MemoryPlan plan = Plan(requests);
  EXPECT_EQ(plan.lower_bound, 4 * kU);
  // Greedy by size: a@0 b@2u g@0 h@2u, then c@0 e@4u d@1u f@2u: 5 units, the optimum here.
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 2 * kU, 0, kU, 4 * kU, 2 * kU, 0, 2 * kU}));
  EXPECT_EQ(plan.arena_bytes, 5 * kU);
}

TEST(MemoryPlan, AliasChainsShareOneOffset) {
  // 0 -> 1 -> 2 in place (each takes over the previous at its first step); 3 lives alongside the whole chain.
  const std::vector<BufferRequest> requests = {
      {4 * kU, 0, 1}, {3 * kU, 1, 2, 0}, {3 * kU, 2, 5, 1}, {kU, 0, 5}, {4 * kU, 6, 7}};
  const MemoryPlan plan = Plan(requests);
  EXPECT_EQ(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.offsets[1], plan.offsets[2]);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 0, 0, 4 * kU, 0}));
  EXPECT_EQ(plan.arena_bytes, 5 * kU);
  // The chain counts once where its members hand over (steps 1 and 2): 4u + 1u.
  EXPECT_EQ(plan.lower_bound, 5 * kU);
}

TEST(MemoryPlan, SizesAreRoundedUpToTheAlignment) {
  MemoryPlan plan = Plan({{1, 0, 0}, {65, 0, 0}, {64, 0, 0}});
  // Largest first: 65 (-> 128) at 0, then 64 at 128, then 1 at 192.
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{192, 0, 128}));
  EXPECT_EQ(plan.arena_bytes, 256);
  EXPECT_EQ(plan.lower_bound, 256);

  plan = Plan({{1, 0, 0}, {65, 0, 0}, {64, 0, 0}}, 256);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{512, 0, 256}));
  EXPECT_EQ(plan.arena_bytes, 768);
  plan = Plan({{3, 0, 0}, {5, 0, 0}}, 1);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(plan.arena_bytes, 8);
}

TEST(MemoryPlan, ZeroByteBuffersOccupyNothing) {
  const std::vector<BufferRequest> requests = {{0, 0, 5}, {kU, 0, 5}, {0, 1, 1}, {kU, 2, 3}, {0, 3, 4, 3}};
  const MemoryPlan plan = Plan(requests);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 0, 0, kU, 0}));
  EXPECT_EQ(plan.arena_bytes, 2 * kU);
  EXPECT_EQ(plan.lower_bound, 2 * kU);
}

TEST(MemoryPlan, InvalidInputThrowsNamingTheRequest) {
  EXPECT_NE(InvalidMessage({{kU, 0, 1}, {-1, 0, 1}}).find("request 1: negative size -1"), std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 3, 2}}).find("request 0: first_step 3 is after last_step 2"), std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 0, 1}, {kU, 1, 2, 5}}).find("request 1: alias_of 5 is out of range"),
            std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 0, 1, -2}}).find("request 0: alias_of -2 is out of range"), std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 1, 1, 0}}).find("request 0: alias_of names the request itself"),
            std::string::npos);
  // Target outlives the first step of the buffer taking it over.
  EXPECT_NE(InvalidMessage({{kU, 0, 2}, {kU, 1, 3, 0}}).find("request 1: alias_of 0 lives [0, 2]"),
            std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 0, 1}, {2 * kU, 1, 3, 0}}).find("request 1: alias_of 0 has 64 bytes, fewer"),
            std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 0, 1}, {kU, 1, 3, 0}, {kU, 1, 2, 0}})
                .find("request 2: alias_of 0 is already taken over by request 1"),
            std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 1, 1, 1}, {kU, 1, 1, 0}}).find("request 0: alias_of 1 leads into an alias cycle"),
            std::string::npos);
  EXPECT_NE(InvalidMessage({{kU, 0, 1}}, 0).find("alignment must be positive"), std::string::npos);
  EXPECT_NE(InvalidMessage({{INT64_MAX - 3, 0, 1}}).find("request 0: size"), std::string::npos);
  EXPECT_NE(InvalidMessage({{INT64_MAX / 2, 0, 1}, {INT64_MAX / 2, 0, 1}, {INT64_MAX / 2, 0, 1}}).find("overflows"),
            std::string::npos);
}

TEST(MemoryPlan, PlanIsValidFindsOverlapsAndMisalignment) {
  const std::vector<BufferRequest> requests = {{kU, 0, 1}, {kU, 1, 2}, {kU, 2, 3}};
  MemoryPlan plan = Plan(requests);
  std::string why;
  MemoryPlan bad = plan;
  bad.offsets = {0, 0, kU};
  EXPECT_FALSE(PlanIsValid(requests, bad, &why));
  EXPECT_NE(why.find("requests 0 and 1 are live together"), std::string::npos) << why;
  bad.offsets = {0, 32, 0};
  EXPECT_FALSE(PlanIsValid(requests, bad, &why));
  EXPECT_NE(why.find("request 1: offset 32"), std::string::npos) << why;
  bad = plan;
  bad.arena_bytes = kU;
  EXPECT_FALSE(PlanIsValid(requests, bad, &why));
  EXPECT_NE(why.find("past the arena"), std::string::npos) << why;
  bad = plan;
  bad.offsets.pop_back();
  EXPECT_FALSE(PlanIsValid(requests, bad, &why));
}

// `n` random lifetimes over `steps` steps, sizes up to 1 MiB (some zero), about 10% in place of an earlier
// buffer that dies where they start.
std::vector<BufferRequest> RandomRequests(uint32_t seed, int n, int steps) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> step(0, steps - 1), length(0, 20), pct(0, 99);
  std::uniform_int_distribution<int64_t> size(1, int64_t{1} << 20);
  std::vector<BufferRequest> r(static_cast<size_t>(n));
  for (auto& q : r) {
    q.first_step = step(rng);
    q.last_step = std::min(steps - 1, q.first_step + (pct(rng) < 10 ? 5 * length(rng) : length(rng)));
    q.bytes = pct(rng) < 5 ? 0 : size(rng);
  }
  std::vector<char> taken(r.size(), 0);
  for (size_t i = 0; i < r.size(); ++i) {
    if (pct(rng) >= 10) continue;
    for (size_t j = 0; j < r.size(); ++j) {
      if (!taken[j] && r[j].last_step == r[i].first_step && r[j].first_step < r[i].first_step) {
        r[i].alias_of = static_cast<int>(j);
        taken[j] = 1;
        break;
      }
    }
  }
  // No larger than what it takes over: by first step, so each target is final before its successor.
  std::vector<size_t> by_first(r.size());
  for (size_t i = 0; i < r.size(); ++i) by_first[i] = i;
  std::stable_sort(by_first.begin(), by_first.end(),
                   [&](size_t a, size_t b) { return r[a].first_step < r[b].first_step; });
  for (size_t i : by_first) {
    if (r[i].alias_of >= 0) r[i].bytes = std::min(r[i].bytes, r[static_cast<size_t>(r[i].alias_of)].bytes);
  }
  return r;
}

TEST(MemoryPlan, RandomLifetimesGiveValidPlansWithinBounds) {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const auto requests = RandomRequests(seed, 1000, 300);
    const MemoryPlan plan = Plan(requests);
    int64_t sum = 0;
    for (const auto& r : requests) sum += (r.bytes + 63) / 64 * 64;
    EXPECT_LE(plan.arena_bytes, sum) << "seed " << seed;
    EXPECT_GT(plan.lower_bound, 0) << "seed " << seed;
    std::cout << "seed " << seed << ": arena / lower bound = "
              << static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.lower_bound) << "\n";
    // Deterministic: the same input gives the same plan.
    EXPECT_EQ(PlanMemory(requests).offsets, plan.offsets) << "seed " << seed;
  }
}

TEST(MemoryPlan, TenThousandBuffers) {
  const auto requests = RandomRequests(7, 10000, 3000);
  const MemoryPlan plan = Plan(requests);
  EXPECT_GT(plan.arena_bytes, 0);
}

// --- EstimateGraphMemory ---

ir::Value* TensorValue(ir::Graph& g, const std::string& name, DataType t, std::vector<ir::Dim> dims) {
  return g.AddValue(name, ir::TypeInfo::Tensor(t, std::move(dims)));
}

std::vector<ir::Dim> Dims(std::initializer_list<int64_t> d) {
  std::vector<ir::Dim> out;
  for (int64_t v : d) out.push_back(v < 0 ? ir::Dim::Symbolic("N") : ir::Dim::Static(v));
  return out;
}

// x: float[rows,16] (input), w: float[16] (initializer); a = Mul(x, w); b = Relu(a); s = Shape(b) (never read);
// c = Add(a, b); y = Sigmoid(c) (output). With rows = -1 the activations are float[N,16].
std::unique_ptr<ir::Graph> SmallGraph(int64_t rows) {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = TensorValue(*g, "x", DataType::kFloat, Dims({rows, 16}));
  g->mutable_inputs().push_back(x);
  ir::Value* w = g->AddInitializer("w", std::make_shared<const Tensor>(DataType::kFloat, Shape{16}));
  ir::Value* a = TensorValue(*g, "a", DataType::kFloat, Dims({rows, 16}));
  ir::Value* b = TensorValue(*g, "b", DataType::kFloat, Dims({rows, 16}));
  ir::Value* s = TensorValue(*g, "s", DataType::kInt64, Dims({2}));
  ir::Value* c = TensorValue(*g, "c", DataType::kFloat, Dims({rows, 16}));
  ir::Value* y = TensorValue(*g, "y", DataType::kFloat, Dims({rows, 16}));
  g->AddNode("mul", "Mul", "", {x, w}, {a});
  g->AddNode("relu", "Relu", "", {a}, {b});
  g->AddNode("shape", "Shape", "", {b}, {s});
  g->AddNode("add", "Add", "", {a, b}, {c});
  g->AddNode("sigmoid", "Sigmoid", "", {c}, {y});
  g->mutable_outputs().push_back(y);
  return g;
}

TEST(MemoryEstimate, SmallGraphWithStaticShapes) {
  // Requests: a [0,3] 256 B, b [1,3] 256 B, s [2,2] 16 B (-> 64), c [3,4] 256 B. Step 3 holds a, b, c.
  const GraphMemoryEstimate est = EstimateGraphMemory(*SmallGraph(4));
  EXPECT_EQ(est.weights_bytes, 64);
  EXPECT_EQ(est.io_bytes, 256 + 256);
  EXPECT_EQ(est.lower_bound, 3 * 256);
  EXPECT_EQ(est.arena_bytes, 3 * 256);  // a@0, b@256, c@512, s@512 (c is not live yet at step 2)
  EXPECT_TRUE(est.unknown.empty());
}

TEST(MemoryEstimate, SymbolicDimsAreListedAsUnknown) {
  const GraphMemoryEstimate est = EstimateGraphMemory(*SmallGraph(-1));
  EXPECT_EQ(est.weights_bytes, 64);
  EXPECT_EQ(est.io_bytes, 0);
  EXPECT_EQ(est.arena_bytes, 64);  // only s (int64[2]) is known
  EXPECT_EQ(est.lower_bound, 64);
  ASSERT_EQ(est.unknown.size(), 5u);  // x, y, a, b, c
  EXPECT_EQ(est.unknown[0], "'x': shape float32[N,16] is not static");
  EXPECT_EQ(est.unknown[2], "'a': shape float32[N,16] is not static");
}

TEST(MemoryEstimate, ReadsInsideSubgraphsKeepOuterValuesAlive) {
  // a = Relu(x) at step 0; b = Relu(a) at step 1; y = If(cond){then: t = Identity(a)} {else: e = Identity(b)}
  // at step 2: the then-branch reads a, so a lives [0, 2] beside b [1, 2].
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = TensorValue(*g, "x", DataType::kFloat, Dims({16}));
  ir::Value* cond = TensorValue(*g, "cond", DataType::kBool, Dims({}));
  g->mutable_inputs() = {x, cond};
  ir::Value* a = TensorValue(*g, "a", DataType::kFloat, Dims({16}));
  ir::Value* b = TensorValue(*g, "b", DataType::kFloat, Dims({32}));
  ir::Value* y = TensorValue(*g, "y", DataType::kFloat, Dims({16}));
  g->AddNode("r0", "Relu", "", {x}, {a});
  g->AddNode("r1", "Relu", "", {a}, {b});
  std::vector<ir::Attribute> attrs;
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto sub = std::make_shared<ir::Graph>(g.get());
    ir::Value* out = TensorValue(*sub, std::string(branch) + "_out", DataType::kFloat, Dims({16}));
    sub->AddNode(std::string(branch) + "_id", "Identity", "", {std::string(branch) == "then_branch" ? a : b}, {out});
    sub->mutable_outputs().push_back(out);
    ir::Attribute attr;
    attr.name = branch;
    attr.type = ir::AttrType::kGraph;
    attr.g = sub;
    attrs.push_back(attr);
  }
  g->AddNode("if", "If", "", {cond}, {y}, attrs);
  g->mutable_outputs().push_back(y);
  const GraphMemoryEstimate est = EstimateGraphMemory(*g);
  EXPECT_EQ(est.lower_bound, 64 + 128);  // a and b together at steps 1 and 2
  EXPECT_EQ(est.arena_bytes, 64 + 128);
  EXPECT_EQ(est.io_bytes, 64 + 1 + 64);
  ASSERT_EQ(est.unknown.size(), 1u);
  EXPECT_NE(est.unknown[0].find("values inside its subgraphs are not counted"), std::string::npos);
}

TEST(MemoryEstimate, StaticValueBytes) {
  std::string why;
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo::Tensor(DataType::kInt4, Dims({3})), &why), 2);  // 12 bits
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo::Tensor(DataType::kFloat16, Dims({2, 3})), &why), 12);
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo::Tensor(DataType::kFloat, Dims({})), &why), 4);
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo::Tensor(DataType::kFloat, Dims({0, 7})), &why), 0);
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo::Tensor(DataType::kFloat), &why), -1);
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo::Tensor(DataType::kString, Dims({2})), &why), -1);
  EXPECT_EQ(why, "string tensors have no fixed size");
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo{}, &why), -1);
  EXPECT_EQ(why, "type is unknown");
  EXPECT_EQ(StaticValueBytes(ir::TypeInfo::Tensor(DataType::kFloat, Dims({1 << 30, 1 << 30, 1 << 30})), &why), -1);
  EXPECT_NE(why.find("too large"), std::string::npos);
}

// The estimate of a test model with its input fixed to `shape`, weights not loaded (as `ferry check` imports).
GraphMemoryEstimate EstimateModel(const std::string& path, const std::vector<int64_t>& shape) {
  ir::ImportOptions options;
  options.load_initializer_data = false;
  auto model = ir::ImportModelFromFile(path, options);
  FixInputShapes(*model, {{model->graph->RequiredInputs().at(0)->name(), shape}});
  InferTypes(*model);
  const GraphMemoryEstimate est = EstimateGraphMemory(*model->graph);
  const double ratio = static_cast<double>(est.arena_bytes) / static_cast<double>(est.lower_bound);
  std::cout << path << ": arena " << HumanBytes(est.arena_bytes) << " (" << est.arena_bytes << " B), lower bound "
            << HumanBytes(est.lower_bound) << " (" << est.lower_bound << " B), ratio " << ratio << "; weights "
            << HumanBytes(est.weights_bytes) << ", io " << HumanBytes(est.io_bytes) << ", " << est.unknown.size()
            << " unknown\n";
  for (size_t i = 0; i < est.unknown.size() && i < 5; ++i) std::cout << "  unknown: " << est.unknown[i] << "\n";
  return est;
}

TEST(MemoryEstimate, ResNet50Batch1IsNearTheLowerBound) {
  const std::string path = std::string(FERRY_BUILD_DIR) + "/test-models/resnet50/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  const GraphMemoryEstimate est = EstimateModel(path, {1, 3, 224, 224});
  EXPECT_TRUE(est.unknown.empty());
  EXPECT_GT(est.weights_bytes, 90 << 20);  // 25.6M float parameters
  EXPECT_EQ(est.io_bytes, 3 * 224 * 224 * 4 + 1000 * 4);
  ASSERT_GT(est.lower_bound, 0);
  EXPECT_LE(static_cast<double>(est.arena_bytes), 1.2 * static_cast<double>(est.lower_bound));
}

TEST(MemoryEstimate, BertEncoderFigures) {
  const std::string path = std::string(FERRY_BUILD_DIR) + "/test-models/bert_encoder/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  const GraphMemoryEstimate est = EstimateModel(path, {1, 128, 384});
  ASSERT_GT(est.lower_bound, 0);
  EXPECT_GE(est.arena_bytes, est.lower_bound);
}

}  // namespace
}  // namespace ferry::runtime
