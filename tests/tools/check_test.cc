// `ferry check` (tools::CheckModel): every failure layer with its reason and remedy, judged with a test-only
// backend "partial" that has a deliberately partial kernel set, checked with backends "partial,ref"; FLOPs,
// fallback ratios, --shape overrides, gates, JSON, weights that are never loaded, and agreement with placement
// and with the error a Session gives.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/inline_functions.h"
#include "ir/onnx_import.h"
#include "runtime/placement.h"
#include "runtime/type_inference.h"
#include "schemas/schema.h"
#include "testing/model_builder.h"
#include "tools/check.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;
using tools::CheckModel;
using tools::CheckOptions;
using tools::CheckReport;
using tools::NodeCheck;
using tools::Verdict;

// ---- the test backend --------------------------------------------------------------------------------------

// Relu and Add for float only, Conv only when group == 1, MatMul only on a CPU with AVX-512 VNNI. Its kernels
// compute with ref's implementations, so a session on "partial,ref" runs for real.
class PartialBackend : public Backend {
 public:
  PartialBackend() : registry_("partial") {
    const KernelRegistry& ref = FindBackend("ref")->kernels();
    auto ref_create = [&](const std::string& op) {
      for (const auto& d : ref.defs()) {
        if (d.op == op && d.domain.empty() && d.since <= 17 && 17 <= d.until) return d.create;
      }
      throw InternalError("ref has no " + op);
    };
    const std::vector<DataType> f32 = {DataType::kFloat};
    registry_.Add({.op = "Relu", .types = {{"T", f32}}, .create = ref_create("Relu")});
    registry_.Add({.op = "Add", .types = {{"T", f32}}, .create = ref_create("Add")});
    registry_.Add({.op = "Conv",
                   .types = {{"T", f32}},
                   .create = ref_create("Conv"),
                   .predicate = [](const ir::Node& n) -> std::string {
                     return n.GetInt("group", 1) == 1 ? "" : "Conv: group=" + std::to_string(n.GetInt("group", 1)) +
                                                                 " is not implemented (only group=1)";
                   }});
    registry_.Add({.op = "MatMul", .types = {{"T", f32}}, .create = ref_create("MatMul"), .isa = {Isa::kAvx512vnni}});
  }
  const std::string& name() const override { return name_; }
  std::string device() const override { return "cpu"; }
  const KernelRegistry& kernels() const override { return registry_; }

 private:
  std::string name_ = "partial";
  KernelRegistry registry_;
};

void EnsurePartialBackend() {
  static const bool registered = [] {
    RegisterBackend(std::make_unique<PartialBackend>());
    return true;
  }();
  (void)registered;
}

// ---- models ------------------------------------------------------------------------------------------------

onnx::AttributeProto* Attr(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

void Ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = Attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void FloatInit(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  t->mutable_raw_data()->assign(static_cast<size_t>(n) * sizeof(float), '\0');
}

std::string WriteModel(const ModelBuilder& b, const std::string& name) {
  return testing::WriteTempFile(b.Bytes(), "check_" + name + ".onnx");
}

// One node per case, all in one opset-17 model:
//   conv      Conv group=1, float     native on partial
//   relu      Relu float              native on partial
//   conv_g2   Conv group=2            kernel layer (predicate) -> falls back to ref
//   relu_d    Relu float64            kernel layer (dtype)     -> falls back to ref
//   mm        MatMul float            hardware layer unless the ISA has avx512vnni -> falls back to ref
//   foo       com.example::Foo        graph layer (unknown domain/op) -> unsupported
//   bad_relu  Relu with attribute     graph layer (fails schema validation) -> unsupported
ModelBuilder CensusModel() {
  ModelBuilder b(17);
  auto* custom = b.proto().add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  b.InputSym("x", onnx::TensorProto::FLOAT, {-1, 4, 8, 8}, "N");
  b.Input("xd", onnx::TensorProto::DOUBLE, {2, 3});
  b.Input("a", onnx::TensorProto::FLOAT, {2, 3});
  FloatInit(b, "w", {4, 4, 3, 3});
  FloatInit(b, "wg", {4, 2, 3, 3});
  FloatInit(b, "bm", {3, 4});
  Ints(b.Node("Conv", {"x", "w"}, {"c1"}, "conv"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"}, "relu");
  auto& g2 = b.Node("Conv", {"r1", "wg"}, {"c2"}, "conv_g2");
  Ints(g2, "pads", {1, 1, 1, 1});
  ModelBuilder::IntAttr(g2, "group", 2);
  b.Node("Relu", {"xd"}, {"rd"}, "relu_d");
  b.Node("MatMul", {"a", "bm"}, {"m"}, "mm");
  b.Node("Foo", {"m"}, {"f"}, "foo").set_domain("com.example");
  ModelBuilder::IntAttr(b.Node("Relu", {"a"}, {"rb"}, "bad_relu"), "no_such_attribute", 1);
  b.Output("c2", onnx::TensorProto::FLOAT, {});
  b.Output("rd", onnx::TensorProto::DOUBLE, {});
  b.Output("f", onnx::TensorProto::FLOAT, {});
  b.Output("rb", onnx::TensorProto::FLOAT, {});
  return b;
}

CheckOptions PartialRef(const std::string& isa = "avx2,fma", bool exact = true) {
  EnsurePartialBackend();
  CheckOptions o;
  o.backends = {"partial", "ref"};
  o.isa = isa;
  o.isa_exact = exact;
  return o;
}

const NodeCheck& Find(const CheckReport& r, const std::string& name) {
  for (const auto& n : r.nodes) {
    if (n.name == name) return n;
  }
  throw InternalError("no node " + name);
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- the layers --------------------------------------------------------------------------------------------

TEST(Check, NativeNodes) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  for (const char* name : {"conv", "relu"}) {
    const NodeCheck& n = Find(r, name);
    EXPECT_EQ(n.verdict, Verdict::kNative) << name;
    EXPECT_EQ(n.backend, "partial");
    EXPECT_EQ(n.layer, FailureLayer::kNone);
    EXPECT_EQ(n.remedy, "");
    ASSERT_EQ(n.attempts.size(), 1u);
  }
  EXPECT_EQ(Find(r, "conv").kernel, "partial.Conv.1");
}

TEST(Check, KernelLayerAttributeFallsBack) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  const NodeCheck& n = Find(r, "conv_g2");
  EXPECT_EQ(n.verdict, Verdict::kFallback);
  EXPECT_EQ(n.backend, "ref");
  EXPECT_EQ(n.layer, FailureLayer::kKernel);
  EXPECT_TRUE(Contains(n.reason, "group=2")) << n.reason;
  EXPECT_EQ(n.remedy, "falls back to ref");
  ASSERT_EQ(n.attempts.size(), 2u);
  EXPECT_EQ(n.attempts[0].backend, "partial");
  EXPECT_EQ(n.attempts[1].layer, FailureLayer::kNone);
}

TEST(Check, KernelLayerDtypeFallsBack) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  const NodeCheck& n = Find(r, "relu_d");
  EXPECT_EQ(n.verdict, Verdict::kFallback);
  EXPECT_EQ(n.layer, FailureLayer::kKernel);
  EXPECT_TRUE(Contains(n.reason, "float64")) << n.reason;
  EXPECT_EQ(n.remedy, "falls back to ref");
}

TEST(Check, KernelLayerWithoutFallback) {
  CheckOptions o = PartialRef();
  o.backends = {"partial"};
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), o);
  const NodeCheck& n = Find(r, "conv_g2");
  EXPECT_EQ(n.verdict, Verdict::kUnsupported);
  EXPECT_EQ(n.backend, "");
  // A plugin cannot implement a built-in op: the remedy names the backends that have a kernel for it.
  EXPECT_TRUE(n.remedy.rfind("no kernel on partial for this opset/dtype/attribute; `ref`", 0) == 0) << n.remedy;
  EXPECT_TRUE(Contains(n.remedy, " has one: add it (--backends partial,ref)")) << n.remedy;
  EXPECT_FALSE(Contains(n.remedy, "plugin")) << n.remedy;
}

TEST(Check, HardwareLayerUnderIsa) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef("avx2,fma"));
  const NodeCheck& n = Find(r, "mm");
  EXPECT_EQ(n.verdict, Verdict::kFallback);
  EXPECT_EQ(n.layer, FailureLayer::kHardware);
  EXPECT_TRUE(Contains(n.reason, "avx512vnni")) << n.reason;
  EXPECT_TRUE(Contains(n.remedy, "falls back to ref")) << n.remedy;
  EXPECT_TRUE(Contains(n.remedy, "a CPU with avx512vnni")) << n.remedy;
  EXPECT_EQ(r.isa, "avx2,fma");

  CheckOptions only = PartialRef("avx2,fma");
  only.backends = {"partial"};
  CheckReport ur = CheckModel(WriteModel(CensusModel(), "census"), only);
  const NodeCheck& u = Find(ur, "mm");
  EXPECT_EQ(u.verdict, Verdict::kUnsupported);
  EXPECT_EQ(u.remedy, "run on a CPU with avx512vnni, or use another backend");
}

TEST(Check, HardwareLayerNativeWithTheIsa) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef("avx2,fma,avx512f,avx512vnni"));
  const NodeCheck& n = Find(r, "mm");
  EXPECT_EQ(n.verdict, Verdict::kNative);
  EXPECT_EQ(n.backend, "partial");
}

TEST(Check, IsaNarrowsTheHostLikeASession) {
  // Without isa_exact, --isa narrows this CPU: avx512vnni is available only if the host has it.
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef("avx2,avx512vnni", false));
  const bool host_has = DetectHostIsa().has(Isa::kAvx512vnni);
  EXPECT_EQ(Find(r, "mm").verdict, host_has ? Verdict::kNative : Verdict::kFallback);
  if (host_has) {
    CheckReport narrowed = CheckModel(WriteModel(CensusModel(), "census"), PartialRef("avx2", false));
    EXPECT_TRUE(Contains(Find(narrowed, "mm").remedy, "drop --isa")) << Find(narrowed, "mm").remedy;
  }
}

TEST(Check, GraphLayerCustomDomainOp) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  const NodeCheck& n = Find(r, "foo");
  EXPECT_EQ(n.verdict, Verdict::kUnsupported);
  EXPECT_EQ(n.layer, FailureLayer::kGraph);
  EXPECT_EQ(n.domain, "com.example");
  EXPECT_TRUE(Contains(n.reason, "com.example::Foo")) << n.reason;
  EXPECT_EQ(n.remedy,
            "a custom op: load the plugin that implements com.example::Foo (opset 1) with --plugin PATH, or write "
            "one (docs/plugins.md)");
  ASSERT_EQ(n.attempts.size(), 2u);  // every backend was asked
}

TEST(Check, GraphLayerValidationFailure) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  const NodeCheck& n = Find(r, "bad_relu");
  EXPECT_EQ(n.verdict, Verdict::kUnsupported);
  EXPECT_EQ(n.layer, FailureLayer::kGraph);
  EXPECT_TRUE(Contains(n.reason, "no_such_attribute")) << n.reason;
  EXPECT_TRUE(n.remedy.rfind("fix the model: ", 0) == 0) << n.remedy;
  EXPECT_TRUE(Contains(n.remedy, "no_such_attribute")) << n.remedy;
}

// An opset newer than Ferry knows is refused at import (before any pass could fold a node away), as `ferry run`
// refuses it: check reports nothing it would then have to call runnable. Nodes can still meet the graph-layer
// refusal through the registry (tests/kernels/registry_table_test.cc).
TEST(Check, OpsetNewerThanFerryKnowsIsRefusedAtImport) {
  const int64_t max = schemas::SchemaRegistry::Get().MaxOpset("");
  ASSERT_EQ(max, 28);
  for (int64_t opset : {max + 1, int64_t{1000000}}) {
    ModelBuilder b(opset);
    b.Input("x", onnx::TensorProto::FLOAT, {2});
    b.Node("Shape", {"x"}, {"y"}, "shape");  // the case: a node the optimizer folds away
    b.Output("y", onnx::TensorProto::INT64, {1});
    try {
      CheckModel(WriteModel(b, "opset_new"), PartialRef());
      ADD_FAILURE() << "opset " << opset << " was accepted";
    } catch (const UnsupportedError& e) {
      EXPECT_TRUE(Contains(e.what(), "opset " + std::to_string(opset))) << e.what();
      EXPECT_TRUE(Contains(e.what(), "newer than Ferry knows (28)")) << e.what();
    }
  }
}

// ---- summary, FLOPs, shapes ----------------------------------------------------------------------------------

TEST(Check, SummaryAndRatios) {
  CheckOptions o = PartialRef();
  o.shapes["x"] = {2, 4, 8, 8};
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), o);
  EXPECT_EQ(r.node_count, 7);
  EXPECT_EQ(r.native, 2);
  EXPECT_EQ(r.fallback, 3);
  EXPECT_EQ(r.unsupported, 2);
  EXPECT_FALSE(r.runnable());
  EXPECT_DOUBLE_EQ(r.fallback_ratio_nodes(), 5.0 / 7.0);
  // conv: 2 * |Y| * Cin*kh*kw = 2 * (2*4*8*8) * (4*3*3); conv_g2: 2 * (2*4*8*8) * (2*3*3); relu: |Y| = 512;
  // mm: 2 * (2*4) * 3; relu_d: 6; Foo, bad_relu: 0 (unknown / no inferred shape).
  const double conv = 2.0 * 512 * 36, conv_g2 = 2.0 * 512 * 18, relu = 512, mm = 48, relu_d = 6;
  EXPECT_DOUBLE_EQ(Find(r, "conv").flops, conv);
  EXPECT_DOUBLE_EQ(Find(r, "conv_g2").flops, conv_g2);
  EXPECT_DOUBLE_EQ(Find(r, "relu").flops, relu);
  EXPECT_DOUBLE_EQ(Find(r, "mm").flops, mm);
  EXPECT_DOUBLE_EQ(r.total_flops, conv + conv_g2 + relu + mm + relu_d + Find(r, "bad_relu").flops);
  EXPECT_DOUBLE_EQ(r.fallback_flops, r.total_flops - conv - relu);
  EXPECT_NEAR(r.fallback_ratio_flops(), r.fallback_flops / r.total_flops, 1e-12);
  EXPECT_EQ(r.ir_version, 8);
  EXPECT_EQ(r.producer, "ferry-tests");
  EXPECT_EQ(r.initializer_count, 3);
}

TEST(Check, ShapeOverrides) {
  // Without --shape the batch dim is symbolic: no FLOPs for the convs.
  CheckReport sym = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  EXPECT_EQ(Find(sym, "conv").flops, 0);
  EXPECT_EQ(Find(sym, "conv").input_types[0], "float32[N,4,8,8]");
  // ... and the report says so: how many nodes doing arithmetic are left out, and which inputs --shape would fix.
  // conv, relu and conv_g2 on x; bad_relu, whose invalid attribute keeps type inference off its output.
  EXPECT_EQ(sym.flops_unknown, 4);
  EXPECT_EQ(sym.symbolic_inputs, std::vector<std::string>{"x float32[N,4,8,8]"});
  const std::string text = tools::FormatCheckText(sym);
  EXPECT_NE(text.find("  not counted: " + std::to_string(sym.flops_unknown) +
                      " nodes doing arithmetic on shapes that are not static\n  (symbolic inputs: x float32[N,4,8,8]; "
                      "give --shape NAME=DIMS to count them)"),
            std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(tools::FormatCheckJson(sym));
  EXPECT_EQ(j["summary"]["flops_unknown_nodes"], sym.flops_unknown);
  EXPECT_EQ(j["summary"]["symbolic_inputs"][0], "x float32[N,4,8,8]");

  CheckOptions o = PartialRef();
  o.shapes["x"] = {3, 4, 8, 8};
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), o);
  EXPECT_EQ(Find(r, "conv").input_types[0], "float32[3,4,8,8]");
  EXPECT_EQ(Find(r, "conv").output_types[0], "float32[3,4,8,8]");
  EXPECT_DOUBLE_EQ(Find(r, "conv").flops, 2.0 * 3 * 4 * 64 * 36);
  EXPECT_EQ(r.flops_unknown, 1);  // bad_relu
  EXPECT_TRUE(r.symbolic_inputs.empty());
  EXPECT_NE(tools::FormatCheckText(r).find("not counted: 1 node doing arithmetic on shapes that are not static\n\n"),
            std::string::npos);

  auto expect_arg_error = [](const CheckOptions& bad, std::vector<std::string> needles) {
    try {
      CheckModel(WriteModel(CensusModel(), "census"), bad);
      ADD_FAILURE() << "expected InvalidArgumentError";
    } catch (const InvalidArgumentError& e) {
      for (const auto& s : needles) EXPECT_TRUE(Contains(e.what(), s)) << e.what();
    }
  };
  CheckOptions unknown = PartialRef();
  unknown.shapes["nope"] = {1};
  expect_arg_error(unknown, {"--shape nope", "no input 'nope'", "x, xd, a"});
  CheckOptions rank = PartialRef();
  rank.shapes["x"] = {1, 4, 8};
  expect_arg_error(rank, {"--shape x", "rank 4", "3 dims"});
  CheckOptions fixed = PartialRef();
  fixed.shapes["x"] = {1, 5, 8, 8};
  expect_arg_error(fixed, {"--shape x", "dimension 1", "symbolic"});
  CheckOptions weight = PartialRef();
  weight.shapes["w"] = {4, 4, 3, 3};
  expect_arg_error(weight, {"no input 'w'"});
}

TEST(Check, SubgraphNodes) {
  ModelBuilder b(17);
  b.Input("c", onnx::TensorProto::BOOL, {});
  b.Input("x", onnx::TensorProto::DOUBLE, {2});
  auto& n = b.Node("If", {"c"}, {"y"}, "if1");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = Attr(n, branch, onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(branch);
    auto* r = g->add_node();
    r->set_op_type("Relu");
    r->set_name(std::string(branch) + "_relu");
    r->add_input("x");
    r->add_output(std::string(branch) + "_y");
    auto* o = g->add_output();
    o->set_name(std::string(branch) + "_y");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  }
  b.Output("y", onnx::TensorProto::DOUBLE, {2});
  CheckReport r = CheckModel(WriteModel(b, "if"), PartialRef());
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[0].name, "if1");
  EXPECT_EQ(r.nodes[0].verdict, Verdict::kFallback);  // partial has no If
  EXPECT_EQ(r.nodes[1].graph, "main/if1:then_branch");
  EXPECT_EQ(r.nodes[2].graph, "main/if1:else_branch");
  EXPECT_EQ(r.nodes[1].verdict, Verdict::kFallback);  // float64 Relu
  EXPECT_EQ(r.nodes[1].layer, FailureLayer::kKernel);
}

// ---- never throws for model problems; only unreadable models throw ----------------------------------------

TEST(Check, TypeInferenceFailureIsAProblemNotAnException) {
  ModelBuilder b(17);
  b.Input("a", onnx::TensorProto::FLOAT, {2, 3});
  b.Input("b", onnx::TensorProto::FLOAT, {4, 5});
  b.Node("MatMul", {"a", "b"}, {"y"}, "mm_bad");
  b.Node("Relu", {"y"}, {"z"}, "after");
  b.Output("z", onnx::TensorProto::FLOAT, {});
  CheckReport r = CheckModel(WriteModel(b, "badmatmul"), PartialRef());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(Contains(r.problems[0], "type inference")) << r.problems[0];
  EXPECT_TRUE(Contains(r.problems[0], "mm_bad")) << r.problems[0];
  EXPECT_EQ(r.nodes.size(), 2u);
}

// A node reading its own output is a cycle, which check refuses as run does (it said RUNNABLE).
TEST(Check, SelfLoopIsAnInvalidModel) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("Identity", {"y"}, {"y"}, "self");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  try {
    CheckModel(WriteModel(b, "selfloop"), PartialRef());
    ADD_FAILURE() << "a self-loop was accepted";
  } catch (const InvalidModelError& e) {
    EXPECT_TRUE(Contains(e.what(), "cycle")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "node 'self' (Identity)")) << e.what();
  }
}

// A declared output type the graph does not produce is invalid (as in ONNX Runtime's type check): a session
// refuses it, so check calls the model not runnable and says why.
TEST(Check, DeclaredOutputTypeTheGraphDoesNotProduceIsNotRunnable) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  b.Output("y", onnx::TensorProto::INT64, {2});
  CheckReport r = CheckModel(WriteModel(b, "outtype"), PartialRef());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(Contains(r.problems[0], "graph output 'y'")) << r.problems[0];
  EXPECT_TRUE(Contains(r.problems[0], "int64")) << r.problems[0];
  EXPECT_TRUE(Contains(r.problems[0], "float32")) << r.problems[0];
  EXPECT_FALSE(r.runnable());
  EXPECT_NE(tools::FormatCheckText(r).find("NOT RUNNABLE"), std::string::npos);
}

// The issue: check said RUNNABLE for external data at /etc/passwd or /dev/zero, which run refuses. The weights
// check skips are validated as a session's load validates them (ir::ValidateTensorProto).
TEST(Check, ExternalDataIsValidatedAsRunValidatesIt) {
  const std::string dir = ::testing::TempDir() + "/ferry_check_ext_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir + "/zero.bin");
  std::filesystem::create_symlink("/dev/zero", dir + "/zero.bin");
  for (const std::string location : {"/etc/passwd", "/dev/zero", "zero.bin", "../passwd"}) {
    SCOPED_TRACE(location);
    ModelBuilder b(17);
    b.Input("x", onnx::TensorProto::FLOAT, {2048});
    auto* t = b.graph().add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2048);  // more than 1024 elements: check does not load it
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    b.Node("Add", {"x", "w"}, {"y"}, "add");
    b.Output("y", onnx::TensorProto::FLOAT, {2048});
    const std::string path = dir + "/model.onnx";
    std::ofstream(path, std::ios::binary) << b.Bytes();
    EXPECT_THROW(Session::Create(path), InvalidModelError);
    try {
      CheckModel(path, PartialRef());
      ADD_FAILURE() << "check accepted external data at " << location;
    } catch (const InvalidModelError& e) {
      EXPECT_TRUE(Contains(e.what(), "initializer 'w'")) << e.what();
      EXPECT_TRUE(Contains(e.what(), location.substr(location.rfind('/') + 1))) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(Check, UnreadableModelsThrow) {
  std::string path = ::testing::TempDir() + "/ferry_check_garbage.onnx";
  std::ofstream(path, std::ios::binary) << "garbage";
  EXPECT_THROW(CheckModel(path, PartialRef()), InvalidModelError);
  EXPECT_THROW(CheckModel(::testing::TempDir() + "/ferry_check_missing.onnx", PartialRef()), Error);
  CheckOptions bad = PartialRef();
  bad.backends = {"nope"};
  EXPECT_THROW(CheckModel(WriteModel(CensusModel(), "census"), bad), InvalidArgumentError);
}

// ---- weights are not loaded --------------------------------------------------------------------------------

TEST(Check, WeightsAreTypedButNotLoaded) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 2048});
  FloatInit(b, "big", {2048});  // 2048 elements: skipped
  auto* shape = b.graph().add_initializer();  // a small int64 shape tensor: loaded, shape inference reads it
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(4);
  shape->add_int64_data(1024);
  b.Node("Add", {"x", "big"}, {"s"}, "add");
  b.Node("Reshape", {"s", "shape"}, {"y"}, "reshape");
  b.Output("y", onnx::TensorProto::FLOAT, {});
  const std::string path = WriteModel(b, "weights");

  ir::ImportOptions io;
  io.load_initializer_data = false;
  ir::ImportStats stats;
  auto model = ir::ImportModelFromFile(path, io, &stats);
  EXPECT_EQ(stats.initializers, 2);
  EXPECT_EQ(stats.initializers_skipped, 1);
  EXPECT_EQ(stats.bytes_skipped, 2048 * 4);
  const ir::Value* big = model->graph->FindValue("big");
  ASSERT_NE(big, nullptr);
  EXPECT_FALSE(big->is_initializer());
  EXPECT_EQ(big->type().ToString(), "float32[2048]");
  ASSERT_NE(model->graph->FindValue("shape")->initializer(), nullptr);

  CheckReport r = CheckModel(path, PartialRef());
  EXPECT_EQ(r.initializer_count, 2);
  EXPECT_EQ(r.initializers_not_loaded, 1);
  EXPECT_EQ(r.initializer_bytes_not_loaded, 2048 * 4);
  EXPECT_EQ(Find(r, "add").input_types[1], "float32[2048]");
  EXPECT_EQ(Find(r, "reshape").output_types[0], "float32[4,1024]");  // read from the loaded shape tensor
  EXPECT_DOUBLE_EQ(Find(r, "add").flops, 4096);
}

// ---- check and run agree -----------------------------------------------------------------------------------

TEST(Check, AgreesWithPlacement) {
  for (const char* isa : {"avx2,fma", "avx2,fma,avx512f,avx512vnni"}) {
    CheckOptions o = PartialRef(isa);
    o.shapes["x"] = {1, 4, 8, 8};
    const std::string path = WriteModel(CensusModel(), "census");
    CheckReport r = CheckModel(path, o);

    // What a session does: import with weights, inline, infer, place.
    auto model = ir::ImportModelFromFile(path);
    ir::InlineModelFunctions(*model);
    runtime::InferTypes(*model);
    runtime::PlacementOptions po;
    po.backends = {FindBackend("partial"), FindBackend("ref")};
    po.target.isa = IsaSet::Parse(isa);
    runtime::Placement p = runtime::PlaceModel(*model, po);
    ASSERT_EQ(p.nodes.size() + p.unplaced.size(), r.nodes.size());
    for (const auto& n : model->graph->nodes()) {
      const NodeCheck& c = Find(r, n->name());
      auto it = p.nodes.find(n.get());
      if (it == p.nodes.end()) {
        EXPECT_EQ(c.verdict, Verdict::kUnsupported) << n->name();
      } else {
        EXPECT_EQ(c.backend, it->second.backend->name()) << n->name();
        EXPECT_EQ(c.kernel, it->second.kernel->name) << n->name();
      }
    }
  }
}

TEST(Check, SessionErrorListsTheNodesCheckCallsUnsupported) {
  CheckOptions o = PartialRef("avx2,fma", false);
  o.backends = {"partial"};
  const std::string path = WriteModel(CensusModel(), "census");
  CheckReport r = CheckModel(path, o);
  SessionOptions so;
  so.backends = {"partial"};
  so.isa = "avx2,fma";
  try {
    Session::Create(path, so);
    ADD_FAILURE() << "expected the session to refuse the model";
  } catch (const Error& e) {
    const std::string msg = e.what();
    int unsupported = 0;
    for (const auto& n : r.nodes) {
      if (n.verdict != Verdict::kUnsupported) {
        EXPECT_FALSE(Contains(msg, "'" + n.name + "'")) << n.name << " in " << msg;
        continue;
      }
      ++unsupported;
      EXPECT_TRUE(Contains(msg, "'" + n.name + "'")) << n.name << " missing from " << msg;
      EXPECT_TRUE(Contains(msg, n.reason)) << n.reason << " missing from " << msg;
    }
    EXPECT_EQ(unsupported, 5);  // all but conv and relu
    EXPECT_TRUE(Contains(msg, std::to_string(unsupported) + " node(s) cannot run")) << msg;
  }
}

TEST(Check, SessionRunsWhatCheckCallsRunnable) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {1, 2, 4, 4});
  FloatInit(b, "w", {2, 1, 3, 3});
  auto& conv = b.Node("Conv", {"x", "w"}, {"c"}, "conv_dw");
  ModelBuilder::IntAttr(conv, "group", 2);
  b.Node("Relu", {"c"}, {"y"}, "relu");
  b.Output("y", onnx::TensorProto::FLOAT, {1, 2, 2, 2});
  const std::string path = WriteModel(b, "runnable");
  CheckReport r = CheckModel(path, PartialRef());
  EXPECT_TRUE(r.runnable());
  EXPECT_EQ(Find(r, "conv_dw").backend, "ref");
  EXPECT_EQ(Find(r, "relu").backend, "partial");
  SessionOptions so;
  so.backends = {"partial", "ref"};
  auto s = Session::Create(path, so);
  auto out = s->Run({{"x", Tensor(DataType::kFloat, {1, 2, 4, 4})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.shape(), (Shape{1, 2, 2, 2}));
}

// ---- gates and output ----------------------------------------------------------------------------------------

TEST(Check, Gates) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  using tools::CheckGate;
  using tools::FailOn;
  EXPECT_TRUE(tools::GateFailures(r, CheckGate{}).empty());  // the report is the product: no gate, no failure
  EXPECT_EQ(tools::GateFailures(r, CheckGate{FailOn::kUnsupported}).size(), 1u);
  EXPECT_EQ(tools::GateFailures(r, CheckGate{FailOn::kFallback}).size(), 2u);
  EXPECT_EQ(tools::GateFailures(r, CheckGate{FailOn::kNever, 75}).size(), 0u);  // 5/7 = 71.4%
  auto over = tools::GateFailures(r, CheckGate{FailOn::kNever, 70});
  ASSERT_EQ(over.size(), 1u);
  EXPECT_TRUE(Contains(over[0], "71.4%")) << over[0];

  ModelBuilder ok(17);
  ok.Input("x", onnx::TensorProto::FLOAT, {2});
  ok.Node("Relu", {"x"}, {"y"}, "relu");
  ok.Output("y", onnx::TensorProto::FLOAT, {2});
  CheckReport clean = CheckModel(WriteModel(ok, "clean"), PartialRef());
  EXPECT_TRUE(tools::GateFailures(clean, CheckGate{FailOn::kFallback, 0}).empty());
}

TEST(Check, JsonAndText) {
  CheckReport r = CheckModel(WriteModel(CensusModel(), "census"), PartialRef());
  tools::CheckGate gate{tools::FailOn::kUnsupported};
  auto j = nlohmann::json::parse(tools::FormatCheckJson(r, &gate));
  EXPECT_EQ(j["summary"]["native"], 2);
  EXPECT_EQ(j["summary"]["fallback"], 3);
  EXPECT_EQ(j["summary"]["unsupported"], 2);
  EXPECT_EQ(j["summary"]["runnable"], false);
  EXPECT_EQ(j["summary"]["ops"]["unsupported"]["com.example::Foo"], 1);
  EXPECT_EQ(j["gate"]["exit_code"], 3);
  EXPECT_EQ(j["target"]["backends"], nlohmann::json::array({"partial", "ref"}));
  ASSERT_EQ(j["nodes"].size(), 7u);
  const auto& foo = j["nodes"][5];
  EXPECT_EQ(foo["name"], "foo");
  EXPECT_EQ(foo["verdict"], "unsupported");
  EXPECT_EQ(foo["layer"], "graph");
  EXPECT_TRUE(foo["backend"].is_null());
  EXPECT_EQ(foo["attempts"].size(), 2u);

  std::string text = tools::FormatCheckText(r);
  for (const char* s : {"NOT RUNNABLE", "conv_g2", "group=2", "falls back to ref", "--plugin PATH",
                        "problems: 2", "Conv 1, Relu 1"}) {
    EXPECT_TRUE(Contains(text, s)) << s << "\n" << text;
  }
  EXPECT_FALSE(Contains(text, "  relu  ")) << text;  // native nodes only with verbose
  EXPECT_TRUE(Contains(tools::FormatCheckText(r, true), "partial.Relu.1"));
}

// ---- backend registration ----------------------------------------------------------------------------------

TEST(RegisterBackend, FindsAndRejectsDuplicates) {
  EnsurePartialBackend();
  ASSERT_NE(FindBackend("partial"), nullptr);
  EXPECT_EQ(FindBackend("partial")->name(), "partial");
  auto names = BackendNames();
  EXPECT_EQ(names.front(), "ref");
  EXPECT_NE(std::find(names.begin(), names.end(), "partial"), names.end());
  EXPECT_THROW(RegisterBackend(std::make_unique<PartialBackend>()), InvalidArgumentError);
  EXPECT_THROW(RegisterBackend(nullptr), InvalidArgumentError);
}

}  // namespace
}  // namespace ferry
