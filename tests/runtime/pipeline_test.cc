// The front-end pipeline (runtime/pipeline.h): what each stage leaves behind when the pipeline stops after it,
// that stopping and continuing gives what one run gives, the keep_going mode `ferry check` uses, errors naming the
// model file; and target resolution (runtime/target.h): --isa narrowing the host, an exact ISA, the compute
// capability by device rule, and the backends --legalize rewrites for.
#include "runtime/pipeline.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/isa.h"
#include "ferry/error.h"
#include "runtime/target.h"
#include "testing/model_builder.h"

namespace ferry::runtime {
namespace {

using ferry::testing::ModelBuilder;

// y = Twice(Identity(Relu(x))), x: float32[N,4], y: float32 of unknown shape, where Twice(a) = Add(a, a) is a
// model-local function (domain "local").
ModelBuilder StagesModel() {
  ModelBuilder b(17);
  auto* local = b.proto().add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  b.InputSym("x", onnx::TensorProto::FLOAT, {-1, 4}, "N");
  b.Node("Relu", {"x"}, {"r"}, "relu");
  b.Node("Identity", {"r"}, {"i"}, "identity");
  b.Node("Twice", {"i"}, {"y"}, "twice").set_domain("local");
  auto* y = b.graph().add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* f = b.proto().add_functions();
  f->set_name("Twice");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  auto* op = f->add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* add = f->add_node();
  add->set_op_type("Add");
  add->add_input("a");
  add->add_input("a");
  add->add_output("b");
  return b;
}

std::string Write(const ModelBuilder& b, const std::string& name) {
  return testing::WriteTempFile(b.Bytes(), "pipeline_" + name + ".onnx");
}

std::vector<std::string> Ops(const ir::Model& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph->nodes()) ops.push_back(n->op_type());
  return ops;
}

const ir::Value* Output(const ir::Model& m) { return m.graph->outputs().at(0); }
const ir::Value* Input(const ir::Model& m) { return m.graph->inputs().at(0); }

PipelineOptions RefOptions() {
  PipelineOptions o;
  TargetOptions t;
  t.backends = {"ref"};
  o.target = ResolveTarget(t);
  o.input_shapes = {{"x", {2, 4}}};
  o.level = 1;
  return o;
}

template <typename Fn>
std::string Message(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- stages ------------------------------------------------------------------------------------------------

TEST(Pipeline, EachStageLeavesWhatItDoes) {
  const std::string path = Write(StagesModel(), "stages");
  const PipelineOptions o = RefOptions();

  PreparedModel imported = PrepareModel(path, o, Stage::kImported);
  EXPECT_EQ(imported.stage, Stage::kImported);
  EXPECT_EQ(Ops(*imported.model), (std::vector<std::string>{"Relu", "Identity", "Twice"}));
  EXPECT_EQ(imported.model->path, path);

  PreparedModel inlined = PrepareModel(path, o, Stage::kInlined);
  EXPECT_EQ(Ops(*inlined.model), (std::vector<std::string>{"Relu", "Identity", "Add"}));
  EXPECT_EQ(Input(*inlined.model)->type().ToString(), "float32[N,4]");

  PreparedModel fixed = PrepareModel(path, o, Stage::kShapesFixed);
  EXPECT_EQ(Input(*fixed.model)->type().ToString(), "float32[2,4]");
  EXPECT_FALSE(Output(*fixed.model)->type().shape.has_value());  // not inferred yet

  PreparedModel inferred = PrepareModel(path, o, Stage::kTypesInferred);
  EXPECT_EQ(Output(*inferred.model)->type().ToString(), "float32[2,4]");
  EXPECT_TRUE(inferred.passes.runs.empty());

  PreparedModel optimized = PrepareModel(path, o, Stage::kOptimized);
  EXPECT_EQ(Ops(*optimized.model), (std::vector<std::string>{"Relu", "Add"}));  // eliminate_identity, level 1
  EXPECT_EQ(optimized.passes.level, 1);
  EXPECT_FALSE(optimized.passes.runs.empty());
  EXPECT_TRUE(optimized.placement.nodes.empty());

  PreparedModel placed = PrepareModel(path, o, Stage::kPlaced);
  EXPECT_EQ(placed.stage, Stage::kPlaced);
  ASSERT_EQ(placed.placement.nodes.size(), 2u);
  for (const auto& n : placed.model->graph->nodes()) {
    EXPECT_EQ(placed.placement.nodes.at(n.get()).backend->name(), "ref");
  }
  EXPECT_TRUE(placed.placement.complete());
  EXPECT_TRUE(placed.problems.empty());
}

TEST(Pipeline, ContinuingStageByStageIsOneRun) {
  const std::string path = Write(StagesModel(), "continue");
  const PipelineOptions o = RefOptions();
  PreparedModel m = PrepareModel(path, o, Stage::kImported);
  for (Stage s : {Stage::kInlined, Stage::kShapesFixed, Stage::kTypesInferred, Stage::kOptimized, Stage::kPlaced}) {
    ContinueModel(m, o, s);
    EXPECT_EQ(m.stage, s) << StageName(s);
  }
  ContinueModel(m, o, Stage::kPlaced);  // already there: nothing to do
  EXPECT_EQ(Ops(*m.model), (std::vector<std::string>{"Relu", "Add"}));
  EXPECT_EQ(m.placement.nodes.size(), 2u);
  const std::string e = Message([&] { ContinueModel(m, o, Stage::kInlined); });
  EXPECT_NE(e.find("model '" + path + "'"), std::string::npos) << e;
  EXPECT_NE(e.find("'inlined'"), std::string::npos) << e;
  EXPECT_NE(e.find("already placed"), std::string::npos) << e;
}

TEST(Pipeline, BytesGoTheSameWay) {
  const std::string bytes = StagesModel().Bytes();
  PreparedModel m = PrepareModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "",
                                          RefOptions(), Stage::kPlaced);
  EXPECT_EQ(Ops(*m.model), (std::vector<std::string>{"Relu", "Add"}));
  EXPECT_EQ(m.model->Describe(), "model <bytes>");
  EXPECT_EQ(m.placement.nodes.size(), 2u);
}

TEST(Pipeline, OptimizeFalsePassesTheStageWithoutThePasses) {
  PipelineOptions o = RefOptions();
  o.optimize = false;
  PreparedModel m = PrepareModel(Write(StagesModel(), "no_passes"), o, Stage::kPlaced);
  EXPECT_EQ(Ops(*m.model), (std::vector<std::string>{"Relu", "Identity", "Add"}));
  EXPECT_TRUE(m.passes.runs.empty());
  EXPECT_EQ(m.placement.nodes.size(), 3u);
}

TEST(Pipeline, FixShapesReplacesInputShapesAndSeesTheImportStats) {
  PipelineOptions o = RefOptions();
  o.import.load_initializer_data = false;
  int calls = 0;
  o.fix_shapes = [&](ir::Model& model, const ir::ImportStats& stats) {
    ++calls;
    EXPECT_EQ(stats.initializers, 0);
    EXPECT_EQ(Input(model)->type().ToString(), "float32[N,4]");  // input_shapes were not applied
  };
  PreparedModel m = PrepareModel(Write(StagesModel(), "fix_shapes"), o, Stage::kTypesInferred);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(Output(*m.model)->type().ToString(), "float32[N,4]");
}

TEST(Pipeline, PinsFreezeTheirNodesForThePasses) {
  PipelineOptions o = RefOptions();
  TargetOptions t;
  t.backends = {"ref"};
  t.pins = {{"identity", "ref"}};
  o.target = ResolveTarget(t);
  PreparedModel m = PrepareModel(Write(StagesModel(), "pins"), o, Stage::kPlaced);
  EXPECT_EQ(Ops(*m.model), (std::vector<std::string>{"Relu", "Identity", "Add"}));
  const ir::Node* identity = m.model->graph->nodes().at(1).get();
  EXPECT_EQ(m.placement.nodes.at(identity).kind, PlacementKind::kPinned);
}

// ---- errors ------------------------------------------------------------------------------------------------

TEST(Pipeline, ErrorsNameTheModelFile) {
  const PipelineOptions o = RefOptions();
  const std::string missing = ::testing::TempDir() + "/pipeline_no_such_model.onnx";
  EXPECT_EQ(Message([&] { PrepareModel(missing, o, Stage::kPlaced); }),
            "model '" + missing + "': no such file");

  // FixInputShapes: an input the model lacks.
  PipelineOptions bad_shape = o;
  bad_shape.input_shapes = {{"nope", {1, 4}}};
  const std::string stages = Write(StagesModel(), "errors");
  const std::string s = Message([&] { PrepareModel(stages, bad_shape, Stage::kShapesFixed); });
  EXPECT_NE(s.find("model '" + stages + "'"), std::string::npos) << s;
  EXPECT_NE(s.find("no input 'nope'"), std::string::npos) << s;

  // Type inference: MatMul inner dims 3 vs 5.
  ModelBuilder mm(17);
  mm.Input("a", onnx::TensorProto::FLOAT, {2, 3});
  mm.Input("b", onnx::TensorProto::FLOAT, {5, 4});
  mm.Node("MatMul", {"a", "b"}, {"c"}, "mm");
  mm.Output("c", onnx::TensorProto::FLOAT, {2, 4});
  const std::string mm_path = Write(mm, "matmul");
  PipelineOptions no_shapes = o;
  no_shapes.input_shapes = {};
  try {
    PrepareModel(mm_path, no_shapes, Stage::kTypesInferred);
    ADD_FAILURE() << "inference accepted MatMul 3 vs 5";
  } catch (const InvalidModelError& e) {
    EXPECT_NE(std::string(e.what()).find("model '" + mm_path + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'mm'"), std::string::npos) << e.what();
  }

  // Placement: an op no backend runs.
  ModelBuilder custom(17);
  auto* example = custom.proto().add_opset_import();
  example->set_domain("com.example");
  example->set_version(1);
  custom.Input("x", onnx::TensorProto::FLOAT, {2});
  custom.Node("Foo", {"x"}, {"y"}, "foo").set_domain("com.example");
  custom.Output("y", onnx::TensorProto::FLOAT, {2});
  const std::string custom_path = Write(custom, "custom");
  const std::string p = Message([&] { PrepareModel(custom_path, no_shapes, Stage::kPlaced); });
  EXPECT_NE(p.find("model '" + custom_path + "': 1 node(s) cannot run"), std::string::npos) << p;
  EXPECT_NE(p.find("node 'foo' (com.example::Foo)"), std::string::npos) << p;
  // Stopping before placement, nothing is wrong yet.
  EXPECT_NO_THROW(PrepareModel(custom_path, no_shapes, Stage::kOptimized));
}

// ---- keep_going (`ferry check`) ----------------------------------------------------------------------------

TEST(Pipeline, KeepGoingReportsInferenceFailuresAndUnplacedNodes) {
  ModelBuilder b(17);
  auto* example = b.proto().add_opset_import();
  example->set_domain("com.example");
  example->set_version(1);
  b.Input("a", onnx::TensorProto::FLOAT, {2, 3});
  b.Input("b", onnx::TensorProto::FLOAT, {5, 4});
  b.Node("MatMul", {"a", "b"}, {"c"}, "mm");
  b.Node("Foo", {"c"}, {"y"}, "foo").set_domain("com.example");
  b.Output("y", onnx::TensorProto::FLOAT, {2, 4});
  const std::string path = Write(b, "keep_going");
  PipelineOptions o = RefOptions();
  o.input_shapes = {};
  o.keep_going = true;
  PreparedModel m = PrepareModel(path, o, Stage::kPlaced);
  ASSERT_EQ(m.problems.size(), 1u);
  EXPECT_EQ(m.problems[0].rfind("type inference: model '" + path + "'", 0), 0u) << m.problems[0];
  ASSERT_EQ(m.placement.unplaced.size(), 1u);
  EXPECT_EQ(m.placement.unplaced[0].node->name(), "foo");
  EXPECT_EQ(m.placement.nodes.size(), 1u);  // the MatMul, placed on what was inferred
}

// F0 calls F1 twice, F1 calls F2 twice, ...: inlining refuses the 2^40 nodes it would make.
ModelBuilder UninlinableModel() {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("F0", {"x"}, {"y"}, "call").set_domain("local");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  auto* local = b.proto().add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  constexpr int kLevels = 40;
  for (int i = 0; i <= kLevels; ++i) {
    auto* f = b.proto().add_functions();
    f->set_name("F" + std::to_string(i));
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    auto* op = f->add_opset_import();
    op->set_domain(i == kLevels ? "" : "local");
    op->set_version(i == kLevels ? 17 : 1);
    for (int k = 0; k < (i == kLevels ? 1 : 2); ++k) {
      auto* n = f->add_node();
      n->set_op_type(i == kLevels ? "Relu" : "F" + std::to_string(i + 1));
      if (i != kLevels) n->set_domain("local");
      n->add_input(k == 0 ? "a" : "t");
      n->add_output(i == kLevels || k == 1 ? "b" : "t");
    }
  }
  return b;
}

TEST(Pipeline, KeepGoingTakesAModelThatCannotBeInlinedFurtherAsWritten) {
  const ModelBuilder b = UninlinableModel();
  const std::string path = Write(b, "uninlinable");
  PipelineOptions o = RefOptions();
  o.input_shapes = {};
  EXPECT_THROW(PrepareModel(path, o, Stage::kInlined), ResourceExhaustedError);

  o.keep_going = true;
  PreparedModel m = PrepareModel(path, o, Stage::kPlaced);
  ASSERT_EQ(m.problems.size(), 1u);
  EXPECT_EQ(m.problems[0].rfind("function inlining: model '" + path + "'", 0), 0u) << m.problems[0];
  EXPECT_EQ(Ops(*m.model), (std::vector<std::string>{"F0"}));  // re-read as written
  ASSERT_EQ(m.placement.unplaced.size(), 1u);

  // From bytes there is no file to re-read: the failure is thrown.
  const std::string bytes = b.Bytes();
  EXPECT_THROW(PrepareModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", o,
                                     Stage::kInlined),
               ResourceExhaustedError);
}

// ---- target resolution -------------------------------------------------------------------------------------

TEST(PipelineTarget, NoIsaIsTheHostsAsFerryIsaNarrowsIt) {
  TargetOptions t;
  t.backends = {"cpu", "ref"};
  const ResolvedTarget r = ResolveTarget(t);
  EXPECT_EQ(r.target().isa, DefaultIsa());
  EXPECT_EQ(r.isa_narrowed, DefaultIsa() != DetectHostIsa());
  ASSERT_EQ(r.placement.backends.size(), 2u);
  EXPECT_EQ(r.placement.backends[0]->name(), "cpu");
  EXPECT_EQ(r.target().compute_capability, 0);
}

TEST(PipelineTarget, IsaNarrowsTheHost) {
  TargetOptions t;
  t.backends = {"ref"};
  t.isa = "avx2,fma,avx512vnni";
  const ResolvedTarget r = ResolveTarget(t);
  EXPECT_EQ(r.target().isa, DefaultIsa() & IsaSet({Isa::kAvx2, Isa::kFma, Isa::kAvx512vnni}));
  EXPECT_TRUE(DetectHostIsa().contains(r.target().isa));  // never more than this CPU has
  t.isa = "none";
  const ResolvedTarget none = ResolveTarget(t);
  EXPECT_TRUE(none.target().isa.empty());
  EXPECT_EQ(none.isa_narrowed, !DetectHostIsa().empty());
}

TEST(PipelineTarget, ExactIsaIsTakenAsGivenWhateverTheHost) {
  TargetOptions t;
  t.backends = {"ref"};
  t.isa = "avx512f,avx512bw,avx512vl,avx512vnni";
  t.isa_exact = true;
  const ResolvedTarget r = ResolveTarget(t);
  EXPECT_EQ(r.target().isa, IsaSet({Isa::kAvx512f, Isa::kAvx512bw, Isa::kAvx512vl, Isa::kAvx512vnni}));
  EXPECT_FALSE(r.isa_narrowed);
}

TEST(PipelineTarget, BadNamesAreInvalidArguments) {
  TargetOptions t;
  t.backends = {"ref"};
  t.isa = "avx2,sse9";
  EXPECT_NE(Message([&] { ResolveTarget(t); }).find("sse9"), std::string::npos);
  t.isa = "";
  t.backends = {"nope"};
  const std::string m = Message([&] { ResolveTarget(t); });
  EXPECT_NE(m.find("unknown backend 'nope' (available: "), std::string::npos) << m;
  t.backends = {"ref"};
  t.pins = {{"Relu", "nope"}};
  EXPECT_NE(Message([&] { ResolveTarget(t); }).find("--pin Relu=nope: unknown backend 'nope'"), std::string::npos);
}

// A GPU backend whose device this machine lacks: device "fake_gpu:0", compute capability 7.5, no kernels.
class FakeGpuBackend : public Backend {
 public:
  const std::string& name() const override { return name_; }
  std::string device() const override { return "fake_gpu:0"; }
  const KernelRegistry& kernels() const override { return registry_; }
  int compute_capability() const override { return 75; }
  void RequireDevice() const override {
    throw UnsupportedError("backend '" + name_ + "' (device fake_gpu:0): no such GPU here");
  }

 private:
  std::string name_ = "pipeline_gpu";
  KernelRegistry registry_{name_};
};

// A plugin's backend on the host with ref's Mul, Add and Clip kernels: what HardSwish decomposes into.
class FakePluginBackend : public Backend {
 public:
  FakePluginBackend() {
    for (const KernelDef& d : FindBackend("ref")->kernels().defs()) {
      if (!d.domain.empty() || (d.op != "Mul" && d.op != "Add" && d.op != "Clip")) continue;
      KernelDef copy = d;
      copy.name.clear();
      registry_.Add(std::move(copy));
    }
  }
  const std::string& name() const override { return name_; }
  std::string device() const override { return "cpu"; }
  const KernelRegistry& kernels() const override { return registry_; }
  bool is_plugin() const override { return true; }

 private:
  std::string name_ = "pipeline_plugin";
  KernelRegistry registry_{name_};
};

void EnsureTestBackends() {
  static const bool registered = [] {
    RegisterBackend(std::make_unique<FakeGpuBackend>());
    RegisterBackend(std::make_unique<FakePluginBackend>());
    return true;
  }();
  (void)registered;
}

TEST(PipelineTarget, ComputeCapabilityByDeviceRule) {
  EnsureTestBackends();
  TargetOptions t;
  t.backends = {"pipeline_gpu", "ref"};
  // A session: the device must be here.
  EXPECT_NE(Message([&] { ResolveTarget(t); }).find("no such GPU here"), std::string::npos);
  // `ferry check` without --cc: noted, judged against what the backend reports.
  t.devices = DeviceRule::kProbe;
  const ResolvedTarget probed = ResolveTarget(t);
  ASSERT_EQ(probed.missing_devices.size(), 1u);
  EXPECT_EQ(probed.missing_devices[0].backend->name(), "pipeline_gpu");
  EXPECT_EQ(probed.missing_devices[0].problem, "backend 'pipeline_gpu' (device fake_gpu:0): no such GPU here");
  EXPECT_EQ(probed.target().compute_capability, 75);
  // --cc: exactly that, no device needed.
  t.devices = DeviceRule::kGiven;
  t.compute_capability = 86;
  const ResolvedTarget given = ResolveTarget(t);
  EXPECT_EQ(given.target().compute_capability, 86);
  EXPECT_TRUE(given.missing_devices.empty());
  // Host backends need no device and have no compute capability.
  TargetOptions host;
  host.backends = {"cpu", "ref"};
  EXPECT_EQ(ResolveTarget(host).target().compute_capability, 0);
}

TEST(PipelineTarget, LegalizeTargetsAreEveryBackendOrWithoutFallbackTheFirstAndThePlugins) {
  EnsureTestBackends();
  auto names = [](const std::vector<const Backend*>& v) {
    std::vector<std::string> out;
    for (const Backend* b : v) out.push_back(b->name());
    return out;
  };
  TargetOptions t;
  t.backends = {"cpu", "pipeline_plugin", "ref"};
  EXPECT_EQ(names(ResolveTarget(t).legalize_backends),
            (std::vector<std::string>{"cpu", "pipeline_plugin", "ref"}));
  t.allow_fallback = false;
  EXPECT_EQ(names(ResolveTarget(t).legalize_backends), (std::vector<std::string>{"cpu", "pipeline_plugin"}));
  t.backends = {"pipeline_plugin", "ref"};
  EXPECT_EQ(names(ResolveTarget(t).legalize_backends), (std::vector<std::string>{"pipeline_plugin"}));
  t.backends = {};
  EXPECT_TRUE(ResolveTarget(t).legalize_backends.empty());  // `ferry optimize`'s portable mode
}

// The pipeline's legalize pass rewrites for the legalize backends: without fallback for the first backend (and the
// plugins) alone, so a HardSwish that ref runs is still rewritten into the Mul, Add and Clip the plugin runs.
TEST(PipelineTarget, LegalizeRewritesForTheLegalizeBackends) {
  EnsureTestBackends();
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 4});
  b.Node("HardSwish", {"x"}, {"y"}, "hs");
  b.Output("y", onnx::TensorProto::FLOAT, {2, 4});
  const std::string path = Write(b, "legalize");
  PipelineOptions o;
  o.legalize = true;
  TargetOptions t;
  t.backends = {"pipeline_plugin", "ref"};
  o.target = ResolveTarget(t);
  PreparedModel fallback = PrepareModel(path, o, Stage::kPlaced);
  EXPECT_EQ(Ops(*fallback.model), (std::vector<std::string>{"HardSwish"}));  // ref runs it: nothing to rewrite
  EXPECT_EQ(fallback.placement.nodes.at(fallback.model->graph->nodes().at(0).get()).backend->name(), "ref");

  t.allow_fallback = false;
  o.target = ResolveTarget(t);
  PreparedModel legal = PrepareModel(path, o, Stage::kPlaced);
  EXPECT_EQ(Ops(*legal.model), (std::vector<std::string>{"Mul", "Add", "Clip", "Mul"}));
  for (const auto& n : legal.model->graph->nodes()) {
    EXPECT_EQ(legal.placement.nodes.at(n.get()).backend->name(), "pipeline_plugin") << n->Describe();
  }
}

}  // namespace
}  // namespace ferry::runtime
