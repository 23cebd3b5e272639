// The cpu pooling and normalization kernels under the create -> prepare -> run lifecycle (kernel.h), called
// directly through the cpu registry: Prepare declares the outputs (the optional statistics outputs too, and which
// output may take over an input's buffer), keeps the per-shape state Compute runs from and the oneDNN scratchpad
// the run holds, and raises the shape errors, naming the node and the input at fault; Compute then runs from that
// state alone and matches a direct computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ir/attribute.h"
#include "ir/graph.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"

namespace ferry {
namespace {

const KernelRegistry& Cpu() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry("cpu");
    cpu::RegisterCpuKernels(*reg);
    return reg;
  }();
  return *r;
}

Tensor Iota(Shape shape, float scale = 1.0f, float offset = 0.0f) {
  Tensor t(DataType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = offset + scale * static_cast<float>((i * 7) % 13);
  return t;
}

// One node in its own graph, with its cpu kernel: inputs named in_names (tensors or absent), outputs out_names
// ("" for an omitted output).
struct OneNode {
  ir::Graph g;
  ir::Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  int threads;

  OneNode(const std::string& op, const std::string& domain, int64_t opset, const std::vector<std::string>& in_names,
          const std::vector<std::string>& out_names, std::vector<ir::Attribute> attrs, int threads_ = 1)
      : threads(threads_) {
    std::vector<ir::Value*> ins, outs;
    for (const auto& n : in_names) ins.push_back(n.empty() ? nullptr : g.AddValue(n));
    for (const auto& n : out_names) outs.push_back(n.empty() ? nullptr : g.AddValue(n));
    node = g.AddNode(op + "_node", op, domain, ins, outs, std::move(attrs));
    node->set_opset(opset);
    const SupportResult s = Cpu().Query(*node, std::vector<DataType>(ins.size(), DataType::kFloat));
    if (!s.supported()) throw UnsupportedError("cpu cannot run " + op + ": " + s.reason);
    kernel = s.kernel->create(*node, KernelOptions{.threads = threads});
  }

  PreparedKernel Prepare(const std::vector<const Tensor*>& inputs) const {
    std::vector<InputSpec> specs;
    for (const Tensor* t : inputs) {
      InputSpec s;
      if (t) {
        s.kind = InputSpec::Kind::kTensor;
        s.dtype = t->dtype();
        s.shape = t->shape();
      }
      specs.push_back(s);
    }
    PrepareContext ctx(*node, specs, KernelOptions{.threads = threads}, "model 'm.onnx'");
    kernel->Prepare(ctx);
    return ctx.Finish();
  }

  // Runs Compute with `prepared`; `reusable` per input as the executor would say.
  std::vector<Value> Run(const PreparedKernel& prepared, const std::vector<const Tensor*>& inputs,
                         std::vector<char> reusable = {}) const {
    std::vector<Value> in_values;
    in_values.reserve(inputs.size());
    for (const Tensor* t : inputs) in_values.push_back(t ? Value(*t) : Value());
    std::vector<const Value*> in_ptrs;
    for (size_t i = 0; i < inputs.size(); ++i) in_ptrs.push_back(inputs[i] ? &in_values[i] : nullptr);
    std::vector<Value> outputs(node->num_outputs());
    KernelContext ctx(*node, in_ptrs, outputs, threads, nullptr, reusable);
    ctx.set_prepared(&prepared);
    kernel->Compute(ctx);
    return outputs;
  }
};

void ExpectTensorOutput(const PreparedKernel& p, int i, const Shape& shape) {
  ASSERT_LT(static_cast<size_t>(i), p.outputs.size());
  EXPECT_TRUE(p.outputs[static_cast<size_t>(i)].is_tensor()) << "output " << i;
  EXPECT_EQ(p.outputs[static_cast<size_t>(i)].dtype, DataType::kFloat) << "output " << i;
  EXPECT_EQ(p.outputs[static_cast<size_t>(i)].shape, shape) << "output " << i;
}

// The error Prepare throws, as text ("" when it throws none); `E` must be its type.
template <typename E>
std::string PrepareError(const OneNode& n, const std::vector<const Tensor*>& inputs) {
  try {
    n.Prepare(inputs);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

int64_t Scratchpad(const PreparedKernel& p) {
  const auto& b = p.workspace.buffers();
  const auto it = b.find("oneDNN scratchpad");
  return it == b.end() ? 0 : it->second.bytes;
}

// The scratchpad one run holds, on a thread that has run nothing before.
int64_t HeldByOneRun(const OneNode& n, const PreparedKernel& p, const std::vector<const Tensor*>& inputs) {
  int64_t held = -1;
  std::thread t([&] {
    n.Run(p, inputs);
    held = cpu::ScratchpadBytesOnThisThread();
  });
  t.join();
  return held;
}

// ref's MaxPool / AveragePool (count_include_pad 0) of a [N, C, H, W] tensor, square windows, no padding.
std::vector<float> NaivePool2d(const Tensor& x, int64_t k, int64_t s, bool max) {
  const int64_t planes = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t oh = (h - k) / s + 1, ow = (w - k) / s + 1;
  std::vector<float> y;
  for (int64_t q = 0; q < planes; ++q) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float acc = max ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (int64_t a = 0; a < k; ++a) {
          for (int64_t b = 0; b < k; ++b) {
            const float v = x.data<float>()[(q * h + i * s + a) * w + j * s + b];
            acc = max ? std::max(acc, v) : acc + v;
          }
        }
        y.push_back(max ? acc : acc / static_cast<float>(k * k));
      }
    }
  }
  return y;
}

void ExpectValues(const Tensor& t, const std::vector<float>& want, float tol) {
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[static_cast<size_t>(i)], tol) << i;
}

TEST(CpuPreparePool, MaxAndAveragePoolPrepareShapeStateAndTheScratchpadTheRunHolds) {
  const Tensor x = Iota({2, 3, 9, 9});
  for (const char* op : {"MaxPool", "AveragePool"}) {
    SCOPED_TRACE(op);
    const OneNode n(op, "", 19, {"x"}, {"y"},
                    {ir::IntsAttr("kernel_shape", {3, 3}), ir::IntsAttr("strides", {2, 2})}, 2);
    const PreparedKernel p = n.Prepare({&x});
    ExpectTensorOutput(p, 0, {2, 3, 4, 4});
    EXPECT_NE(p.state, nullptr);
    EXPECT_EQ(HeldByOneRun(n, p, {&x}), Scratchpad(p));
    const std::vector<Value> y = n.Run(p, {&x});
    ExpectValues(y[0].tensor(), NaivePool2d(x, 3, 2, std::string(op) == "MaxPool"), 1e-5f);
  }
}

TEST(CpuPreparePool, ShapeErrorsAreRaisedByPrepareNamingNodeAndInput) {
  const OneNode n("AveragePool", "", 19, {"x"}, {"y"}, {ir::IntsAttr("kernel_shape", {3, 3})});
  const Tensor small = Iota({1, 1, 2, 2});
  const std::string too_small = PrepareError<InvalidArgumentError>(n, {&small});
  EXPECT_NE(too_small.find("model 'm.onnx': node 'AveragePool_node' (AveragePool)"), std::string::npos) << too_small;
  EXPECT_NE(too_small.find("input 0 'x' float32[1,1,2,2]"), std::string::npos) << too_small;
  const Tensor flat = Iota({4, 4});
  const std::string rank = PrepareError<InvalidArgumentError>(n, {&flat});
  EXPECT_NE(rank.find("node 'AveragePool_node'"), std::string::npos) << rank;
  EXPECT_NE(rank.find("rank >= 3"), std::string::npos) << rank;
  EXPECT_NE(rank.find("input 0 'x' float32[4,4]"), std::string::npos) << rank;
}

TEST(CpuPreparePool, GlobalPoolsPrepareTheirOutput) {
  const Tensor x = Iota({2, 3, 4, 5});
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    SCOPED_TRACE(op);
    const OneNode n(op, "", 1, {"x"}, {"y"}, {});
    const PreparedKernel p = n.Prepare({&x});
    ExpectTensorOutput(p, 0, {2, 3, 1, 1});
    const Tensor vec = Iota({6});
    const std::string e = PrepareError<InvalidArgumentError>(n, {&vec});
    EXPECT_NE(e.find("input 0 'x' float32[6]"), std::string::npos) << e;
    const std::vector<Value> y = n.Run(p, {&x});
    EXPECT_EQ(y[0].tensor().shape(), (Shape{2, 3, 1, 1}));
  }
}

TEST(CpuPreparePool, BlockedPoolPreparesEveryModeAndRefusesUnblockedInputs) {
  const Tensor x = Iota({1, 2, 6, 6, 8});
  struct Case {
    const char* mode;
    Shape y;
  };
  for (const Case& c : {Case{"MaxPool", {1, 2, 3, 3, 8}}, Case{"AveragePool", {1, 2, 3, 3, 8}},
                        Case{"GlobalAveragePool", {1, 2, 1, 1, 8}}, Case{"GlobalMaxPool", {1, 2, 1, 1, 8}}}) {
    SCOPED_TRACE(c.mode);
    std::vector<ir::Attribute> attrs{ir::StringAttr("mode", c.mode), ir::IntAttr("block", 8)};
    if (c.y[2] == 3) {
      attrs.push_back(ir::IntsAttr("kernel_shape", {2, 2}));
      attrs.push_back(ir::IntsAttr("strides", {2, 2}));
    }
    const OneNode n("BlockedPool", "ai.ferry", 1, {"x"}, {"y"}, attrs);
    const PreparedKernel p = n.Prepare({&x});
    ExpectTensorOutput(p, 0, c.y);
    EXPECT_NE(p.state, nullptr);
    EXPECT_EQ(HeldByOneRun(n, p, {&x}), Scratchpad(p));
    const Tensor plain = Iota({1, 2, 6, 6});  // the last dim is not the block
    const std::string e = PrepareError<InvalidArgumentError>(n, {&plain});
    EXPECT_NE(e.find("node 'BlockedPool_node'"), std::string::npos) << e;
    EXPECT_NE(e.find("input 0 'x' float32[1,2,6,6]"), std::string::npos) << e;
    EXPECT_NE(e.find("blocked by 8"), std::string::npos) << e;
  }
}

// ref's LayerNormalization over the last dim, with the row means and inverse deviations.
void NaiveLayerNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, std::vector<float>* y,
                    std::vector<float>* mean, std::vector<float>* inv) {
  const int64_t n = x.shape().back(), rows = x.size() / n;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data<float>() + r * n;
    double m = 0, v = 0;
    for (int64_t i = 0; i < n; ++i) m += row[i];
    m /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) v += (row[i] - m) * (row[i] - m);
    const double d = 1.0 / std::sqrt(v / static_cast<double>(n) + 1e-5);
    mean->push_back(static_cast<float>(m));
    inv->push_back(static_cast<float>(d));
    for (int64_t i = 0; i < n; ++i) {
      y->push_back(static_cast<float>((row[i] - m) * d * scale.data<float>()[i] + bias.data<float>()[i]));
    }
  }
}

TEST(CpuPrepareNorm, LayerNormalizationDeclaresRequestedStatisticsAndTheScratchpad) {
  const Tensor x = Iota({3, 4, 16}, 0.5f, -2.0f), scale = Iota({16}, 0.1f, 0.5f), bias = Iota({16}, 0.2f, -1.0f);
  // Mean omitted, InvStdDev requested.
  const OneNode n("LayerNormalization", "", 17, {"x", "scale", "b"}, {"y", "", "inv"}, {ir::IntAttr("axis", -1)});
  const PreparedKernel p = n.Prepare({&x, &scale, &bias});
  ExpectTensorOutput(p, 0, {3, 4, 16});
  EXPECT_FALSE(p.outputs[1].is_tensor());
  ExpectTensorOutput(p, 2, {3, 4, 1});
  EXPECT_NE(p.state, nullptr);
  EXPECT_EQ(HeldByOneRun(n, p, {&x, &scale, &bias}), Scratchpad(p));
  const std::vector<Value> out = n.Run(p, {&x, &scale, &bias});
  std::vector<float> y, mean, inv;
  NaiveLayerNorm(x, scale, bias, &y, &mean, &inv);
  ExpectValues(out[0].tensor(), y, 1e-4f);
  ExpectValues(out[2].tensor(), inv, 1e-4f);
  EXPECT_TRUE(out[1].is_none());

  // Only Y: the statistics outputs are not in the node.
  const OneNode only_y("LayerNormalization", "", 17, {"x", "scale", "b"}, {"y"}, {});
  const PreparedKernel q = only_y.Prepare({&x, &scale, &bias});
  ASSERT_EQ(q.outputs.size(), 1u);
  ExpectTensorOutput(q, 0, {3, 4, 16});
  ExpectValues(only_y.Run(q, {&x, &scale, &bias})[0].tensor(), y, 1e-4f);
}

TEST(CpuPrepareNorm, LayerNormalizationShapeErrorsAreRaisedByPrepare) {
  const OneNode n("LayerNormalization", "", 17, {"x", "scale"}, {"y"}, {ir::IntAttr("axis", 1)});
  const Tensor x = Iota({2, 3, 4}), scale = Iota({5});
  const std::string e = PrepareError<InvalidArgumentError>(n, {&x, &scale});
  EXPECT_NE(e.find("node 'LayerNormalization_node'"), std::string::npos) << e;
  EXPECT_NE(e.find("input 'Scale' of shape [5] does not broadcast to [2,3,4]"), std::string::npos) << e;
  EXPECT_NE(e.find("input 1 'scale' float32[5]"), std::string::npos) << e;
}

TEST(CpuPrepareNorm, RmsNormalizationPreparesYInPlaceOfX) {
  const Tensor x = Iota({4, 6, 8}, 0.3f, -1.0f), scale = Iota({8}, 0.1f, 0.5f);
  const OneNode n("RMSNormalization", "", 23, {"x", "scale"}, {"y"}, {});
  const PreparedKernel p = n.Prepare({&x, &scale});
  ExpectTensorOutput(p, 0, {4, 6, 8});
  EXPECT_EQ(p.outputs[0].in_place_of, 0);
  EXPECT_NE(p.state, nullptr);
  const Tensor copy = x.Clone();
  const std::vector<Value> y = n.Run(p, {&copy, &scale}, {1, 0});
  std::vector<float> want;
  for (int64_t r = 0; r < 24; ++r) {
    double sq = 0;
    for (int64_t i = 0; i < 8; ++i) sq += x.data<float>()[r * 8 + i] * x.data<float>()[r * 8 + i];
    const double inv = 1.0 / std::sqrt(sq / 8 + 1e-5);
    for (int64_t i = 0; i < 8; ++i) want.push_back(static_cast<float>(x.data<float>()[r * 8 + i] * inv *
                                                                      scale.data<float>()[i]));
  }
  ExpectValues(y[0].tensor(), want, 1e-5f);

  const Tensor bad = Iota({3});
  const std::string e = PrepareError<InvalidArgumentError>(n, {&x, &bad});
  EXPECT_NE(e.find("node 'RMSNormalization_node'"), std::string::npos) << e;
  EXPECT_NE(e.find("input 'scale' of shape [3]"), std::string::npos) << e;
  EXPECT_NE(e.find("input 1 'scale' float32[3]"), std::string::npos) << e;
}

TEST(CpuPrepareNorm, SkipLayerNormalizationPreparesTheInPlaceOutputAndChecksShapes) {
  const Tensor x = Iota({2, 5, 16}), skip = Iota({5, 16}, 0.5f), gamma = Iota({16}, 0.1f, 1.0f);
  for (bool sum : {false, true}) {
    SCOPED_TRACE(sum ? "with Sum" : "Y only");
    const OneNode n("SkipLayerNormalization", "ai.ferry", 1, {"x", "skip", "gamma"},
                    sum ? std::vector<std::string>{"y", "s"} : std::vector<std::string>{"y", ""}, {});
    const PreparedKernel p = n.Prepare({&x, &skip, &gamma});
    ExpectTensorOutput(p, 0, {2, 5, 16});
    if (sum) {
      ExpectTensorOutput(p, 1, {2, 5, 16});
    } else {
      EXPECT_FALSE(p.outputs[1].is_tensor());
    }
    EXPECT_EQ(p.outputs[sum ? 1 : 0].in_place_of, 0);
    EXPECT_EQ(p.outputs[sum ? 0 : 1].in_place_of, -1);
    EXPECT_NE(p.state, nullptr);
    const std::vector<Value> out = n.Run(p, {&x, &skip, &gamma});
    EXPECT_EQ(out[0].tensor().shape(), (Shape{2, 5, 16}));
    if (sum) {
      const Tensor& s = out[1].tensor();
      for (int64_t i = 0; i < s.size(); ++i) {
        EXPECT_EQ(s.data<float>()[i], x.data<float>()[i] + skip.data<float>()[i % 80]) << i;
      }
    }
    const Tensor bad_skip = Iota({3, 16});
    const std::string e = PrepareError<InvalidArgumentError>(n, {&x, &bad_skip, &gamma});
    EXPECT_NE(e.find("model 'm.onnx': node 'SkipLayerNormalization_node'"), std::string::npos) << e;
    EXPECT_NE(e.find("input 'Skip' of shape [3,16]"), std::string::npos) << e;
    const Tensor bad_gamma = Iota({8});
    const std::string g = PrepareError<InvalidArgumentError>(n, {&x, &skip, &bad_gamma});
    EXPECT_NE(g.find("input 'gamma' of shape [8]"), std::string::npos) << g;
  }
}

}  // namespace
}  // namespace ferry
