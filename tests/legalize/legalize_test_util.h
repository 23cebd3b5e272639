// Helpers for the legalization tests: a test backend lacking the ops the decompositions rewrite, importing and
// running small models at -O0, and checking a decomposition against the op's ref kernel.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ferry/session.h"
#include "ir/dump.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "legalize/decomposition.h"
#include "legalize/legalize.h"
#include "runtime/type_inference.h"
#include "testing/op_harness.h"

namespace ferry::legalize_test {

using testing::Const;
using testing::Float;
using testing::In;
using testing::Int;
using testing::Ints;
using testing::Omitted;
using testing::OpTest;
using testing::Str;

// Test backends made of ref's kernels less some ops: "legalize_bare" lacks every op a decomposition rewrites (and
// Ferry's fused ops), so every decomposition is needed on it and its primitives all run there; "legalize_noreduce"
// lacks Mish, RMSNormalization and ReduceMean, so Mish can be rewritten for it and RMSNormalization cannot.
inline const char* const kBare = "legalize_bare";
// ref without GroupNormalization only: a target that runs RMSNormalization but needs GroupNormalization rewritten.
inline const char* const kNoGroupNorm = "legalize_nogroupnorm";
inline const char* const kNoReduce = "legalize_noreduce";

class PartialRefBackend : public Backend {
 public:
  // ref's kernels less those `drop` selects.
  PartialRefBackend(std::string name, const std::function<bool(const KernelDef&)>& drop)
      : name_(std::move(name)), registry_(name_) {
    for (const KernelDef& d : FindBackend("ref")->kernels().defs()) {
      if (drop(d)) continue;
      KernelDef copy = d;
      copy.name.clear();
      copy.backend.clear();
      registry_.Add(std::move(copy));
    }
  }
  // ref's kernels less the ops named in `missing`, in any domain.
  PartialRefBackend(std::string name, const std::set<std::string>& missing)
      : PartialRefBackend(std::move(name), [&](const KernelDef& d) { return missing.count(d.op) > 0; }) {}
  const std::string& name() const override { return name_; }
  std::string device() const override { return std::string(kHostDevice); }
  const KernelRegistry& kernels() const override { return registry_; }

 private:
  std::string name_;
  KernelRegistry registry_;
};

// Registers, once per process, the backend `name`: ref less the ops of `domain` named in `ops` (every op of
// `domain` when `ops` is empty). Returns `name`.
inline const char* EnsureRefWithout(const char* name, std::string domain, std::set<std::string> ops) {
  static std::set<std::string> registered;
  if (registered.insert(name).second) {
    RegisterBackend(std::make_unique<PartialRefBackend>(
        name, [&](const KernelDef& d) { return d.domain == domain && (ops.empty() || ops.count(d.op) > 0); }));
  }
  return name;
}

inline void EnsureBareBackend() {
  static const bool registered = [] {
    RegisterBackend(std::make_unique<PartialRefBackend>(
        kBare, std::set<std::string>{"LayerNormalization", "RMSNormalization", "GroupNormalization", "Gelu",
                                     "HardSwish", "Mish", "Softplus", "RotaryEmbedding", "Attention", "FusedMatMul",
                                     "FusedConv", "SkipLayerNormalization"}));
    RegisterBackend(std::make_unique<PartialRefBackend>(
        kNoReduce, std::set<std::string>{"Mish", "RMSNormalization", "ReduceMean"}));
    RegisterBackend(std::make_unique<PartialRefBackend>(kNoGroupNorm, std::set<std::string>{"GroupNormalization"}));
    return true;
  }();
  (void)registered;
}

// `bytes` with an import of ai.onnx at `opset` added (for models of ai.ferry ops).
inline std::string WithOnnxImport(const std::string& bytes, int64_t opset) {
  onnx::ModelProto m;
  m.ParseFromString(bytes);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  return m.SerializeAsString();
}

inline std::unique_ptr<ir::Model> Import(const std::string& bytes) {
  auto model = ir::ImportModelFromBytes(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  runtime::InferTypes(*model);
  return model;
}

inline std::unique_ptr<Session> SessionOf(const std::string& bytes, SessionOptions o) {
  o.threads = 1;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

inline SessionOptions On(std::vector<std::string> backends, bool legalize = false, bool allow_fallback = true) {
  SessionOptions o;
  o.backends = std::move(backends);
  o.optimization_level = 0;
  o.legalize = legalize;
  o.allow_fallback = allow_fallback;
  return o;
}

// "Op Op Op": the top graph's op types in order (domain-qualified outside ai.onnx).
inline std::string OpList(const ir::Model& m) {
  std::string s;
  for (const auto& n : m.graph->nodes()) {
    s += (s.empty() ? "" : " ") + (n->domain().empty() ? "" : n->domain() + "::") + n->op_type();
  }
  return s;
}

// The one-node model `bytes` with its node decomposed by the first rule that accepts it, at the model's ai.onnx
// opset; `rule` gets that rule's description. Fails the test (and returns "") when no rule accepts.
inline std::string Decomposed(const std::string& bytes, std::string* rule = nullptr, std::string* ops = nullptr) {
  auto model = Import(bytes);
  ir::Node* node = model->graph->nodes().front().get();
  const int64_t opset = legalize::OnnxOpset(*model);
  const legalize::Choice c = legalize::ChooseDecomposition(*node, opset);
  EXPECT_NE(c.decomposition, nullptr) << c.reason;
  if (!c.decomposition) return "";
  if (rule) *rule = c.decomposition->description;
  legalize::Decompose(*model, *model->graph, node, *c.decomposition, opset);
  if (ops) *ops = OpList(*model);
  return ir::ExportModelBytes(*model);
}

// The op of `t` run by its ref kernel against its decomposition run on ref, on cpu,ref and on legalize_bare
// (every output; |got - want| <= atol + rtol |want|). `onnx_opset` > 0: the ai.onnx opset to import besides the
// op's own domain (for ai.ferry ops).
inline ::testing::AssertionResult DecompositionMatches(const OpTest& t, int64_t onnx_opset = 0,
                                                       std::string* ops = nullptr) {
  EnsureBareBackend();
  std::string bytes = testing::OneNodeModel(t);
  if (onnx_opset > 0) bytes = WithOnnxImport(bytes, onnx_opset);
  const std::string decomposed = Decomposed(bytes, nullptr, ops);
  if (decomposed.empty()) return ::testing::AssertionFailure() << "no decomposition";
  const auto feeds = testing::Feeds(t);
  const auto want = SessionOf(bytes, On({"ref"}))->Run(feeds);
  for (const std::vector<std::string>& backends :
       {std::vector<std::string>{"ref"}, {"cpu", "ref"}, {std::string(kBare)}}) {
    // With --legalize: what the rule makes may decompose further on a backend lacking it (HardSwish, Gelu).
    const auto got = SessionOf(decomposed, On(backends, true, backends.size() > 1))->Run(feeds);
    if (got.size() != want.size()) return ::testing::AssertionFailure() << "output count " << got.size();
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i].first != want[i].first) return ::testing::AssertionFailure() << "output " << got[i].first;
      auto close = testing::TensorsClose(got[i].second, want[i].second, t.rtol, t.atol);
      if (!close) return close << " (output " << want[i].first << " on " << backends.front() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ferry::legalize_test
