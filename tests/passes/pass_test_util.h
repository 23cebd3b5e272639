// Helpers for the pass tests: building small models (Net), optimizing them (Optimized), looking at the result
// (NodesOf, Dump) and comparing an optimized session with the unoptimized one (ExpectSameOutputs).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ferry/session.h"
#include "ir/dump.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "passes/pass_manager.h"
#include "runtime/type_inference.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry::pass_test {

inline constexpr int32_t kF = onnx::TensorProto::FLOAT;

// A model under construction with helpers for random weights and one-output nodes.
struct Net {
  explicit Net(int64_t opset = 17) : b(opset) {}
  testing::ModelBuilder b;
  std::mt19937 rng{7};
  int counter = 0;

  std::vector<float> Random(size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
  }
  std::vector<float> Random(size_t n, float scale) { return Random(n, -scale, scale); }
  // A float initializer of random values in [lo, hi); returns its name.
  std::string Weights(const std::string& name, std::initializer_list<int64_t> dims, float lo, float hi) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    b.FloatInitializer(name, dims, Random(n, lo, hi));
    return name;
  }
  std::string Constant(const std::string& name, float v) {
    b.FloatInitializer(name, {}, {v});
    return name;
  }
  // A node `op` with one output (named op + counter); returns the output name.
  onnx::NodeProto& Node(const std::string& op, std::initializer_list<std::string> in, std::string* out) {
    *out = op + std::to_string(++counter);
    return b.Node(op, in, {*out}, op + "_" + std::to_string(counter));
  }
  std::string Op(const std::string& op, std::initializer_list<std::string> in) {
    std::string y;
    Node(op, in, &y);
    return y;
  }
};

inline void IntsAttr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void FloatAttr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline std::unique_ptr<ir::Model> Import(const std::string& bytes) {
  auto model = ir::ImportModelFromBytes(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  runtime::InferTypes(*model);
  return model;
}

inline passes::PassContext Context(int level, const std::vector<std::string>& backends,
                                   std::set<std::string, std::less<>> frozen = {}) {
  passes::PassContext ctx;
  ctx.level = level;
  for (const auto& name : backends) ctx.backends.push_back(FindBackend(name));
  ctx.frozen = std::move(frozen);
  return ctx;
}

// The model optimized at `level` for `backends` (empty: the portable mode, no target).
inline std::unique_ptr<ir::Model> Optimized(const std::string& bytes, int level,
                                            std::vector<std::string> backends = {"cpu", "ref"},
                                            std::set<std::string, std::less<>> frozen = {}) {
  auto model = Import(bytes);
  passes::OptimizeModel(*model, Context(level, backends, std::move(frozen)));
  return model;
}

inline std::vector<const ir::Node*> NodesOf(const ir::Model& m, const std::string& op) {
  std::vector<const ir::Node*> out;
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type() == op) out.push_back(n.get());
  }
  return out;
}

// "Op Op Op": the graph's op types in order (domain-qualified for non-ONNX domains).
inline std::string OpList(const ir::Model& m) {
  std::string s;
  for (const auto& n : m.graph->nodes()) {
    s += (s.empty() ? "" : " ") + (n->domain().empty() ? "" : n->domain() + "::") + n->op_type();
  }
  return s;
}

// Random values in [-1, 1) for every required input of the model (symbolic or unknown dims: 1).
inline std::vector<std::pair<std::string, Tensor>> RandomFeeds(const std::string& bytes) {
  std::mt19937 rng(11);
  auto model = Import(bytes);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const ir::Value* v : model->graph->RequiredInputs()) {
    Shape shape;
    if (v->type().shape) {
      for (const ir::Dim& d : *v->type().shape) shape.push_back(d.is_static() ? d.value : 1);
    }
    feeds.push_back({v->name(), testing::RandomTensor(v->type().elem_type, shape, rng)});
  }
  return feeds;
}

// Runs the model at level 0 and at `level` on the same random inputs (every required input, float, in [-1, 1))
// with `backends`, and compares every output.
inline void ExpectSameOutputs(const std::string& bytes, int level, const std::vector<std::string>& backends,
                              double rtol = 1e-4, double atol = 1e-4, int threads = 1) {
  const auto feeds = RandomFeeds(bytes);
  SessionOptions o;
  o.threads = threads;
  o.backends = backends;
  o.optimization_level = 0;
  const std::span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  auto base = Session::CreateFromBytes(span, o);
  o.optimization_level = level;
  auto opt = Session::CreateFromBytes(span, o);
  const auto want = base->Run(feeds);
  const auto got = opt->Run(feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, rtol, atol)) << "output " << want[i].first;
  }
}

// The portable mode (`ferry optimize` without a target): the model optimized at `level` with no backends, written
// back as ONNX, run unoptimized on `backends` against the original (also unoptimized) on the same inputs.
inline void ExpectSamePortableOutputs(const std::string& bytes, int level, const std::vector<std::string>& backends,
                                      double rtol = 1e-4, double atol = 1e-4) {
  const std::string optimized = ir::ExportModelBytes(*Optimized(bytes, level, {}));
  const auto feeds = RandomFeeds(bytes);
  SessionOptions o;
  o.threads = 1;
  o.backends = backends;
  o.optimization_level = 0;
  auto session = [&](const std::string& b) {
    return Session::CreateFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b.data()), b.size()), o);
  };
  const auto want = session(bytes)->Run(feeds);
  const auto got = session(optimized)->Run(feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, rtol, atol)) << "output " << want[i].first;
  }
}

}  // namespace ferry::pass_test
