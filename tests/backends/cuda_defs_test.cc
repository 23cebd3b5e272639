// The `cuda` backend without a GPU: its kernel declarations are valid against Ferry's schemas, judged against a
// compute capability (hardware layer below 8.0), a session asking for it fails clearly, and in a CUDA build every
// declaration has exactly one factory.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/backend.h"
#include "backends/cuda/cuda_backend.h"
#include "ir/onnx_import.h"
#include "kernels/cuda_defs/cuda_kernel_defs.h"
#include "runtime/placement.h"
#include "runtime/type_inference.h"
#include "schemas/schema.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using schemas::SchemaRegistry;

const KernelRegistry& Cuda() { return FindBackend("cuda")->kernels(); }

TEST(CudaDefs, TheBackendIsRegisteredOnEveryMachine) {
  const Backend* b = FindBackend("cuda");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->device(), "cuda:0");
  EXPECT_FALSE(IsHostDevice(b->device()));
  EXPECT_GT(Cuda().defs().size(), 40u);
  const auto names = BackendNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
  // "cuda:N" names device N, made on first use; "cuda:0" is "cuda".
  EXPECT_EQ(FindBackend("cuda:0"), b);
  const Backend* second = FindBackend("cuda:1");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->device(), "cuda:1");
  EXPECT_EQ(FindBackend("cuda:1"), second);
  EXPECT_EQ(FindBackend("cuda:x"), nullptr);
  EXPECT_EQ(FindBackend("cuda:"), nullptr);
  EXPECT_EQ(CudaDeviceOfBackendName("cuda:12"), 12);
  EXPECT_EQ(CudaDeviceOfBackendName("cudax"), std::nullopt);
}

TEST(CudaDefs, DeclarationsAreValidAgainstTheSchemas) {
  std::set<std::string> names;
  std::map<std::string, std::vector<const KernelDef*>> by_op;
  for (const KernelDef& d : Cuda().defs()) {
    EXPECT_TRUE(names.insert(d.name).second) << "two kernels are named " << d.name;
    EXPECT_EQ(d.name, "cuda." + d.op + "." + std::to_string(d.since));
    EXPECT_EQ(d.min_compute_capability, cuda::kMinComputeCapability) << d.name;
    EXPECT_TRUE(d.create) << d.name;
    const auto versions = SchemaRegistry::Get().Versions(d.domain, d.op);
    ASSERT_FALSE(versions.empty()) << d.name << ": no schema";
    EXPECT_TRUE(std::any_of(versions.begin(), versions.end(), [&](const auto* s) { return s->since_version == d.since; }))
        << d.name << ": since is not a schema version";
    for (const auto& c : d.types) {
      bool found = false;
      for (const auto* s : versions) {
        found = found || (s->since_version >= d.since && s->since_version <= d.until && s->FindTypeConstraint(c.var));
      }
      EXPECT_TRUE(found) << d.name << ": type variable " << c.var << " is in no schema version of its range";
    }
    by_op[d.op].push_back(&d);
  }
  // From an op's first supported version on, no later schema version is skipped.
  for (const auto& [op, defs] : by_op) {
    int first = INT32_MAX;
    for (const auto* d : defs) first = std::min(first, d->since);
    for (const auto* s : SchemaRegistry::Get().Versions("", op)) {
      if (s->since_version < first || s->deprecated) continue;
      EXPECT_TRUE(std::any_of(defs.begin(), defs.end(), [&](const auto* d) {
        return d->since <= s->since_version && s->since_version <= d->until;
      })) << op << "-" << s->since_version << " is skipped by the cuda kernels";
    }
  }
}

// A one-node ir::Node of `op` at `opset` with float inputs, for registry queries.
struct OneNode {
  ir::Graph g;
  ir::Node* node = nullptr;
  OneNode(const std::string& op, int opset, size_t inputs) {
    std::vector<ir::Value*> ins;
    for (size_t i = 0; i < inputs; ++i) ins.push_back(g.AddValue("x" + std::to_string(i)));
    node = g.AddNode("n", op, "", ins, {g.AddValue("y")});
    node->set_opset(opset);
  }
};

TEST(CudaDefs, ComputeCapabilityIsAHardwareLayerConstraint) {
  OneNode relu("Relu", 14, 1);
  Target turing;
  turing.compute_capability = 75;
  auto r = Cuda().Query(*relu.node, {DataType::kFloat}, turing);
  EXPECT_FALSE(r.supported());
  EXPECT_EQ(r.layer, FailureLayer::kHardware);
  EXPECT_NE(r.reason.find("compute capability 8.0"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("7.5"), std::string::npos) << r.reason;
  Target ampere;
  ampere.compute_capability = 80;
  EXPECT_TRUE(Cuda().Query(*relu.node, {DataType::kBFloat16}, ampere).supported());
  // float64 stays on the CPU backends: a kernel-layer refusal naming the type.
  auto f64 = Cuda().Query(*relu.node, {DataType::kDouble}, ampere);
  EXPECT_EQ(f64.layer, FailureLayer::kKernel);
  EXPECT_NE(f64.reason.find("float64"), std::string::npos) << f64.reason;
}

TEST(CudaDefs, AttributePredicatesGiveReasons) {
  OneNode pool("MaxPool", 12, 1);
  pool.node->mutable_attributes().push_back(ir::IntsAttr("kernel_shape", {3, 3}));
  pool.node->mutable_attributes().push_back(ir::IntsAttr("pads", {1, 1, 0, 0}));
  Target hopper;
  hopper.compute_capability = 90;
  auto r = Cuda().Query(*pool.node, {DataType::kFloat}, hopper);
  EXPECT_EQ(r.layer, FailureLayer::kKernel);
  EXPECT_NE(r.reason.find("asymmetric pads"), std::string::npos) << r.reason;

  OneNode bn("BatchNormalization", 15, 5);
  bn.node->mutable_attributes().push_back(ir::IntAttr("training_mode", 1));
  auto t = Cuda().Query(*bn.node, {DataType::kFloat, DataType::kFloat, DataType::kFloat, DataType::kFloat, DataType::kFloat},
                        hopper);
  EXPECT_EQ(t.layer, FailureLayer::kKernel);
  EXPECT_NE(t.reason.find("training_mode"), std::string::npos) << t.reason;
}

TEST(CudaDefs, ShapeInputsLiveOnTheHost) {
  for (const KernelDef& d : Cuda().defs()) {
    if (d.op == "Reshape" || d.op == "Slice" || d.op == "Clip" || d.op.starts_with("Reduce") || d.op == "Squeeze" ||
        d.op == "Unsqueeze") {
      EXPECT_FALSE(d.host_inputs.empty()) << d.name;
    }
  }
}

TEST(CudaDefs, PlacementFallsBackBelowTheMinimumCapability) {
  // Relu on cuda,cpu judged against a 7.5 GPU: the node falls back to cpu with the hardware reason.
  testing::OpTest t{.op = "Relu", .opset = 14, .inputs = {testing::In("x", Tensor(DataType::kFloat, {2, 3}))}};
  const std::string bytes = testing::OneNodeModel(t);
  auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  runtime::InferTypes(*model);
  runtime::PlacementOptions o = runtime::ResolvePlacementOptions({"cuda", "cpu"}, {}, {}, true);
  o.target.compute_capability = 75;
  runtime::Placement p = runtime::PlaceModel(*model, o);
  ASSERT_TRUE(p.complete());
  const auto& np = p.nodes.begin()->second;
  EXPECT_EQ(np.backend->name(), "cpu");
  EXPECT_EQ(np.kind, runtime::PlacementKind::kFallback);
  EXPECT_NE(np.reason.find("compute capability"), std::string::npos) << np.reason;
  // At 9.0 it runs on cuda: the input is copied to cuda:0 and the output back to the host.
  o.target.compute_capability = 90;
  runtime::Placement q = runtime::PlaceModel(*model, o);
  EXPECT_EQ(q.nodes.begin()->second.backend->name(), "cuda");
  ASSERT_EQ(q.copies.size(), 2u);
  EXPECT_EQ(q.copies[0].to_device, "cuda:0");
  EXPECT_EQ(q.copies[1].to_device, "cpu");
}

TEST(CudaDefs, ASessionWithoutTheDeviceFailsNamingIt) {
  const CudaBackend* b = static_cast<const CudaBackend*>(FindBackend("cuda"));
  if (b->Unavailable().empty()) GTEST_SKIP() << "a CUDA device is present";
  testing::OpTest t{.op = "Relu", .opset = 14, .inputs = {testing::In("x", Tensor(DataType::kFloat, {2}))}};
  try {
    testing::SessionFor(testing::OneNodeModel(t), {"cuda", "cpu"}, false, 1);
    ADD_FAILURE() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cuda:0"), std::string::npos) << what;
    EXPECT_NE(what.find(CudaBackend::Built() ? "no CUDA device 0" : "built without CUDA"), std::string::npos) << what;
  }
  EXPECT_EQ(b->compute_capability(), 0);
}

TEST(CudaDefs, EveryDeclarationHasExactlyOneFactory) {
  if (!CudaBackend::Built()) GTEST_SKIP() << "built without CUDA: the declarations have no kernels";
  std::map<std::string, int> factories;
  for (const auto& name : CudaBackend::FactoryNames()) ++factories[name];
  for (const KernelDef& d : Cuda().defs()) {
    EXPECT_EQ(factories[d.name], 1) << d.name << " has " << factories[d.name] << " factories";
  }
  for (const auto& [name, count] : factories) {
    EXPECT_TRUE(std::any_of(Cuda().defs().begin(), Cuda().defs().end(), [&](const KernelDef& d) { return d.name == name; }))
        << "factory " << name << " has no declaration";
  }
}

}  // namespace
}  // namespace ferry
