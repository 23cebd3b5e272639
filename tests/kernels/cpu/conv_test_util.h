// Helpers for the cpu convolution tests (Conv, ConvTranspose): random integers, the one-node model with symbolic
// input dims (so the kernel builds its primitives at run time, per shape), and the refused-configuration check.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "testing/op_harness.h"

namespace ferry::testing {

inline int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// "x[1,2,5,5] w(const)[3,2,3,3] strides=[2,2] ... threads=2", for failure messages.
inline std::string DescribeCase(const OpTest& t) {
  std::string s;
  for (const auto& in : t.inputs) s += in.name + (in.constant ? "(const)" : "") + ShapeToString(in.value.shape()) + " ";
  for (const auto& a : t.attributes) {
    s += a.name() + "=";
    if (a.type() == onnx::AttributeProto::INT) s += std::to_string(a.i());
    if (a.type() == onnx::AttributeProto::STRING) s += a.s();
    if (a.type() == onnx::AttributeProto::INTS)
      s += ShapeToString(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    s += " ";
  }
  return s + "threads=" + std::to_string(t.threads);
}

// OneNodeModel(t) with every graph input's dims made symbolic ("d0", "d1", ...).
inline std::string DynamicOneNodeModel(const OpTest& t) {
  onnx::ModelProto m;
  m.ParseFromString(OneNodeModel(t));
  int n = 0;
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      d.set_dim_param("d" + std::to_string(n++));
    }
  }
  return m.SerializeAsString();
}

// Every activation of the fused-activation table (semantics/fused_activation.h), with parameters where it takes
// them, and "" (none): what the cpu convolution kernels' activation tests sweep.
inline const std::vector<std::pair<std::string, std::vector<float>>> kEveryFusedActivation = {
    {"", {}},
    {"Relu", {}},
    {"LeakyRelu", {0.1f}},
    {"Clip", {-0.5f, 0.75f}},
    {"HardSigmoid", {0.3f, 0.4f}},
    {"HardSwish", {}},
    {"Sigmoid", {}},
    {"Tanh", {}},
    {"Silu", {}},
    {"Gelu", {}},
    {"GeluTanh", {}},
    {"Mish", {}}};

// Convolutions sum in another order than ref: rtol/atol 1e-4, atol scaled with the reduction length (C/group
// times the kernel size) over 100.
inline void ConvTolerance(OpTest& t, int64_t cg, const std::vector<int64_t>& kernel) {
  int64_t reduction = cg;
  for (int64_t k : kernel) reduction *= k;
  t.rtol = 1e-4;
  t.atol = 1e-4 * std::max<double>(1.0, static_cast<double>(reduction) / 100.0);
}

// Runs the dynamic-shape model of `t` on cpu (strict) and ref with the given feeds (one list per run, shapes may
// differ between runs), from one thread per run when `concurrent`, and compares every output.
inline void ExpectDynamicMatchesRef(const OpTest& t,
                                    const std::vector<std::vector<std::pair<std::string, Tensor>>>& runs,
                                    bool concurrent) {
  const std::string bytes = DynamicOneNodeModel(t);
  auto cpu = SessionFor(bytes, {"cpu"}, true, t.threads);
  auto ref = SessionFor(bytes, {"ref"}, true, 1);
  std::vector<std::vector<std::pair<std::string, Tensor>>> got(runs.size());
  if (concurrent) {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < runs.size(); ++i) threads.emplace_back([&, i] { got[i] = cpu->Run(runs[i]); });
    for (auto& th : threads) th.join();
  } else {
    for (size_t i = 0; i < runs.size(); ++i) got[i] = cpu->Run(runs[i]);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto want = ref->Run(runs[i]);
    for (size_t j = 0; j < want.size(); ++j) {
      EXPECT_TRUE(TensorsClose(got[i][j].second, want[j].second, t.rtol, t.atol)) << "run " << i;
    }
  }
}

}  // namespace ferry::testing
