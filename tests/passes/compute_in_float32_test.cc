// compute_in_float32: a float16 (bfloat16) model whose ops the cpu backend runs in float32 only computes in float32
// inside, with Casts only at its inputs and outputs, runs on cpu alone, and matches ref running the half model within
// half tolerance; nodes a backend runs in half natively, frozen nodes, half graph outputs and models without half
// tensors are left as they are, and the pass does nothing without target backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ferry/float16.h"
#include "ir/builder.h"
#include "passes/pass_list.h"
#include "pass_test_util.h"
#include "runtime/placement.h"

namespace ferry {
namespace {

using pass_test::Net;
using pass_test::NodesOf;
using pass_test::OpList;
using pass_test::Optimized;

constexpr int32_t kF16 = onnx::TensorProto::FLOAT16;
constexpr int32_t kBF16 = onnx::TensorProto::BFLOAT16;
constexpr int32_t kF32 = onnx::TensorProto::FLOAT;

// A random initializer of element type `elem` (float16, bfloat16 or float) in [-scale, scale).
std::string Weights(Net& net, int32_t elem, const std::string& name, std::initializer_list<int64_t> dims, float scale) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  const std::vector<float> v = net.Random(n, scale);
  if (elem == kF32) {
    net.b.FloatInitializer(name, dims, v);
    return name;
  }
  auto* t = net.b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  std::string raw(n * 2, '\0');
  for (size_t i = 0; i < n; ++i) {
    const uint16_t bits = elem == kF16 ? Float16(v[i]).bits : BFloat16(v[i]).bits;
    std::memcpy(&raw[i * 2], &bits, 2);
  }
  t->set_raw_data(raw);
  return name;
}

struct Form {
  int32_t elem = kF16;
  bool relu_output = false;  // the Relu's (half) result is a graph output too
};

// x[1,3,8,8] -> Conv(3x3, pad 1) -> Relu -> Reshape[1,256] -> MatMul[256,10] -> Add -> Softmax -> y[1,10], every
// float tensor of element type f.elem.
std::string Model(const Form& f) {
  Net net;
  net.b.Input("x", f.elem, {1, 3, 8, 8});
  auto& conv = net.b.Node("Conv", {"x", Weights(net, f.elem, "w", {4, 3, 3, 3}, 0.4f),
                                   Weights(net, f.elem, "bias", {4}, 0.1f)}, {"c"}, "conv");
  pass_test::IntsAttr(conv, "pads", {1, 1, 1, 1});
  net.b.Node("Relu", {"c"}, {"r"}, "relu");
  net.b.Int64Initializer("shape", {2}, {1, 256});
  net.b.Node("Reshape", {"r", "shape"}, {"flat"}, "reshape");
  net.b.Node("MatMul", {"flat", Weights(net, f.elem, "w2", {256, 10}, 0.15f)}, {"mm"}, "matmul");
  net.b.Node("Add", {"mm", Weights(net, f.elem, "b2", {10}, 0.1f)}, {"logits"}, "add");
  net.b.Node("Softmax", {"logits"}, {"y"}, "softmax");
  net.b.Output("y", f.elem, {1, 10});
  if (f.relu_output) net.b.Output("r", f.elem, {1, 4, 8, 8});
  return net.b.Bytes();
}

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

// Every half tensor a node other than a Cast reads or writes, as "node: value".
std::vector<std::string> HalfInside(const ir::Model& m) {
  std::vector<std::string> out;
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type() == "Cast") continue;
    for (const auto* list : {&n->inputs(), &n->outputs()}) {
      for (const ir::Value* v : *list) {
        if (v && IsHalf(ir::ElementType(v))) out.push_back(n->name() + ": " + v->name());
      }
    }
  }
  return out;
}

// The nodes of `m` no backend of `backends` (with no fallback) takes.
size_t Unplaced(const ir::Model& m, const std::vector<std::string>& backends) {
  return runtime::PlaceModel(m, runtime::ResolvePlacementOptions(backends, {}, {}, false)).unplaced.size();
}

std::unique_ptr<Session> SessionFor(const std::string& bytes, const std::vector<std::string>& backends, int level,
                                    std::vector<std::string> disabled = {}) {
  SessionOptions o;
  o.threads = 1;
  o.backends = backends;
  o.optimization_level = level;
  o.disabled_passes = std::move(disabled);
  const std::span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return Session::CreateFromBytes(span, o);
}

// The model at `level` on cpu alone against ref running the half model as written.
void ExpectMatchesHalfRef(const std::string& bytes, int level, double rtol, double atol) {
  const auto feeds = pass_test::RandomFeeds(bytes);
  const auto want = SessionFor(bytes, {"ref"}, 0)->Run(feeds);
  const auto got = SessionFor(bytes, {"cpu"}, level)->Run(feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, rtol, atol)) << "output " << want[i].first;
  }
}

const passes::Pass& ThePass() {
  static const auto pass = passes::MakeComputeInFloat32();
  return *pass;
}

TEST(ComputeInFloat32, HalfModelComputesInFloat32WithCastsOnlyAtTheBoundary) {
  for (const int32_t elem : {kF16, kBF16}) {
    SCOPED_TRACE(elem == kF16 ? "float16" : "bfloat16");
    const std::string bytes = Model({.elem = elem});
    // As written, the cpu backend runs none of the compute ops (half kernels it lacks).
    EXPECT_GT(Unplaced(*pass_test::Import(bytes), {"cpu"}), 0u);
    const auto m = Optimized(bytes, 1);
    EXPECT_EQ(OpList(*m), "Cast Conv Relu Reshape MatMul Add Softmax Cast");
    EXPECT_EQ(HalfInside(*m), std::vector<std::string>{});
    const DataType half = elem == kF16 ? DataType::kFloat16 : DataType::kBFloat16;
    EXPECT_EQ(ir::ElementType(m->graph->inputs()[0]), half);
    ASSERT_EQ(m->graph->outputs().size(), 1u);
    EXPECT_EQ(m->graph->outputs()[0]->name(), "y");
    EXPECT_EQ(ir::ElementType(m->graph->outputs()[0]), half);
    for (const ir::Value* w : m->graph->initializers()) EXPECT_FALSE(IsHalf(ir::ElementType(w))) << w->name();
    EXPECT_EQ(m->graph->initializers().size(), 5u);  // w, bias, shape, w2, b2: each half weight converted once
    EXPECT_EQ(Unplaced(*m, {"cpu"}), 0u);
    // The fusions see float32 ops, as in a float32 model.
    const auto m3 = Optimized(bytes, 3);
    EXPECT_EQ(HalfInside(*m3), std::vector<std::string>{});
    EXPECT_EQ(NodesOf(*m3, "Cast").size(), 2u);
    EXPECT_EQ(NodesOf(*m3, "Conv").size(), 0u) << OpList(*m3);
    EXPECT_EQ(Unplaced(*m3, {"cpu"}), 0u);
  }
  // A session on cpu alone: with the pass, every node runs there; without it, placement refuses the model.
  EXPECT_NO_THROW(SessionFor(Model({}), {"cpu"}, 3));
  EXPECT_THROW(SessionFor(Model({}), {"cpu"}, 3, {"compute_in_float32"}), Error);
}

TEST(ComputeInFloat32, ExpectedIr) {
  const auto m = Optimized(Model({}), 1);
  EXPECT_EQ(ir::DumpGraph(*m->graph),
            "graph g (x: float16[1,3,8,8]) -> (y: float16[1,10]) {\n"
            "  %shape = initializer int64[2]\n"
            "  %w_float32 = initializer float32[4,3,3,3]\n"
            "  %bias_float32 = initializer float32[4]\n"
            "  %w2_float32 = initializer float32[256,10]\n"
            "  %b2_float32 = initializer float32[10]\n"
            "  %x_float32 = Cast(%x) {to=1}   # x_to_float32, opset 17\n"
            "  %c_float32 = Conv(%x_float32, %w_float32, %bias_float32) {pads=[1,1,1,1]}   # conv, opset 17\n"
            "  %r_float32 = Relu(%c_float32)   # relu, opset 17\n"
            "  %flat_float32 = Reshape(%r_float32, %shape)   # reshape, opset 17\n"
            "  %mm_float32 = MatMul(%flat_float32, %w2_float32)   # matmul, opset 17\n"
            "  %logits_float32 = Add(%mm_float32, %b2_float32)   # add, opset 17\n"
            "  %y_float32 = Softmax(%logits_float32)   # softmax, opset 17\n"
            "  %y = Cast(%y_float32) {to=10}   # y_to_float16, opset 17\n"
            "}\n");
}

TEST(ComputeInFloat32, OutputsMatchRefRunningTheHalfModel) {
  // float16 rounds each result to 11 significant bits, bfloat16 to 8: the float32 run differs by that rounding.
  ExpectMatchesHalfRef(Model({.elem = kF16}), 1, 2e-2, 2e-3);
  ExpectMatchesHalfRef(Model({.elem = kF16}), 3, 2e-2, 2e-3);
  ExpectMatchesHalfRef(Model({.elem = kBF16}), 3, 8e-2, 1e-2);
  ExpectMatchesHalfRef(Model({.elem = kF16, .relu_output = true}), 3, 2e-2, 2e-3);
}

TEST(ComputeInFloat32, AHalfGraphOutputStaysHalf) {
  const auto m = Optimized(Model({.relu_output = true}), 1);
  ASSERT_EQ(m->graph->outputs().size(), 2u);
  const ir::Value* r = m->graph->outputs()[1];
  EXPECT_EQ(r->name(), "r");
  EXPECT_EQ(ir::ElementType(r), DataType::kFloat16);
  ASSERT_NE(r->producer(), nullptr);
  EXPECT_EQ(r->producer()->op_type(), "Cast");
  EXPECT_EQ(r->producer()->input(0)->name(), "r_float32");
  // The Reshape after it reads the float32 value: Casts only at the boundary.
  EXPECT_EQ(HalfInside(*m), std::vector<std::string>{});
  EXPECT_EQ(NodesOf(*m, "Cast").size(), 3u);
}

TEST(ComputeInFloat32, AFrozenNodeIsLeftInHalf) {
  for (const char* pin : {"relu", "Relu"}) {  // by node name and by op type
    const auto m = Optimized(Model({}), 1, {"cpu", "ref"}, {pin});
    // The Reshape after it runs in half as well (its input is at hand in half only); the MatMul gets a Cast.
    EXPECT_EQ(HalfInside(*m), std::vector<std::string>({"relu: c", "relu: r", "reshape: r", "reshape: flat"}));
    const auto relu = NodesOf(*m, "Relu");
    ASSERT_EQ(relu.size(), 1u);
    EXPECT_EQ(relu[0]->input(0)->producer()->op_type(), "Cast");  // Conv's float32 result, back to half
    EXPECT_EQ(NodesOf(*m, "Reshape")[0]->output(0)->consumers()[0]->op_type(), "Cast");  // to float32 for MatMul
    EXPECT_EQ(NodesOf(*m, "Cast").size(), 4u);
    pass_test::ExpectSameOutputs(Model({}), 1, {"cpu", "ref"}, 2e-2, 2e-3);
  }
}

TEST(ComputeInFloat32, NodesRunInHalfNativelyAreLeftAlone) {
  // On ref, every op runs in float16 as written: nothing to gain.
  auto m = pass_test::Import(Model({}));
  EXPECT_FALSE(ThePass().Apply(*m, pass_test::Context(1, {"ref"})));
  EXPECT_EQ(OpList(*m), "Conv Relu Reshape MatMul Add Softmax");
  // cpu runs Concat, Add and NonZero in float16. The Concat of graph inputs stays half; so does the Add writing a
  // graph output, which reads the float16 value the Relu (computing in float32) writes back. The NonZero, which
  // writes no half tensor, reads the Relu's float32 value.
  Net net;
  net.b.Input("x", kF16, {2, 3});
  testing::ModelBuilder::IntAttr(net.b.Node("Concat", {"x", "x"}, {"cat"}, "concat"), "axis", 0);
  net.b.Node("Relu", {"cat"}, {"r"}, "relu");
  net.b.Node("Add", {"r", "r"}, {"y"}, "add");
  net.b.Node("NonZero", {"r"}, {"nz"}, "nonzero");
  net.b.Output("y", kF16, {4, 3});
  net.b.Output("nz", onnx::TensorProto::INT64, {});
  const auto mixed = Optimized(net.b.Bytes(), 1);
  EXPECT_EQ(HalfInside(*mixed), std::vector<std::string>({"concat: x", "concat: x", "concat: cat", "add: r", "add: r",
                                                          "add: y"}));
  EXPECT_EQ(NodesOf(*mixed, "Cast").size(), 2u);  // cat to float32 for the Relu, its result back for the Add
  EXPECT_EQ(NodesOf(*mixed, "NonZero")[0]->input(0)->name(), "r_float32");
  ExpectMatchesHalfRef(net.b.Bytes(), 3, 0, 0);
}

TEST(ComputeInFloat32, AModelsOwnCastsAroundAHalfIslandAreBypassed) {
  // A mixed-precision model: float32 in and out, a float16 Conv + Relu between two Casts of its own.
  Net net;
  net.b.Input("x", kF32, {1, 3, 8, 8});
  auto& to_half = net.b.Node("Cast", {"x"}, {"xh"}, "to_half");
  testing::ModelBuilder::IntAttr(to_half, "to", kF16);
  net.b.Node("Conv", {"xh", Weights(net, kF16, "w", {4, 3, 3, 3}, 0.4f)}, {"c"}, "conv");
  net.b.Node("Relu", {"c"}, {"r"}, "relu");
  auto& to_float = net.b.Node("Cast", {"r"}, {"y"}, "to_float");
  testing::ModelBuilder::IntAttr(to_float, "to", kF32);
  net.b.Output("y", kF32, {1, 4, 8, 8});
  const auto m = Optimized(net.b.Bytes(), 1);
  EXPECT_EQ(OpList(*m), "Conv Relu Identity");
  EXPECT_EQ(NodesOf(*m, "Conv")[0]->input(0)->name(), "x");
  EXPECT_EQ(HalfInside(*m), std::vector<std::string>{});
  ExpectMatchesHalfRef(net.b.Bytes(), 3, 2e-2, 2e-3);
}

TEST(ComputeInFloat32, AWeightReadTwiceIsConvertedOnce) {
  Net net;
  net.b.Input("a", kF16, {2, 16});
  net.b.Input("b", kF16, {2, 16});
  const std::string w = Weights(net, kF16, "w", {16, 16}, 0.25f);
  net.b.Node("MatMul", {"a", w}, {"ya"}, "mma");
  net.b.Node("MatMul", {"b", w}, {"yb"}, "mmb");
  net.b.Node("Add", {"ya", "yb"}, {"s"}, "add");
  net.b.Node("Relu", {"s"}, {"y"}, "relu");
  net.b.Output("y", kF16, {2, 16});
  const auto m = Optimized(net.b.Bytes(), 1);
  EXPECT_EQ(HalfInside(*m), std::vector<std::string>{});
  EXPECT_EQ(NodesOf(*m, "Cast").size(), 3u);
  ASSERT_EQ(m->graph->initializers().size(), 1u);
  const ir::Value* w32 = m->graph->initializers()[0];
  EXPECT_EQ(ir::ElementType(w32), DataType::kFloat);
  EXPECT_EQ(w32->consumers().size(), 2u);
  ExpectMatchesHalfRef(net.b.Bytes(), 3, 2e-2, 2e-3);
}

// A branch's body: `op` of the outer value `r`, written as `out` (float16[2,3]).
void Branch(onnx::NodeProto& node, const std::string& attr, const std::string& op, const std::string& out) {
  onnx::GraphProto& g = testing::ModelBuilder::GraphAttr(node, attr);
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(attr + "_" + op);
  n->add_input("r");
  n->add_output(out);
  auto* vi = g.add_output();
  vi->set_name(out);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(kF16);
  for (int64_t d : {2, 3}) vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
}

TEST(ComputeInFloat32, SubgraphsAreConvertedOnTheirOwn) {
  // x -> Relu -> r; If(c) { Sigmoid(r) } else { Neg(r) } -> y: each branch reads the outer r in float16 (the Relu's
  // float32 result written back) and computes in float32 inside, its output keeping its declared float16 type.
  Net net;
  net.b.Input("x", kF16, {2, 3});
  net.b.Input("c", onnx::TensorProto::BOOL, {});
  net.b.Node("Relu", {"x"}, {"r"}, "relu");
  auto& branch = net.b.Node("If", {"c"}, {"y"}, "if");
  Branch(branch, "then_branch", "Sigmoid", "t");
  Branch(branch, "else_branch", "Neg", "e");
  net.b.Output("y", kF16, {2, 3});
  const auto m = Optimized(net.b.Bytes(), 1);
  EXPECT_EQ(OpList(*m), "Cast Relu Cast If");
  const auto ifs = NodesOf(*m, "If");
  ASSERT_EQ(ifs.size(), 1u);
  for (const ir::Graph* body : ifs[0]->subgraphs()) {
    std::string ops;
    for (const auto& n : body->nodes()) ops += (ops.empty() ? "" : " ") + n->op_type();
    EXPECT_EQ(ops.substr(0, 5), "Cast ") << ops;
    EXPECT_EQ(body->nodes().size(), 3u) << ops;
    EXPECT_EQ(ir::ElementType(body->outputs()[0]), DataType::kFloat16);
  }
  EXPECT_NO_THROW(passes::VerifyGraph(*m->graph, "compute_in_float32"));
  ExpectMatchesHalfRef(net.b.Bytes(), 3, 2e-2, 2e-3);
}

TEST(ComputeInFloat32, NothingToDoWithoutTargetsOrHalfTensors) {
  auto m = pass_test::Import(Model({}));
  EXPECT_FALSE(ThePass().Apply(*m, pass_test::Context(1, {})));  // portable mode
  EXPECT_EQ(OpList(*m), "Conv Relu Reshape MatMul Add Softmax");
  auto f32 = pass_test::Import(Model({.elem = kF32}));
  EXPECT_FALSE(ThePass().Apply(*f32, pass_test::Context(1, {"cpu", "ref"})));
  // A second application changes nothing.
  EXPECT_TRUE(ThePass().Apply(*m, pass_test::Context(1, {"cpu", "ref"})));
  const std::string once = ir::DumpGraph(*m->graph);
  EXPECT_FALSE(ThePass().Apply(*m, pass_test::Context(1, {"cpu", "ref"})));
  EXPECT_EQ(ir::DumpGraph(*m->graph), once);
}

TEST(ComputeInFloat32, ThePassIsListedAtLevel1BeforeTheFusions) {
  EXPECT_EQ(ThePass().name(), "compute_in_float32");
  EXPECT_EQ(ThePass().level(), 1);
  std::vector<std::string> names;
  for (const auto& p : passes::AllPasses()) names.push_back(std::string(p->name()));
  const auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  EXPECT_LT(at("fold_constants"), at("compute_in_float32"));
  EXPECT_LT(at("compute_in_float32"), at("fold_batch_norm"));
}

}  // namespace
}  // namespace ferry
