// The cpu convolution in output-channel parts (conv.cc, "Winograd scratchpad"): a batch-1 Winograd convolution whose
// one primitive would ask more than 64 MiB of scratchpad runs as several primitives over slices of M, with the bias,
// the fused residual Z and the activation per slice. Results stay ref's at batch 1 (parts) and batch 2 (one
// primitive), and the scratchpad the session plans for stays within the budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/isa.h"
#include "ferry/session.h"
#include "testing/model_builder.h"
#include "testing/random_values.h"

namespace ferry {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int64_t kC = 1024, kSize = 16;  // 1024x1024 3x3 taps: jit_wino_4x3 asks ~160 MiB of scratchpad

// x[N or 1, C, 16, 16] -> Conv 3x3 (C, bias, pads 1) -> Add r -> Relu -> y (at level 3: a BlockedConv with Z).
std::string Model(bool symbolic_batch) {
  testing::ModelBuilder b;
  if (symbolic_batch) {
    b.InputSym("x", kF, {-1, kC, kSize, kSize}, "N");
    b.InputSym("r", kF, {-1, kC, kSize, kSize}, "N");
  } else {
    b.Input("x", kF, {1, kC, kSize, kSize});
    b.Input("r", kF, {1, kC, kSize, kSize});
  }
  onnx::NodeProto& conv = b.Node("Conv", {"x", "w", "b"}, {"h"});
  auto* a = conv.add_attribute();
  a->set_name("pads");
  a->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) a->add_ints(1);
  b.Node("Add", {"h", "r"}, {"s"});
  b.Node("Relu", {"s"}, {"y"});
  std::vector<float> w = testing::UniformFloats(kC * kC * 9, 3);
  for (float& v : w) v *= 0.05f;
  b.FloatInitializer("w", {kC, kC, 3, 3}, std::move(w));
  b.FloatInitializer("b", {kC}, testing::UniformFloats(kC, 4));
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  return b.Bytes();
}

std::unique_ptr<Session> Create(const std::string& bytes, std::vector<std::string> backends, int level) {
  SessionOptions o;
  o.backends = std::move(backends);
  o.threads = 1;
  o.optimization_level = level;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

int64_t ConvScratchpad(const MemoryPrediction& m) {
  int64_t bytes = 0;
  for (const auto& w : m.workspace) {
    if (w.name == "conv scratchpad") bytes = std::max(bytes, w.bytes);
  }
  return bytes;
}

void ExpectMatchesRef(Session& cpu, Session& ref, int64_t batch) {
  const size_t n = static_cast<size_t>(batch * kC * kSize * kSize);
  const Tensor x = Tensor::FromVector(DataType::kFloat, {batch, kC, kSize, kSize}, testing::UniformFloats(n, 8));
  const Tensor r = Tensor::FromVector(DataType::kFloat, {batch, kC, kSize, kSize}, testing::UniformFloats(n, 9));
  const auto got = cpu.Run({{"x", x}, {"r", r}}), want = ref.Run({{"x", x}, {"r", r}});
  const Tensor& g = got[0].second;
  const Tensor& w = want[0].second;
  ASSERT_EQ(g.shape(), w.shape());
  for (int64_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g.data<float>()[i], w.data<float>()[i], 1e-3 * std::max(1.0f, std::abs(w.data<float>()[i])))
        << "batch " << batch << " at " << i << " (channel " << (i / (kSize * kSize)) % kC << ")";
  }
}

TEST(CpuConvWinogradParts, WideConvolutionRunsInPartsWithinTheScratchpadBudget) {
  if (!DetectHostIsa().contains(IsaSet{Isa::kAvx512f, Isa::kAvx512bw, Isa::kAvx512vl})) {
    GTEST_SKIP() << "oneDNN's Winograd kernels need AVX-512";
  }
  for (bool symbolic : {false, true}) {
    const std::string model = Model(symbolic);
    auto ref = Create(model, {"ref"}, 0);
    for (int level : {0, 3}) {  // a plain Conv (NCHW Y); a BlockedConv with Z and Relu fused (blocked Y)
      SCOPED_TRACE(std::string(symbolic ? "symbolic batch" : "static X") + ", optimization level " +
                   std::to_string(level));
      auto cpu = Create(model, {"cpu"}, level);
      const MemoryPrediction m = cpu->PredictMemory();
      if (!symbolic) {  // the prediction for a symbolic batch leaves what a run will prepare out
        EXPECT_GT(ConvScratchpad(m), 0);
        EXPECT_LE(ConvScratchpad(m), int64_t{64} << 20) << "one primitive's scratchpad for the whole of M";
        EXPECT_LT(m.weights_bytes, kC * kC * 9 * 4) << "W kept beside its packed parts";
      }
      ExpectMatchesRef(*cpu, *ref, 1);
      if (symbolic) ExpectMatchesRef(*cpu, *ref, 2);  // batch 2: one primitive, packed from W
    }
  }
}

}  // namespace
}  // namespace ferry
