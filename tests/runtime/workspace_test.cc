// The kernels' workspace in the memory prediction (MemoryPrediction::workspace_bytes, PrepareContext::workspace):
// the scratch buffers kernels keep per thread. Predicted before any run, it must equal what a run then grows the
// buffers to (each test runs on a fresh thread, whose buffers start empty, with one intra-op thread so that every
// buffer lives on that thread); buffers shared by several kernels count once, at the largest request.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "core/parallel.h"
#include "ferry/session.h"
#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/kernel.h"
#include "kernels/ref/gemm.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;
const std::string kQuickstart = std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx";

std::vector<float> Ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i % 17) - 0.08f;
  return v;
}

// A 3x3 convolution W [m, c, 3, 3] (constant), padded by 1, from `x` to `y`.
void AddConv(testing::ModelBuilder& b, const std::string& x, const std::string& y, int64_t c, int64_t m) {
  const std::string w = y + "_w";
  b.FloatInitializer(w, {m, c, 3, 3}, Ramp(m * c * 9));
  auto& node = b.Node("Conv", {x, w}, {y}, y + "_conv");
  auto* pads = node.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
}

// x [1, c0, hw, hw] through 3x3 convolutions to c1, c2, ... channels.
std::string ConvChain(int64_t hw, const std::vector<int64_t>& channels) {
  testing::ModelBuilder b;
  b.Input("x", kF, {1, channels[0], hw, hw});
  std::string prev = "x";
  for (size_t i = 1; i < channels.size(); ++i) {
    const std::string y = i + 1 == channels.size() ? "y" : "h" + std::to_string(i);
    AddConv(b, prev, y, channels[i - 1], channels[i]);
    prev = y;
  }
  b.Output("y", kF, {1, channels.back(), hw, hw});
  return b.Bytes();
}

std::unique_ptr<Session> Load(const std::string& bytes, SessionOptions options) {
  return Session::CreateFromBytes(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), options);
}

SessionOptions OneThread(std::vector<std::string> backends = {"cpu", "ref"}) {
  SessionOptions o;
  o.backends = std::move(backends);
  o.threads = 1;
  return o;
}

// Level 0: the plain Conv kernel reorders NCHW activations to and from its primitive's layout, so every 3x3
// convolution uses the conv src and dst slots, whichever layout the optimizer would have chosen at level 3.
SessionOptions OneThreadLevel0() {
  SessionOptions o = OneThread();
  o.optimization_level = 0;
  return o;
}

// Runs `session` once on a fresh thread with random inputs and returns what that thread's scratch buffers hold
// afterwards: every kept buffer the prediction counts (conv slots, oneDNN scratchpad, ref GEMM panels).
int64_t HeldAfterRunOnFreshThread(const Session& session) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::mt19937 rng(7);
  for (const IoInfo& in : session.inputs()) {
    feeds.emplace_back(in.name, testing::RandomTensor(in.dtype, Shape(in.dims.begin(), in.dims.end()), rng));
  }
  int64_t held = -1;
  std::thread t([&] {
    session.Run(feeds);
    held = cpu::ConvScratchBytesOnThisThread() + cpu::ScratchpadBytesOnThisThread() +
           ref::GemmF32PanelBytesOnThisThread();
  });
  t.join();
  return held;
}

std::map<std::string, int64_t> ByBuffer(const MemoryPrediction& p) {
  std::map<std::string, int64_t> out;
  for (const WorkspaceBuffer& b : p.workspace) out[b.device + ": " + b.name] += b.bytes;
  return out;
}

TEST(Workspace, KeepsTheLargestRequestPerBuffer) {
  Workspace ws;
  ws.Need("a", 100);
  ws.Need("a", 40);  // the same buffer: the larger request serves both
  ws.Need("b", 10, 3);
  Workspace other;
  other.Need("a", 120);
  other.Need("b", 5, 4);  // upper bound: the largest size on the most threads
  other.Need("c", 0);     // nothing
  ws.Merge(other);
  ASSERT_EQ(ws.buffers().size(), 2u);
  EXPECT_EQ(ws.buffers().at("a").total(), 120);
  EXPECT_EQ(ws.buffers().at("b").bytes, 10);
  EXPECT_EQ(ws.buffers().at("b").threads, 4);
  EXPECT_EQ(ws.bytes(), 120 + 40);
}

TEST(Workspace, ConvPredictionEqualsWhatTheRunHolds) {
  for (int level : {0, 3}) {  // a plain Conv; at level 3 BlockedConv and the reorders around it
    SCOPED_TRACE("level " + std::to_string(level));
    SessionOptions o = OneThread();
    o.optimization_level = level;
    auto session = Load(ConvChain(20, {16, 32}), o);
    const MemoryPrediction& p = session->PredictMemory();
    // Plain NCHW activations are reordered to the blocked layout oneDNN picks and back; at level 3 they already
    // are blocked, and what is left (the primitive's scratchpad) depends on the CPU.
    if (level == 0) {
      EXPECT_GT(p.workspace_bytes, 0);
    }
    for (const WorkspaceBuffer& b : p.workspace) {
      EXPECT_EQ(b.device, "cpu");
      EXPECT_EQ(b.threads, 1);
    }
    EXPECT_EQ(HeldAfterRunOnFreshThread(*session), p.workspace_bytes);
  }
}

TEST(Workspace, TwoConvsNeedTheLargerRequestPerBufferNotTheSum) {
  // A small conv (16 -> 16 at 12x12) then a larger one (16 -> 64 at 12x12), and each alone.
  auto both = Load(ConvChain(12, {16, 16, 64}), OneThreadLevel0());
  auto small = Load(ConvChain(12, {16, 16}), OneThreadLevel0());
  auto large = Load(ConvChain(12, {16, 64}), OneThreadLevel0());
  const auto b = ByBuffer(both->PredictMemory()), s = ByBuffer(small->PredictMemory()),
             l = ByBuffer(large->PredictMemory());
  int64_t shared = 0;  // buffers both convs use
  for (const auto& [name, bytes] : b) {
    const int64_t sb = s.count(name) ? s.at(name) : 0, lb = l.count(name) ? l.at(name) : 0;
    EXPECT_EQ(bytes, std::max(sb, lb)) << name;
    if (sb > 0 && lb > 0) ++shared;
  }
  for (const auto& [name, bytes] : s) EXPECT_TRUE(b.count(name)) << name;
  for (const auto& [name, bytes] : l) EXPECT_TRUE(b.count(name)) << name;
  const int64_t sum = small->PredictMemory().workspace_bytes + large->PredictMemory().workspace_bytes;
  ASSERT_GT(shared, 0) << "the two convolutions share no scratch buffer";
  EXPECT_LT(both->PredictMemory().workspace_bytes, sum);
  EXPECT_EQ(HeldAfterRunOnFreshThread(*both), both->PredictMemory().workspace_bytes);
}

TEST(Workspace, CountsInTheTotalAndTheLimit) {
  auto session = Load(ConvChain(20, {16, 32}), OneThreadLevel0());
  const MemoryPrediction p = session->PredictMemory();
  ASSERT_GT(p.workspace_bytes, 0);
  EXPECT_EQ(p.total(),
            p.weights_bytes + p.kernel_bytes + p.arena_bytes + p.io_bytes + p.workspace_bytes + p.jit_code_bytes);
  SessionOptions o = OneThreadLevel0();
  // Everything but one byte: only with the workspace counted is it exceeded. The JIT code is left out, since the
  // second session reuses the first one's (oneDNN's primitive cache) and generates none.
  o.memory_limit = p.total() - p.jit_code_bytes - 1;
  try {
    Load(ConvChain(20, {16, 32}), o);
    FAIL() << "a limit below the predicted total was accepted";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find("kernels' workspace"), std::string::npos) << e.what();
  }
  o.memory_limit = p.total();
  EXPECT_NO_THROW(Load(ConvChain(20, {16, 32}), o));
}

TEST(Workspace, NoneWithoutKernelsThatKeepScratch) {
  testing::ModelBuilder b;
  b.Input("x", kF, {4, 64});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Sigmoid", {"a"}, {"y"});
  b.Output("y", kF, {4, 64});
  for (const auto& backends : std::vector<std::vector<std::string>>{{"cpu", "ref"}, {"ref"}}) {
    SCOPED_TRACE(backends.front());
    const auto session = Load(b.Bytes(), OneThread(backends));  // alive while p is read: p refers into it
    const MemoryPrediction& p = session->PredictMemory();
    EXPECT_EQ(p.workspace_bytes, 0);
    EXPECT_TRUE(p.workspace.empty());
  }
}

TEST(Workspace, SymbolicShapesPredictNoneUntilFixed) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {-1, 16, 12, 12}, "N");
  AddConv(b, "x", "y", 16, 32);
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  SessionOptions o = OneThread();
  o.optimization_level = 0;
  EXPECT_EQ(Load(b.Bytes(), o)->PredictMemory().workspace_bytes, 0);  // nothing built for an unknown batch
  o.input_shapes["x"] = {2, 16, 12, 12};
  auto fixed = Load(b.Bytes(), o);
  EXPECT_GT(fixed->PredictMemory().workspace_bytes, 0);
  EXPECT_EQ(HeldAfterRunOnFreshThread(*fixed), fixed->PredictMemory().workspace_bytes);
}

TEST(Workspace, QuickstartModelPredictionEqualsWhatTheRunHolds) {
  // Conv, pooling, Gemm on the cpu backend; the same model on ref (GEMM packing panels).
  for (const auto& backends : std::vector<std::vector<std::string>>{{"cpu", "ref"}, {"ref"}}) {
    SCOPED_TRACE(backends.front());
    auto session = Session::Create(kQuickstart, OneThread(backends));
    const MemoryPrediction& p = session->PredictMemory();
    if (backends.front() == "ref") {  // on cpu: what the layouts need, which depends on the CPU
      EXPECT_GT(p.workspace_bytes, 0);
    }
    EXPECT_EQ(HeldAfterRunOnFreshThread(*session), p.workspace_bytes);
  }
}

TEST(Workspace, RefGemmPanelsArePerThread) {
  // A 256x256x256 product splits over both threads: each keeps its own panels.
  testing::ModelBuilder b;
  b.Input("a", kF, {256, 256});
  b.FloatInitializer("b", {256, 256}, Ramp(256 * 256));
  b.Node("MatMul", {"a", "b"}, {"y"});
  b.Output("y", kF, {256, 256});
  SessionOptions o = OneThread({"ref"});
  o.threads = 2;
  auto session = Load(b.Bytes(), o);
  const MemoryPrediction& p = session->PredictMemory();
  ASSERT_EQ(p.workspace.size(), 2u);
  for (const WorkspaceBuffer& buf : p.workspace) {
    EXPECT_EQ(buf.threads, 2) << buf.name;
    EXPECT_EQ(buf.name.rfind("ref GEMM", 0), 0u) << buf.name;
  }
  // What both threads of the team hold after a run: the threads take blocks from a shared counter, so one may
  // have taken none (a descheduled thread): at least one thread's panels, at most the prediction.
  std::atomic<int64_t> held{0};
  std::thread t([&] {
    session->Run({{"a", Tensor(DataType::kFloat, {256, 256})}});
    ParallelFor(2, 2, 1, [&](int64_t, int64_t) { held += ref::GemmF32PanelBytesOnThisThread(); });
  });
  t.join();
  EXPECT_LE(held.load(), p.workspace_bytes);
  EXPECT_GE(held.load(), p.workspace_bytes / 2);
}

}  // namespace
}  // namespace ferry
