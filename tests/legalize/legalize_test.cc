// The `legalize` pass and its users: a session on backends that lack an op fails without --legalize and runs
// (matching ref) with it; supported and frozen nodes are never rewritten; rewrites nest (a rule's op rewritten in
// turn); graph outputs keep their names; `ferry check` lists "rewrite available" for exactly the nodes the pass
// rewrites; `ferry optimize --legalize` needs a target and reports the pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "ferry/error.h"
#include "passes/pass_list.h"
#include "passes/pass_manager.h"
#include "testing/model_builder.h"
#include "tools/check.h"
#include "tools/check_html.h"
#include "tools/optimize.h"
#include "legalize_test_util.h"

namespace ferry::legalize_test {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Tensor Rand(Shape shape, double lo = -3, double hi = 3, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(DataType::kFloat, std::move(shape), rng, lo, hi);
}

// x [2, 8] -> Mish -> y (opset 18).
std::string MishModel() {
  testing::ModelBuilder b(18);
  b.Input("x", kF, {2, 8});
  b.Node("Mish", {"x"}, {"y"}, "mish");
  b.Output("y", kF, {2, 8});
  return b.Bytes();
}

// x [2, 8] -> Relu -> RMSNormalization(scale) -> Mish -> y (opset 23).
std::string MixedModel() {
  testing::ModelBuilder b(23);
  b.Input("x", kF, {2, 8});
  std::vector<float> scale(8, 0.5f);
  b.FloatInitializer("scale", {8}, scale);
  b.Node("Relu", {"x"}, {"r"}, "relu");
  b.Node("RMSNormalization", {"r", "scale"}, {"n"}, "rms");
  b.Node("Mish", {"n"}, {"y"}, "mish");
  b.Output("y", kF, {2, 8});
  return b.Bytes();
}

// x [2, 4, 3] -> GroupNormalization(scale, bias, num_groups 2) -> y (opset 21): an op the kNoGroupNorm test
// backend has no kernel for, whose rewrite (Reshape, ReduceMean, Sub, Mul, Add, Sqrt, Div) it runs. (cpu was that
// backend until it got a GroupNormalization kernel, as it was for Mish before.)
std::string GroupNormModel(bool with_rms = false) {
  testing::ModelBuilder b(with_rms ? 23 : 21);
  b.Input("x", kF, {2, 4, 3});
  b.FloatInitializer("gscale", {4}, std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f});
  b.FloatInitializer("gbias", {4}, std::vector<float>{0.1f, -0.2f, 0.3f, 0.0f});
  std::string x = "x";
  if (with_rms) {  // x -> Relu -> RMSNormalization(scale) -> GroupNormalization (opset 23)
    b.FloatInitializer("scale", {3}, std::vector<float>(3, 0.5f));
    b.Node("Relu", {"x"}, {"r"}, "relu");
    b.Node("RMSNormalization", {"r", "scale"}, {"n"}, "rms");
    x = "n";
  }
  testing::ModelBuilder::IntAttr(b.Node("GroupNormalization", {x, "gscale", "gbias"}, {"y"}, "gn"), "num_groups", 2);
  b.Output("y", kF, {2, 4, 3});
  return b.Bytes();
}

const passes::Pass& LegalizePass() {
  for (const auto& p : passes::AllPasses()) {
    if (p->name() == "legalize") return *p;
  }
  throw InternalError("no legalize pass");
}

passes::PassContext Context(const std::vector<std::string>& backends, bool legalize = true) {
  passes::PassContext ctx;
  for (const auto& name : backends) ctx.backends.push_back(FindBackend(name));
  ctx.legalize = legalize;
  return ctx;
}

void ExpectMatchesRef(const std::string& bytes, const SessionOptions& o,
                      const std::vector<std::pair<std::string, Tensor>>& feeds, double rtol = 1e-5) {
  const auto want = SessionOf(bytes, On({"ref"}))->Run(feeds);
  const auto got = SessionOf(bytes, o)->Run(feeds);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, rtol, 1e-6)) << want[i].first;
  }
}

// ---- sessions ---------------------------------------------------------------------------------------------------

TEST(LegalizeSession, GroupNormalizationRunsOnABackendWithoutItOnlyWithLegalize) {
  EnsureBareBackend();
  const std::string bytes = GroupNormModel();
  EXPECT_THROW(SessionOf(bytes, On({kNoGroupNorm}, false, false)), UnsupportedError);
  auto session = SessionOf(bytes, On({kNoGroupNorm}, true, false));
  EXPECT_FALSE(Contains(session->DumpIr(), "GroupNormalization(")) << session->DumpIr();
  for (const auto& n : session->placement().nodes) EXPECT_EQ(n.backend, kNoGroupNorm) << n.name;
  ExpectMatchesRef(bytes, On({kNoGroupNorm}, true, false), {{"x", Rand({2, 4, 3})}});
  // The same at every level: the pass runs at -O0 and -O3 alike.
  SessionOptions o3 = On({kNoGroupNorm}, true, false);
  o3.optimization_level = 3;
  ExpectMatchesRef(bytes, o3, {{"x", Rand({2, 4, 3})}});
}

TEST(LegalizeSession, WithoutFallbackTheFirstBackendIsTheTarget) {
  // A backend without GroupNormalization, then ref, with --no-fallback: ref could run GroupNormalization but may
  // not; --legalize rewrites it for the first backend.
  EnsureBareBackend();
  const std::string bytes = GroupNormModel();
  EXPECT_THROW(SessionOf(bytes, On({kNoGroupNorm, "ref"}, false, false)), UnsupportedError);
  ExpectMatchesRef(bytes, On({kNoGroupNorm, "ref"}, true, false), {{"x", Rand({2, 4, 3})}});
}

TEST(LegalizeSession, SupportedNodesAreNeverRewritten) {
  // cpu,ref with fallback: ref runs Mish, so it stays (and falls back).
  auto session = SessionOf(MishModel(), On({"cpu", "ref"}, true, true));
  EXPECT_TRUE(Contains(session->DumpIr(), "Mish(")) << session->DumpIr();
  // LayerNormalization, which cpu runs, stays on cpu alone.
  testing::ModelBuilder b(17);
  b.Input("x", kF, {2, 8});
  b.FloatInitializer("s", {8}, std::vector<float>(8, 1.0f));
  b.Node("LayerNormalization", {"x", "s"}, {"y"}, "ln");
  b.Output("y", kF, {2, 8});
  auto ln = SessionOf(b.Bytes(), On({"cpu"}, true, false));
  EXPECT_TRUE(Contains(ln->DumpIr(), "LayerNormalization(")) << ln->DumpIr();
}

TEST(LegalizeSession, RotaryEmbeddingAndCausalAttentionRunOnCpuWithoutAvx2OnlyWithLegalize) {
  // cpu's RotaryEmbedding and Attention kernels need AVX2 (hardware layer); under --isa none their rewrites run on
  // the scalar and oneDNN kernels. With the ISA, cpu runs both as written.
  testing::ModelBuilder b(23);
  b.Input("x", kF, {1, 2, 4, 8}).Input("k", kF, {1, 2, 4, 8}).Input("v", kF, {1, 2, 4, 8});
  std::vector<float> cos(4 * 4), sin(4 * 4);
  for (size_t i = 0; i < cos.size(); ++i) {
    cos[i] = std::cos(0.3f * static_cast<float>(i));
    sin[i] = std::sin(0.3f * static_cast<float>(i));
  }
  b.FloatInitializer("cos", {1, 4, 4}, cos).FloatInitializer("sin", {1, 4, 4}, sin);
  b.Node("RotaryEmbedding", {"x", "cos", "sin"}, {"q"}, "rope");
  testing::ModelBuilder::IntAttr(b.Node("Attention", {"q", "k", "v"}, {"y"}, "attn"), "is_causal", 1);
  b.Output("y", kF, {1, 2, 4, 8});
  const std::string bytes = b.Bytes();
  SessionOptions plain = On({"cpu"}, false, false), legal = On({"cpu"}, true, false);
  plain.isa = legal.isa = "none";
  EXPECT_THROW(SessionOf(bytes, plain), UnsupportedError);
  if (DefaultIsa().contains(IsaSet::Parse("avx2,fma"))) {
    auto native = SessionOf(bytes, On({"cpu"}, true, false));
    EXPECT_TRUE(Contains(native->DumpIr(), "RotaryEmbedding(")) << native->DumpIr();
  }
  ExpectMatchesRef(bytes, legal,
                   {{"x", Rand({1, 2, 4, 8})},
                    {"k", Rand({1, 2, 4, 8}, -3, 3, 2)},
                    {"v", Rand({1, 2, 4, 8}, -3, 3, 3)}},
                   1e-4);
}

// ---- the pass ---------------------------------------------------------------------------------------------------

TEST(LegalizePass, RewritesNestAndTheSecondRunChangesNothing) {
  // ai.ferry::FusedMatMul with HardSwish on a backend with neither: FusedMatMul -> MatMul, Add, HardSwish (an op
  // at opset 17), then HardSwish -> Mul, Add, Clip, Mul. The graph output keeps its name.
  EnsureBareBackend();
  OpTest t;
  t.op = "FusedMatMul";
  t.domain = "ai.ferry";
  t.opset = 1;
  t.inputs = {In("a", Rand({3, 5})), Const("b", Rand({5, 4})), Const("c", Rand({4}))};
  t.attributes = {Str("activation", "HardSwish")};
  const std::string bytes = WithOnnxImport(testing::OneNodeModel(t), 17);
  auto model = Import(bytes);
  const passes::PassContext ctx = Context({kBare});
  EXPECT_TRUE(LegalizePass().Apply(*model, ctx));
  EXPECT_EQ(OpList(*model), "MatMul Add Mul Add Clip Mul");
  EXPECT_EQ(model->graph->outputs()[0]->name(), "y0");
  EXPECT_EQ(model->graph->outputs()[0]->producer()->op_type(), "Mul");
  passes::VerifyGraph(*model->graph, "legalize");
  const std::string dump = ir::DumpGraph(*model->graph);
  EXPECT_FALSE(LegalizePass().Apply(*model, ctx));
  EXPECT_EQ(ir::DumpGraph(*model->graph), dump);
  // And it computes what the fused op does.
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"a", t.inputs[0].value}};
  const auto want = SessionOf(bytes, On({"ref"}))->Run(feeds);
  const auto got = SessionOf(ir::ExportModelBytes(*model), On({kBare}))->Run(feeds);
  EXPECT_TRUE(testing::TensorsClose(got[0].second, want[0].second, 1e-5, 1e-6));
}

TEST(LegalizePass, DoesNothingUnlessAskedWithTargets) {
  auto model = Import(MishModel());
  EXPECT_FALSE(LegalizePass().Apply(*model, Context({"cpu"}, false)));
  EXPECT_FALSE(LegalizePass().Apply(*model, Context({}, true)));  // portable mode: no backend to legalize for
  EXPECT_EQ(OpList(*model), "Mish");
  EXPECT_EQ(LegalizePass().level(), 0);
  EXPECT_EQ(passes::AllPasses().front()->name(), "legalize");
}

TEST(LegalizePass, FrozenNodeIsLeftAlone) {
  auto model = Import(MishModel());
  passes::PassContext ctx = Context({"cpu"});
  ctx.frozen = {"mish"};
  EXPECT_FALSE(LegalizePass().Apply(*model, ctx));
  ctx.frozen = {"Mish"};
  EXPECT_FALSE(LegalizePass().Apply(*model, ctx));
  EXPECT_EQ(OpList(*model), "Mish");
}

TEST(LegalizePass, RewritesOnlyWhatTheTargetsCanThenRun) {
  // On a backend without Mish, RMSNormalization and ReduceMean: Mish is rewritten; RMSNormalization is not (its
  // rewrite needs ReduceMean), and the plan says why.
  EnsureBareBackend();
  auto model = Import(MixedModel());
  const legalize::LegalizeTarget target{{FindBackend(kNoReduce)}, Target()};
  const ir::Node* rms = model->graph->nodes()[1].get();
  const legalize::RewritePlan plan = legalize::PlanRewrite(*model, *rms, target);
  EXPECT_EQ(plan.decomposition, nullptr);
  EXPECT_TRUE(Contains(plan.reason, "it makes ReduceMean, which no target backend (legalize_noreduce) runs"))
      << plan.reason;
  EXPECT_TRUE(LegalizePass().Apply(*model, Context({kNoReduce})));
  EXPECT_EQ(OpList(*model), "Relu RMSNormalization Clip Exp Add Mul Add Div Mul");
}

TEST(LegalizePass, RewritesInsideSubgraphs) {
  // If(c) { Mish(x) } else { Relu(x) }, x read from the outer scope, on a backend without Mish.
  EnsureBareBackend();
  testing::ModelBuilder b(18);
  b.Input("c", onnx::TensorProto::BOOL, {}).Input("x", kF, {2, 4});
  onnx::NodeProto& node = b.Node("If", {"c"}, {"y"}, "if");
  for (const auto& [attr, op] : {std::pair<std::string, std::string>{"then_branch", "Mish"}, {"else_branch", "Relu"}}) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(attr);
    onnx::NodeProto* inner = g->add_node();
    inner->set_op_type(op);
    inner->set_name(attr + "_op");
    inner->add_input("x");
    inner->add_output(attr + "_out");
    onnx::ValueInfoProto* out = g->add_output();
    out->set_name(attr + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  }
  b.Output("y", kF, {2, 4});
  auto model = Import(b.Bytes());
  EXPECT_TRUE(LegalizePass().Apply(*model, Context({kNoReduce})));
  const ir::Graph& then_branch = *model->graph->nodes()[0]->GetGraph("then_branch");
  std::string ops;
  for (const auto& n : then_branch.nodes()) ops += (ops.empty() ? "" : " ") + n->op_type();
  EXPECT_EQ(ops, "Clip Exp Add Mul Add Div Mul");
  EXPECT_EQ(then_branch.outputs()[0]->name(), "then_branch_out");
  Tensor cond(DataType::kBool, {});
  cond.data<bool>()[0] = true;
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"c", cond}, {"x", Rand({2, 4})}};
  const auto want = SessionOf(b.Bytes(), On({"ref"}))->Run(feeds);
  const auto got = SessionOf(ir::ExportModelBytes(*model), On({kNoReduce}, false, false))->Run(feeds);
  EXPECT_TRUE(testing::TensorsClose(got[0].second, want[0].second, 1e-5, 1e-6));
}

TEST(LegalizePass, ThroughTheOptimizerAtLevelZero) {
  EnsureBareBackend();
  auto model = Import(MixedModel());
  passes::PassContext ctx = Context({kBare});
  ctx.level = 0;
  const passes::PassReport report = passes::OptimizeModel(*model, ctx);
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_EQ(report.runs[0].name, "legalize");
  EXPECT_TRUE(report.runs[0].changed);
  EXPECT_EQ(report.runs[0].op_delta.count("Mish"), 1u);
  EXPECT_EQ(report.runs[0].op_delta.at("RMSNormalization"), -1);
}

// ---- ferry check and ferry optimize -----------------------------------------------------------------------------

TEST(LegalizeCheck, ListsTheRewriteForTheNodesThePassRewrites) {
  EnsureBareBackend();
  const std::string path = testing::WriteTempFile(MixedModel(), "mixed.onnx");
  tools::CheckOptions o;
  o.backends = {kNoReduce};
  const tools::CheckReport r = tools::CheckModel(path, o);
  EXPECT_EQ(r.unsupported, 2);
  EXPECT_EQ(r.rewritable, 1);
  EXPECT_FALSE(r.runnable());  // the verdict is on the model as written
  for (const tools::NodeCheck& n : r.nodes) {
    if (n.name == "mish") {
      EXPECT_EQ(n.rewrite, "Mish -> Clip, Exp, Add, Mul, Add, Div, Mul");
      EXPECT_EQ(n.remedy.rfind("rewrite available: Mish -> Clip, Exp, Add, Mul, Add, Div, Mul (ferry optimize "
                               "--legalize / ferry run --legalize)", 0),
                0u)
          << n.remedy;
    } else if (n.name == "rms") {
      EXPECT_EQ(n.rewrite, "");
      EXPECT_FALSE(Contains(n.remedy, "rewrite available")) << n.remedy;
      EXPECT_TRUE(Contains(n.remedy, "--legalize cannot: it makes ReduceMean, which no target backend "
                                     "(legalize_noreduce) runs"))
          << n.remedy;
    }
  }
  const std::string text = tools::FormatCheckText(r);
  EXPECT_TRUE(Contains(text, "2 unsupported (1 with a rewrite available: --legalize)")) << text;
  EXPECT_TRUE(Contains(text, "fix: rewrite available: Mish -> ")) << text;
  const std::string json = tools::FormatCheckJson(r);
  EXPECT_TRUE(Contains(json, "\"rewrite_available\": 1")) << json;
  EXPECT_TRUE(Contains(json, "\"rewrite\": \"Mish -> Clip, Exp, Add, Mul, Add, Div, Mul\"")) << json;
  const std::string html = tools::CheckHtml(r);
  EXPECT_TRUE(Contains(html, "1 with a rewrite available (--legalize)"));
  EXPECT_TRUE(Contains(html, "rewrite available: Mish -&gt; Clip"));
}

TEST(LegalizeCheck, WithoutFallbackTheRewriteIsForTheFirstBackend) {
  EnsureBareBackend();
  const std::string path = testing::WriteTempFile(GroupNormModel(), "groupnorm.onnx");
  tools::CheckOptions o;
  o.backends = {kNoGroupNorm, "ref"};
  EXPECT_EQ(tools::CheckModel(path, o).rewritable, 0);  // ref runs it: a fallback, nothing to rewrite
  o.allow_fallback = false;
  const tools::CheckReport r = tools::CheckModel(path, o);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.rewritable, 1);
  EXPECT_TRUE(Contains(r.nodes[0].remedy, "; or only ref can run it")) << r.nodes[0].remedy;
}

TEST(LegalizeOptimize, NeedsATargetAndReportsThePass) {
  tools::OptimizeOptions o;
  o.legalize = true;
  try {
    tools::ValidateOptimizeOptions(o);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_TRUE(Contains(e.what(), "--legalize needs a --target")) << e.what();
  }
  EnsureBareBackend();
  const std::string path = testing::WriteTempFile(GroupNormModel(true), "mixed.onnx");
  o.targets = {kNoGroupNorm};
  const tools::OptimizeResult r = tools::OptimizeModelFile(path, o);
  ASSERT_FALSE(r.passes.runs.empty());
  EXPECT_EQ(r.passes.runs[0].name, "legalize");
  EXPECT_TRUE(r.passes.runs[0].changed);
  EXPECT_EQ(r.ops_after.count("GroupNormalization"), 0u);
  EXPECT_EQ(r.ops_after.count("RMSNormalization"), 1u);
  EXPECT_TRUE(Contains(tools::FormatOptimizeText(r), "-1 GroupNormalization")) << tools::FormatOptimizeText(r);
}

}  // namespace
}  // namespace ferry::legalize_test

namespace ferry::legalize_test {
namespace {

// A generated real model (build/test-models, see tests/models/CMakeLists.txt; skipped when absent) optimized for
// cpu,ref, so that it holds Ferry's fused ops, then legalized for a backend with none of them: it computes what the
// fused model does.
TEST(LegalizeModels, FusedTransformerRunsLegalizedOnABareBackend) {
  const std::string path = std::string(FERRY_BUILD_DIR) + "/test-models/bert_encoder/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  EnsureBareBackend();
  tools::OptimizeOptions o;
  o.targets = {"cpu", "ref"};
  tools::OptimizeResult fused = tools::OptimizeModelFile(path, o);
  int ferry_ops = 0;
  for (const auto& [op, count] : fused.ops_after) ferry_ops += op.rfind("ai.ferry::", 0) == 0 ? count : 0;
  ASSERT_GT(ferry_ops, 0);
  const std::string fused_bytes = ir::ExportModelBytes(*fused.model);
  auto model = Import(fused_bytes);
  const legalize::LegalizeResult r = legalize::Legalize(*model, {{FindBackend(kBare)}, Target()});
  std::cout << "  " << ferry_ops << " ai.ferry ops; " << r.rewritten << " rewrites; nodes " << fused.nodes_after
            << " -> " << model->graph->nodes().size() << "\n";
  for (const auto& n : model->graph->nodes()) EXPECT_TRUE(legalize::Supported(*n, {{FindBackend(kBare)}, Target()}));
  std::mt19937 rng(5);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const ir::Value* v : model->graph->RequiredInputs()) {
    Shape shape;
    for (const ir::Dim& d : *v->type().shape) shape.push_back(d.is_static() ? d.value : 2);
    feeds.push_back({v->name(), testing::RandomTensor(v->type().elem_type, shape, rng, 0, 1)});
  }
  const auto want = SessionOf(fused_bytes, On({"cpu", "ref"}))->Run(feeds);
  const auto got = SessionOf(ir::ExportModelBytes(*model), On({kBare}))->Run(feeds);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, 1e-4, 1e-4)) << want[i].first;
  }
}

}  // namespace
}  // namespace ferry::legalize_test
