// The level-1 cleanup passes (eliminate_identity, fold_constants, eliminate_common_subexpressions): before/expected
// IR, idempotence, the cases they must leave alone, and equal results at level 1 and level 0.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "backends/backend.h"
#include "ferry/session.h"
#include "ir/dump.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "passes/cleanup_util.h"
#include "passes/pass_manager.h"
#include "runtime/type_inference.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::ModelBuilder;

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::unique_ptr<ir::Model> Load(const std::string& bytes) {
  auto model = ir::ImportModelFromBytes(AsBytes(bytes));
  runtime::InferTypes(*model);
  return model;
}

passes::PassContext Context(std::set<std::string, std::less<>> frozen = {},
                            std::vector<std::string> backends = {"cpu", "ref"}) {
  passes::PassContext ctx;
  ctx.level = 1;
  for (const auto& name : backends) ctx.backends.push_back(FindBackend(name));
  ctx.frozen = std::move(frozen);
  return ctx;
}

const passes::Pass& PassNamed(std::string_view name) {
  for (const auto& p : passes::AllPasses()) {
    if (p->name() == name) return *p;
  }
  throw InternalError("no pass " + std::string(name));
}

// DumpGraph without the "# node name, opset" comments.
std::string Dump(const ir::Model& m) {
  std::istringstream in(ir::DumpGraph(*m.graph));
  std::string out, line;
  while (std::getline(in, line)) {
    const size_t hash = line.find("   # ");
    if (hash != std::string::npos) line.resize(hash);
    out += line + "\n";
  }
  return out;
}

// Applies pass `name` to the model in `bytes` and returns the dump; checks that the graph verifies and that a second
// application changes nothing (idempotence). `changed`: what the first application must return.
std::string Cleaned(std::string_view name, const std::string& bytes, bool changed = true,
                    std::set<std::string, std::less<>> frozen = {}) {
  auto m = Load(bytes);
  const auto ctx = Context(std::move(frozen));
  const std::string before = Dump(*m);
  EXPECT_EQ(PassNamed(name).Apply(*m, ctx), changed) << before;
  EXPECT_NO_THROW(passes::VerifyGraph(*m->graph, std::string(name)));
  const std::string after = Dump(*m);
  if (!changed) {
    EXPECT_EQ(after, before);
  }
  EXPECT_FALSE(PassNamed(name).Apply(*m, ctx)) << "second application changed:\n" << after;
  EXPECT_EQ(Dump(*m), after);
  return after;
}

std::unique_ptr<ir::Model> OptimizedAt(const std::string& bytes, int level,
                                       std::set<std::string, std::less<>> frozen = {}) {
  auto m = Load(bytes);
  auto ctx = Context(std::move(frozen));
  ctx.level = level;
  passes::OptimizeModel(*m, ctx);
  return m;
}

size_t CountOps(const ir::Model& m, const std::string& op) {
  size_t n = 0;
  for (const auto& node : m.graph->nodes()) n += node->op_type() == op;
  return n;
}

// Runs `bytes` at level 0 and at level 1 on random inputs, on backends ref and cpu,ref, and expects equal outputs.
void ExpectSameAtLevel1(const std::string& bytes, double tol = 0) {
  for (const std::vector<std::string>& backends : {std::vector<std::string>{"ref"}, {"cpu", "ref"}}) {
    SCOPED_TRACE(backends.size() == 1 ? "ref" : "cpu,ref");
    SessionOptions o;
    o.threads = 1;
    o.backends = backends;
    o.optimization_level = 0;
    auto base = Session::CreateFromBytes(AsBytes(bytes), o);
    o.optimization_level = 1;
    auto opt = Session::CreateFromBytes(AsBytes(bytes), o);
    std::mt19937 rng(5);
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const IoInfo& in : base->inputs()) {
      feeds.emplace_back(in.name, testing::RandomTensor(in.dtype, Shape(in.dims.begin(), in.dims.end()), rng));
    }
    const auto want = base->Run(feeds);
    const auto got = opt->Run(feeds);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].first, want[i].first);
      EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, tol, tol)) << "output " << want[i].first;
    }
  }
}

void AddInts(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void AddFloat(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// A Constant node `name` holding an int64 tensor.
void ConstantInts(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> v) {
  auto& c = b.Node("Constant", {}, {name}, name + "_node");
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) a->mutable_t()->add_dims(d);
  for (int64_t x : v) a->mutable_t()->add_int64_data(x);
}

void BoolInitializer(ModelBuilder& b, const std::string& name, bool v) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(v ? 1 : 0);
}

std::vector<float> Iota(size_t n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * scale - 1.0f;
  return v;
}

// ---- eliminate_identity ---------------------------------------------------------------------------------------

// x -> Identity -> Dropout -> Cast(float) -> Reshape(same shape) -> Flatten(axis 1 of a 2-D) -> Squeeze -> Relu.
std::string NoOpChain() {
  ModelBuilder b(17);
  b.Input("x", kF, {6, 4});
  b.Int64Initializer("same", {2}, {6, 4});
  b.Node("Identity", {"x"}, {"a"});
  b.Node("Dropout", {"a"}, {"d"});
  ModelBuilder::IntAttr(b.Node("Cast", {"d"}, {"c"}), "to", onnx::TensorProto::FLOAT);
  b.Node("Reshape", {"c", "same"}, {"r"});
  b.Node("Flatten", {"r"}, {"f"});
  b.Node("Squeeze", {"f"}, {"s"});
  b.Node("Relu", {"s"}, {"y"});
  b.Output("y", kF, {6, 4});
  return b.Bytes();
}

TEST(EliminateIdentity, RemovesNodesThatComputeTheirInput) {
  EXPECT_EQ(Cleaned("eliminate_identity", NoOpChain()),
            "graph g (x: float32[6,4]) -> (y: float32[6,4]) {\n"
            "  %y = Relu(%x)\n"
            "}\n");
  ExpectSameAtLevel1(NoOpChain());
}

TEST(EliminateIdentity, InferenceDropoutOfEveryOpsetAndCastLike) {
  ModelBuilder b(15);
  b.Input("x", kF, {3, 5});
  b.FloatInitializer("ratio", {}, {0.3f});
  BoolInitializer(b, "off", false);
  b.Node("Dropout", {"x", "ratio", "off"}, {"d1", "mask"});  // constant false training_mode; mask unread
  b.Node("Dropout", {"d1", "ratio"}, {"d2"});                  // no training_mode
  b.Node("CastLike", {"d2", "x"}, {"c"});
  b.Node("Sigmoid", {"c"}, {"y"});
  b.Output("y", kF, {3, 5});
  EXPECT_EQ(Cleaned("eliminate_identity", b.Bytes()),
            "graph g (x: float32[3,5]) -> (y: float32[3,5]) {\n"
            "  %y = Sigmoid(%x)\n"
            "}\n");
  ExpectSameAtLevel1(b.Bytes());

  ModelBuilder old(7);  // opset 7: Dropout is inference only
  old.Input("x", kF, {3, 5});
  AddFloat(old.Node("Dropout", {"x"}, {"d"}), "ratio", 0.4f);
  old.Node("Relu", {"d"}, {"y"});
  old.Output("y", kF, {3, 5});
  EXPECT_EQ(Cleaned("eliminate_identity", old.Bytes()),
            "graph g (x: float32[3,5]) -> (y: float32[3,5]) {\n"
            "  %y = Relu(%x)\n"
            "}\n");
}

TEST(EliminateIdentity, ShortensReshapeChains) {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3, 4});
  b.Int64Initializer("s1", {2}, {6, 4});
  b.Int64Initializer("s2", {2}, {4, -1});
  b.Int64Initializer("s3", {1}, {24});
  b.Node("Reshape", {"x", "s1"}, {"r1"});
  b.Node("Reshape", {"r1", "s2"}, {"r2"});
  b.Node("Flatten", {"r2"}, {"f"});
  b.Node("Reshape", {"f", "s3"}, {"y"});
  b.Output("y", kF, {24});
  EXPECT_EQ(Cleaned("eliminate_identity", b.Bytes()),
            "graph g (x: float32[2,3,4]) -> (y: float32[24]) {\n"
            "  %s3 = initializer int64[1]\n"
            "  %y = Reshape(%x, %s3)\n"
            "}\n");
  ExpectSameAtLevel1(b.Bytes());
}

TEST(EliminateIdentity, ReshapeChainsLeftAlone) {
  // The outer shape has a 0 entry (copies a dim of the inner result); the inner result has a second reader.
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3, 4});
  b.Int64Initializer("s1", {2}, {6, 4});
  b.Int64Initializer("s2", {3}, {0, 2, 2});
  b.Int64Initializer("s3", {1}, {-1});
  b.Node("Reshape", {"x", "s1"}, {"r1"});
  b.Node("Reshape", {"r1", "s2"}, {"y"});
  b.Node("Reshape", {"x", "s1"}, {"r3"});
  b.Node("Reshape", {"r3", "s3"}, {"z"});
  b.Node("Relu", {"r3"}, {"w"});
  b.Output("y", kF, {6, 2, 2});
  b.Output("z", kF, {24});
  b.Output("w", kF, {6, 4});
  Cleaned("eliminate_identity", b.Bytes(), false);
}

TEST(EliminateIdentity, GraphOutputKeepsItsName) {
  // Relu -> Identity -> y (a graph output): the Relu is rebuilt to write y; its other reader reads y.
  ModelBuilder b(17);
  b.Input("x", kF, {4, 4});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Identity", {"r"}, {"y"});
  b.Node("Neg", {"r"}, {"z"});
  b.Output("y", kF, {4, 4});
  b.Output("z", kF, {4, 4});
  EXPECT_EQ(Cleaned("eliminate_identity", b.Bytes()),
            "graph g (x: float32[4,4]) -> (y: float32[4,4], z: float32[4,4]) {\n"
            "  %y = Relu(%x)\n"
            "  %z = Neg(%y)\n"
            "}\n");
  ExpectSameAtLevel1(b.Bytes());
}

TEST(EliminateIdentity, NodeBetweenTwoGraphVisibleNamesStays) {
  ModelBuilder b(17);
  b.Input("x", kF, {4});
  b.FloatInitializer("w", {4}, {1, 2, 3, 4});
  b.Node("Identity", {"x"}, {"y1"});  // graph input -> graph output
  b.Node("Identity", {"w"}, {"y2"});  // initializer -> graph output
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Identity", {"r"}, {"y3"});  // graph output -> graph output
  b.Output("y1", kF, {4});
  b.Output("y2", kF, {4});
  b.Output("y3", kF, {4});
  b.Output("r", kF, {4});
  Cleaned("eliminate_identity", b.Bytes(), false);
  ExpectSameAtLevel1(b.Bytes());
}

TEST(EliminateIdentity, LeavesAloneWhatIsNotAnIdentity) {
  ModelBuilder b(17);
  b.Input("x", kF, {3, 5});
  b.Input("train", kBool, {});
  b.InputSym("s", kF, {-1, 5}, "N");
  b.Int64Initializer("shape", {2}, {-1, 5});
  b.Node("Identity", {"x"}, {"i"}, "pinned");                   // frozen
  b.Node("Dropout", {"i", "", "train"}, {"d"});                  // training mode not known
  b.Node("Dropout", {"i"}, {"d2", "mask"});                      // mask read
  ModelBuilder::IntAttr(b.Node("Cast", {"d2"}, {"c"}), "to", onnx::TensorProto::DOUBLE);  // another dtype
  b.Node("Reshape", {"s", "shape"}, {"r"});                      // symbolic dims: not provably the same
  b.Output("d", kF, {3, 5});
  b.Output("mask", kBool, {3, 5});
  b.Output("c", onnx::TensorProto::DOUBLE, {3, 5});
  b.Output("r", kF, {});
  Cleaned("eliminate_identity", b.Bytes(), false, {"pinned"});
}

// An If whose then-branch reads the Identity's output and whose else-branch returns it (outer-scope readers).
// `shadow`: the then-branch names its own result "r", as the Identity's input is named outside.
std::string IdentityReadBySubgraphs(bool shadow = false) {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3});
  b.Input("cond", kBool, {});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Identity", {"r"}, {"i"});
  auto& n = b.Node("If", {"cond"}, {"y"}, "If_1");
  auto branch = [&](const std::string& attr, bool neg) {
    auto* a = n.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(attr);
    std::string out = "i";
    if (neg) {
      auto* node = g->add_node();
      node->set_op_type("Neg");
      node->set_name("Neg_then");
      node->add_input("i");
      node->add_output(shadow ? "r" : "t");
      out = shadow ? "r" : "t";
    }
    auto* o = g->add_output();
    o->set_name(out);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  };
  branch("then_branch", true);
  branch("else_branch", false);
  b.Output("y", kF, {2, 3});
  return b.Bytes();
}

TEST(EliminateIdentity, OuterScopeReadersAreRedirected) {
  const std::string bytes = IdentityReadBySubgraphs();
  auto m = Load(bytes);
  ASSERT_TRUE(PassNamed("eliminate_identity").Apply(*m, Context()));
  EXPECT_EQ(CountOps(*m, "Identity"), 0u);
  const ir::Node* if_node = m->graph->nodes().back().get();
  ASSERT_EQ(if_node->op_type(), "If");
  const ir::Value* r = m->graph->FindValue("r");
  EXPECT_EQ(if_node->GetGraph("then_branch")->nodes()[0]->input(0), r);
  EXPECT_EQ(if_node->GetGraph("else_branch")->outputs()[0], r);
  EXPECT_EQ(m->graph->FindValue("i"), nullptr);
  // Both branches give the same results as before.
  for (bool c : {true, false}) {
    SessionOptions o;
    o.backends = {"ref"};
    o.optimization_level = 0;
    auto base = Session::CreateFromBytes(AsBytes(bytes), o);
    o.optimization_level = 1;
    auto opt = Session::CreateFromBytes(AsBytes(bytes), o);
    std::mt19937 rng(3);
    const Tensor x = testing::RandomTensor(DataType::kFloat, {2, 3}, rng);
    const Tensor cond = Tensor::FromVector<bool>(DataType::kBool, {}, {c});
    const auto want = base->Run({{"x", x}, {"cond", cond}});
    const auto got = opt->Run({{"x", x}, {"cond", cond}});
    EXPECT_TRUE(testing::TensorsClose(got[0].second, want[0].second, 0, 0));
  }
}

TEST(EliminateIdentity, OuterScopeReaderThatWouldSeeAnotherValueKeepsTheNode) {
  // Inside the then-branch "r" is the branch's own value: its read of the Identity's output cannot become "r".
  const std::string bytes = IdentityReadBySubgraphs(true);
  auto m = Load(bytes);
  PassNamed("eliminate_identity").Apply(*m, Context());
  EXPECT_EQ(CountOps(*m, "Identity"), 1u);
  EXPECT_NO_THROW(passes::VerifyGraph(*m->graph, "eliminate_identity"));
  SessionOptions o;
  o.backends = {"ref"};
  o.optimization_level = 1;
  auto opt = Session::CreateFromBytes(AsBytes(bytes), o);
  const Tensor x = Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {-1, 2, -3, 4, -5, 6});
  const auto out = opt->Run({{"x", x}, {"cond", Tensor::FromVector<bool>(DataType::kBool, {}, {true})}});
  EXPECT_EQ(out[0].second.data<float>()[0], 0.0f);   // -relu(-1)
  EXPECT_EQ(out[0].second.data<float>()[1], -2.0f);  // -relu(2)
}

// ---- fold_constants -------------------------------------------------------------------------------------------

// MatMul(x, Transpose(w)), and a target shape computed from x's static shape: Shape -> Gather -> Unsqueeze ->
// Concat(., [-1]) -> Reshape, with Constant nodes.
std::string ShapeComputation() {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3, 4});
  b.FloatInitializer("w", {5, 4}, Iota(20));
  b.Int64Initializer("minus1", {1}, {-1});
  ConstantInts(b, "i0", {}, {0});
  ConstantInts(b, "axes", {1}, {0});
  AddInts(b.Node("Transpose", {"w"}, {"wt"}), "perm", {1, 0});
  b.Node("MatMul", {"x", "wt"}, {"m"});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Gather", {"s", "i0"}, {"d0"});
  b.Node("Unsqueeze", {"d0", "axes"}, {"u"});
  ModelBuilder::IntAttr(b.Node("Concat", {"u", "minus1"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"m", "target"}, {"y"});
  b.Output("y", kF, {2, 15});
  return b.Bytes();
}

TEST(FoldConstants, WeightsAndShapeComputationsFold) {
  EXPECT_EQ(Cleaned("fold_constants", ShapeComputation()),
            "graph g (x: float32[2,3,4]) -> (y: float32[2,15]) {\n"
            "  %wt = initializer float32[4,5]\n"
            "  %target = initializer int64[2]\n"
            "  %m = MatMul(%x, %wt)\n"
            "  %y = Reshape(%m, %target)\n"
            "}\n");
  auto m = Load(ShapeComputation());
  PassNamed("fold_constants").Apply(*m, Context());
  const Tensor* target = m->graph->FindValue("target")->initializer();
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(std::vector<int64_t>(target->data<int64_t>(), target->data<int64_t>() + 2), (std::vector<int64_t>{2, -1}));
  const Tensor* wt = m->graph->FindValue("wt")->initializer();
  EXPECT_EQ(wt->data<float>()[1], Iota(20)[4]);  // wt[0][1] = w[1][0]
  ExpectSameAtLevel1(ShapeComputation());
}

TEST(FoldConstants, ShapeSliceAndSize) {
  ModelBuilder b(15);
  b.Input("x", kF, {2, 3, 4, 5});
  auto& shape = b.Node("Shape", {"x"}, {"s"});
  ModelBuilder::IntAttr(shape, "start", 1);
  ModelBuilder::IntAttr(shape, "end", -1);
  b.Node("Size", {"x"}, {"n"});
  b.Node("Relu", {"x"}, {"r"});
  b.Output("s", kI64, {2});
  b.Output("n", kI64, {});
  b.Output("r", kF, {2, 3, 4, 5});
  auto m = Load(b.Bytes());
  ASSERT_TRUE(PassNamed("fold_constants").Apply(*m, Context()));
  EXPECT_EQ(m->graph->nodes().size(), 1u);
  const Tensor* s = m->graph->FindValue("s")->initializer();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(std::vector<int64_t>(s->data<int64_t>(), s->data<int64_t>() + s->size()), (std::vector<int64_t>{3, 4}));
  const Tensor* n = m->graph->FindValue("n")->initializer();
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->rank(), 0);
  EXPECT_EQ(n->data<int64_t>()[0], 120);
  ExpectSameAtLevel1(b.Bytes());
}

// Folded graph outputs: a Constant node's output and an Add of two constants.
std::string ConstantGraphOutputs() {
  ModelBuilder b(17);
  b.Input("x", kF, {3});
  b.FloatInitializer("a", {3}, {1, 2, 3});
  b.FloatInitializer("b", {3}, {0.5f, 0.25f, 0.125f});
  ConstantInts(b, "k", {2}, {7, 8});
  b.Node("Add", {"a", "b"}, {"sum"});
  b.Node("Mul", {"x", "sum"}, {"y"});
  b.Output("y", kF, {3});
  b.Output("sum", kF, {3});
  b.Output("k", kI64, {2});
  return b.Bytes();
}

TEST(FoldConstants, GraphOutputsBecomeInitializersThatExportAndReload) {
  EXPECT_EQ(Cleaned("fold_constants", ConstantGraphOutputs()),
            "graph g (x: float32[3]) -> (y: float32[3], sum: float32[3], k: int64[2]) {\n"
            "  %k = initializer int64[2]\n"
            "  %sum = initializer float32[3]\n"
            "  %y = Mul(%x, %sum)\n"
            "}\n");
  ExpectSameAtLevel1(ConstantGraphOutputs());
  // Export the folded model and run it again.
  auto m = Load(ConstantGraphOutputs());
  PassNamed("fold_constants").Apply(*m, Context());
  const std::string exported = ir::ExportModelBytes(*m);
  SessionOptions o;
  o.optimization_level = 0;
  auto reloaded = Session::CreateFromBytes(AsBytes(exported), o);
  const auto out = reloaded->Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {3}, {2, 2, 2})}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].first, "y");
  EXPECT_EQ(out[0].second.data<float>()[2], 2 * 3.125f);
  EXPECT_EQ(out[1].first, "sum");
  EXPECT_EQ(out[1].second.data<float>()[0], 1.5f);
  EXPECT_EQ(out[2].first, "k");
  EXPECT_EQ(out[2].second.data<int64_t>()[1], 8);
}

TEST(FoldConstants, RandomOpsFrozenNodesAndSubgraphsAreNotFolded) {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 2});
  b.FloatInitializer("c", {2, 2}, {1, 2, 3, 4});
  b.FloatInitializer("ratio", {}, {0.5f});
  BoolInitializer(b, "on", true);
  BoolInitializer(b, "yes", true);
  auto& rn = b.Node("RandomNormal", {}, {"rn"});
  AddInts(rn, "shape", {2, 2});
  b.Node("RandomUniformLike", {"c"}, {"ru"});
  b.Node("Bernoulli", {"c"}, {"be"});
  b.Node("Dropout", {"c", "ratio", "on"}, {"dr"});  // training mode: random
  b.Node("Neg", {"c"}, {"pinned"}, "pinned_neg");
  auto& iff = b.Node("If", {"yes"}, {"branch"}, "If_1");
  for (const char* attr : {"then_branch", "else_branch"}) {
    auto* a = iff.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(attr);
    auto* o = a->mutable_g()->add_output();
    o->set_name("c");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  }
  for (const char* v : {"rn", "ru", "be", "dr", "pinned", "branch"}) b.Output(v, kF, {2, 2});
  Cleaned("fold_constants", b.Bytes(), false, {"pinned_neg"});
}

TEST(FoldConstants, SizeCapKeepsBlowUpsButFoldsWeights) {
  ModelBuilder b(17);
  b.Input("x", kF, {512, 1024});
  b.FloatInitializer("w", {1024, 512}, std::vector<float>(1024 * 512, 0.5f));  // 2 MiB
  b.Int64Initializer("big", {2}, {512, 1024});
  b.FloatInitializer("one", {1}, {1.0f});
  b.Node("ConstantOfShape", {"big"}, {"zeros"});  // 2 MiB from 16 bytes: not made
  b.Node("Expand", {"one", "big"}, {"ones"});     // likewise
  AddInts(b.Node("Transpose", {"w"}, {"wt"}), "perm", {1, 0});                              // as big as w: folds
  ModelBuilder::IntAttr(b.Node("Cast", {"w"}, {"wh"}), "to", onnx::TensorProto::FLOAT16);  // smaller: folds
  ModelBuilder::IntAttr(b.Node("Cast", {"w"}, {"wd"}), "to", onnx::TensorProto::DOUBLE);   // 4 MiB: not made
  b.Node("Add", {"x", "zeros"}, {"a"});
  b.Node("Add", {"a", "ones"}, {"a2"});
  b.Node("Add", {"a2", "wt"}, {"y"});
  b.Output("y", kF, {512, 1024});
  b.Output("wh", onnx::TensorProto::FLOAT16, {1024, 512});
  b.Output("wd", onnx::TensorProto::DOUBLE, {1024, 512});
  auto m = Load(b.Bytes());
  ASSERT_TRUE(PassNamed("fold_constants").Apply(*m, Context()));
  EXPECT_EQ(CountOps(*m, "ConstantOfShape"), 1u);
  EXPECT_EQ(CountOps(*m, "Expand"), 1u);
  EXPECT_EQ(CountOps(*m, "Transpose"), 0u);
  EXPECT_EQ(CountOps(*m, "Cast"), 1u);
  EXPECT_EQ(m->graph->FindValue("wd")->producer()->op_type(), "Cast");
  EXPECT_NE(m->graph->FindValue("wh")->initializer(), nullptr);
  EXPECT_EQ(m->graph->FindValue("w"), m->graph->FindValue("wd")->producer()->input(0));  // still read
  EXPECT_FALSE(PassNamed("fold_constants").Apply(*m, Context()));
}

TEST(FoldConstants, KernelErrorsAndOtherDomainsAreSkipped) {
  ModelBuilder b(17);
  auto* ferry = b.proto().add_opset_import();
  ferry->set_domain("ai.ferry");
  ferry->set_version(1);
  b.Input("x", kF, {1});
  b.FloatInitializer("data", {3}, {1, 2, 3});
  b.Int64Initializer("bad", {1}, {5});  // out of range: the Gather kernel throws
  b.Node("Gather", {"data", "bad"}, {"g"});
  auto& gelu = b.Node("Gelu", {"data"}, {"ge"});
  gelu.set_domain("ai.ferry");
  b.Node("Add", {"x", "g"}, {"y"});
  b.Output("y", kF, {1});
  b.Output("ge", kF, {3});
  Cleaned("fold_constants", b.Bytes(), false);
}

// ---- eliminate_common_subexpressions -------------------------------------------------------------------------

// Two Relus of x, two Unsqueezes of x with equal axes held by two initializers, a Sigmoid of each Relu; a
// Transpose pair with other perms stays two.
std::string Duplicates() {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3});
  b.Int64Initializer("axes1", {1}, {0});
  b.Int64Initializer("axes2", {1}, {0});
  b.Node("Relu", {"x"}, {"r1"});
  b.Node("Relu", {"x"}, {"r2"});
  b.Node("Sigmoid", {"r1"}, {"s1"});
  b.Node("Sigmoid", {"r2"}, {"s2"});
  b.Node("Add", {"s1", "s2"}, {"a"});
  b.Node("Unsqueeze", {"a", "axes1"}, {"u1"});
  b.Node("Unsqueeze", {"a", "axes2"}, {"u2"});
  b.Node("Mul", {"u1", "u2"}, {"y"});
  AddInts(b.Node("Transpose", {"x"}, {"t1"}), "perm", {1, 0});
  AddInts(b.Node("Transpose", {"x"}, {"t2"}), "perm", {0, 1});
  b.Output("y", kF, {1, 2, 3});
  b.Output("t1", kF, {3, 2});
  b.Output("t2", kF, {2, 3});
  return b.Bytes();
}

TEST(EliminateCommonSubexpressions, MergesEqualNodesAndConstants) {
  EXPECT_EQ(Cleaned("eliminate_common_subexpressions", Duplicates()),
            "graph g (x: float32[2,3]) -> (y: float32[1,2,3], t1: float32[3,2], t2: float32[2,3]) {\n"
            "  %axes1 = initializer int64[1]\n"
            "  %r1 = Relu(%x)\n"
            "  %s1 = Sigmoid(%r1)\n"
            "  %a = Add(%s1, %s1)\n"
            "  %u1 = Unsqueeze(%a, %axes1)\n"
            "  %y = Mul(%u1, %u1)\n"
            "  %t1 = Transpose(%x) {perm=[1,0]}\n"
            "  %t2 = Transpose(%x) {perm=[0,1]}\n"
            "}\n");
  ExpectSameAtLevel1(Duplicates());
}

TEST(EliminateCommonSubexpressions, GraphOutputsKeepTheirNames) {
  // The later Relu's output is a graph output: the earlier Relu is rebuilt to write it (and so comes after the
  // nodes that do not depend on it). Two Negs whose outputs are both graph outputs stay two.
  ModelBuilder b(17);
  b.Input("x", kF, {4});
  b.Node("Relu", {"x"}, {"r1"});
  b.Node("Exp", {"r1"}, {"e"});
  b.Node("Relu", {"x"}, {"out"});
  b.Node("Neg", {"x"}, {"n1"});
  b.Node("Neg", {"x"}, {"n2"});
  b.Output("e", kF, {4});
  b.Output("out", kF, {4});
  b.Output("n1", kF, {4});
  b.Output("n2", kF, {4});
  EXPECT_EQ(Cleaned("eliminate_common_subexpressions", b.Bytes()),
            "graph g (x: float32[4]) -> (e: float32[4], out: float32[4], n1: float32[4], n2: float32[4]) {\n"
            "  %n1 = Neg(%x)\n"
            "  %n2 = Neg(%x)\n"
            "  %out = Relu(%x)\n"
            "  %e = Exp(%out)\n"
            "}\n");
  ExpectSameAtLevel1(b.Bytes());
}

TEST(EliminateCommonSubexpressions, OuterScopeReadersAreRedirected) {
  // The later Relu is read inside the If's then-branch, and returned by its else-branch.
  ModelBuilder b(17);
  b.Input("x", kF, {4});
  b.Input("cond", kBool, {});
  b.Node("Relu", {"x"}, {"r1"});
  b.Node("Relu", {"x"}, {"r2"});
  auto& n = b.Node("If", {"cond"}, {"y"}, "If_1");
  for (const char* attr : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(attr);
    std::string out = "r2";
    if (std::string(attr) == "then_branch") {
      auto* node = g->add_node();
      node->set_op_type("Add");
      node->set_name("Add_then");
      node->add_input("r1");
      node->add_input("r2");
      node->add_output("t");
      out = "t";
    }
    auto* o = g->add_output();
    o->set_name(out);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  }
  b.Output("y", kF, {4});
  auto m = Load(b.Bytes());
  ASSERT_TRUE(PassNamed("eliminate_common_subexpressions").Apply(*m, Context()));
  EXPECT_EQ(CountOps(*m, "Relu"), 1u);
  const ir::Value* r1 = m->graph->FindValue("r1");
  const ir::Node* if_node = m->graph->nodes().back().get();
  ASSERT_EQ(if_node->op_type(), "If");
  EXPECT_EQ(if_node->GetGraph("then_branch")->nodes()[0]->input(1), r1);
  EXPECT_EQ(if_node->GetGraph("else_branch")->outputs()[0], r1);
  EXPECT_FALSE(PassNamed("eliminate_common_subexpressions").Apply(*m, Context()));
  for (bool c : {true, false}) {
    SessionOptions o;
    o.backends = {"ref"};
    o.optimization_level = 1;
    auto opt = Session::CreateFromBytes(AsBytes(b.Bytes()), o);
    const Tensor x = Tensor::FromVector<float>(DataType::kFloat, {4}, {-1, 2, -3, 4});
    const auto out = opt->Run({{"x", x}, {"cond", Tensor::FromVector<bool>(DataType::kBool, {}, {c})}});
    EXPECT_EQ(out[0].second.data<float>()[3], c ? 8.0f : 4.0f);
  }
}

TEST(EliminateCommonSubexpressions, LeavesAloneWhatDiffers) {
  ModelBuilder b(17);
  b.Input("x", kF, {4});
  b.Input("z", kF, {4});
  b.FloatInitializer("big1", {65}, std::vector<float>(65, 1.0f));  // over the size limit
  b.FloatInitializer("big2", {65}, std::vector<float>(65, 1.0f));
  b.FloatInitializer("fed", {4}, {1, 2, 3, 4});  // also a graph input: a feed may override it
  b.FloatInitializer("same", {4}, {1, 2, 3, 4});
  b.graph().add_input()->CopyFrom(b.graph().input(0));
  b.graph().mutable_input(2)->set_name("fed");
  b.Node("Sub", {"x", "z"}, {"d1"});
  b.Node("Sub", {"z", "x"}, {"d2"});  // other order
  AddFloat(b.Node("LeakyRelu", {"x"}, {"l1"}), "alpha", 0.1f);
  AddFloat(b.Node("LeakyRelu", {"x"}, {"l2"}), "alpha", 0.2f);  // other attribute
  b.Node("RandomUniformLike", {"x"}, {"ru1"});
  b.Node("RandomUniformLike", {"x"}, {"ru2"});  // random
  b.Node("Abs", {"x"}, {"p1"}, "pinned1");
  b.Node("Abs", {"x"}, {"p2"}, "pinned2");  // frozen
  b.Node("Add", {"big1", "big2"}, {"bb"});
  b.Node("Add", {"fed", "same"}, {"fs"});
  for (const char* v : {"d1", "d2", "l1", "l2", "ru1", "ru2", "p1", "p2"}) b.Output(v, kF, {4});
  b.Output("bb", kF, {65});
  b.Output("fs", kF, {4});
  Cleaned("eliminate_common_subexpressions", b.Bytes(), false, {"pinned2"});
}

TEST(EliminateCommonSubexpressions, AttributeEquality) {
  ir::Attribute a, b;
  a.name = b.name = "alpha";
  a.type = b.type = ir::AttrType::kFloat;
  a.f = 0.0f;
  b.f = -0.0f;
  EXPECT_FALSE(passes::AttributesEqual(a, b));  // bitwise: -0 is not 0
  b.f = 0.0f;
  EXPECT_TRUE(passes::AttributesEqual(a, b));
  a.type = b.type = ir::AttrType::kTensor;
  a.t = Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2});
  b.t = Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2});
  EXPECT_TRUE(passes::AttributesEqual(a, b));
  b.t = Tensor::FromVector<float>(DataType::kFloat, {2, 1}, {1, 2});
  EXPECT_FALSE(passes::AttributesEqual(a, b));  // other shape
  b.t = Tensor::FromVector<double>(DataType::kDouble, {2}, {1, 2});
  EXPECT_FALSE(passes::AttributesEqual(a, b));  // other dtype
  a.type = b.type = ir::AttrType::kGraph;
  EXPECT_FALSE(passes::AttributesEqual(a, b));  // bodies are never compared
}

TEST(CleanupPasses, LevelOneRunsThemAll) {
  // The duplicate-and-constant model at level 1: the Constant-made shape folds, equal nodes merge.
  auto m = OptimizedAt(ShapeComputation(), 1);
  EXPECT_EQ(m->graph->nodes().size(), 2u);
  auto d = OptimizedAt(Duplicates(), 1);
  EXPECT_EQ(d->graph->nodes().size(), 7u);
  // Frozen by op type: nothing of that type is touched by any of the three.
  auto pinned = OptimizedAt(ShapeComputation(), 1, {"Transpose", "Shape"});
  EXPECT_EQ(CountOps(*pinned, "Transpose"), 1u);
  EXPECT_EQ(CountOps(*pinned, "Shape"), 1u);
}

}  // namespace
}  // namespace ferry
