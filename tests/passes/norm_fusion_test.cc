// fuse_layer_norm and fuse_skip_layer_norm: before/after on the IR, numerical equivalence with the unoptimized graph
// (level 2 vs 0 through Session, on ref and on cpu,ref), idempotence, and the patterns they must leave alone.
// The decomposed patterns are the ones PyTorch writes at opset 14 (nn.LayerNorm: ReduceMean, Sub, Pow, ReduceMean,
// Add, Sqrt, Div, Mul, Add with Constant nodes; T5's RMSNorm: Cast, Pow, ReduceMean, Add, Sqrt, Div(1, ·), Mul,
// Cast, Mul), plus the other forms exporters use.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <sstream>

#include "backends/backend.h"
#include "ferry/session.h"
#include "ir/dump.h"
#include "ir/onnx_import.h"
#include "passes/pass_manager.h"
#include "runtime/type_inference.h"
#include "schemas/schema.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::ModelBuilder;

constexpr int32_t kF = onnx::TensorProto::FLOAT;
using Backends = std::vector<std::string>;

std::unique_ptr<ir::Model> Import(const std::string& bytes) {
  auto model = ir::ImportModelFromBytes(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  runtime::InferTypes(*model);
  return model;
}

passes::PassContext Context(int level, const Backends& backends, std::set<std::string, std::less<>> frozen = {}) {
  passes::PassContext ctx;
  ctx.level = level;
  for (const auto& name : backends) ctx.backends.push_back(FindBackend(name));
  ctx.frozen = std::move(frozen);
  return ctx;
}

std::unique_ptr<ir::Model> Optimized(const std::string& bytes, const Backends& backends,
                                     std::set<std::string, std::less<>> frozen = {}) {
  auto model = Import(bytes);
  passes::OptimizeModel(*model, Context(2, backends, std::move(frozen)));
  return model;
}

std::vector<const ir::Node*> NodesOf(const ir::Model& m, const std::string& op) {
  std::vector<const ir::Node*> out;
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type() == op) out.push_back(n.get());
  }
  return out;
}

std::string OpList(const ir::Model& m) {
  std::string s;
  for (const auto& n : m.graph->nodes()) {
    s += (s.empty() ? "" : " ") + (n->domain().empty() ? "" : n->domain() + "::") + n->op_type();
  }
  return s;
}

// The dump's node lines only, without the "# name, opset" comments.
std::string NodeLines(const ir::Model& m) {
  std::string out;
  std::istringstream in(ir::DumpGraph(*m.graph));
  for (std::string line; std::getline(in, line);) {
    if (line.find(" = ") == std::string::npos || line.find("initializer") != std::string::npos) continue;
    line = line.substr(line.find_first_not_of(' '));
    out += line.substr(0, line.find("   #")) + "\n";
  }
  return out;
}

// Level 0 and level 2 through Session, on random feeds: every output within 1e-4.
void ExpectSameOutputs(const std::string& bytes, const std::vector<std::pair<std::string, Shape>>& inputs,
                       const Backends& backends, int threads = 1) {
  std::mt19937 rng(11);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, shape] : inputs) {
    feeds.emplace_back(name, testing::RandomTensor(DataType::kFloat, shape, rng, -2, 2));
  }
  SessionOptions o;
  o.backends = backends;
  o.threads = threads;
  o.optimization_level = 0;
  const std::span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const auto want = Session::CreateFromBytes(span, o)->Run(feeds);
  o.optimization_level = 2;
  const auto got = Session::CreateFromBytes(span, o)->Run(feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, 1e-4, 1e-4)) << "output " << want[i].first;
  }
}

// After level 2, applying the pass once more changes nothing and says so.
void ExpectIdempotent(const std::string& bytes, const std::string& pass, const Backends& backends) {
  auto m = Optimized(bytes, backends);
  const std::string before = ir::DumpGraph(*m->graph);
  for (const auto& p : passes::AllPasses()) {
    if (p->name() != pass) continue;
    EXPECT_FALSE(p->Apply(*m, Context(2, backends))) << pass;
    EXPECT_EQ(ir::DumpGraph(*m->graph), before) << pass;
    return;
  }
  ADD_FAILURE() << "no pass " << pass;
}

void FloatInit(ModelBuilder& b, const std::string& name, const Shape& dims, std::mt19937& rng, float lo = -1,
               float hi = 1) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kF);
  int64_t count = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    count *= d;
  }
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < count; ++i) t->add_float_data(u(rng));
}

void ScalarConstant(ModelBuilder& b, const std::string& name, float v) {
  auto& c = b.Node("Constant", {}, {name}, name + "_node");
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kF);
  a->mutable_t()->add_float_data(v);
}

// The decomposed LayerNorm (or RMSNorm) of `x` as exporters write it; returns the result's name.
struct NormSpec {
  int64_t opset = 14;
  bool rms = false;
  bool mul_square = false;               // Mul(d, d) instead of Pow(d, 2)
  int division = 0;                      // 0: Div(d, s); 1: Mul(d, Reciprocal(s)); 2: Mul(Div(1, s), d)
  std::vector<int64_t> axes{-1};
  std::optional<Shape> gamma = Shape{16};
  std::optional<Shape> beta = Shape{16};  // LayerNorm only
  bool cast = false;                      // a no-op Cast to float before the gamma Mul
  float epsilon = 1e-5f;
};

std::string AddNorm(ModelBuilder& b, const std::string& x, const NormSpec& s, std::mt19937& rng) {
  ScalarConstant(b, "eps", s.epsilon);
  ScalarConstant(b, "two", 2.0f);
  auto reduce_mean = [&](const std::string& in, const std::string& out) {
    if (s.opset >= 18) {
      b.Node("ReduceMean", {in, "axes"}, {out}, "ReduceMean_" + out);
    } else {
      auto& n = b.Node("ReduceMean", {in}, {out}, "ReduceMean_" + out);
      auto* a = n.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : s.axes) a->add_ints(v);
    }
  };
  if (s.opset >= 18) {
    auto* t = b.graph().add_initializer();
    t->set_name("axes");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(s.axes.size()));
    for (int64_t v : s.axes) t->add_int64_data(v);
  }
  std::string d = x;
  if (!s.rms) {
    reduce_mean(x, "mean");
    b.Node("Sub", {x, "mean"}, {"d"}, "Sub");
    d = "d";
  }
  if (s.mul_square) {
    b.Node("Mul", {d, d}, {"sq"}, "Square");
  } else {
    b.Node("Pow", {d, "two"}, {"sq"}, "Pow");
  }
  reduce_mean("sq", "var");
  b.Node("Add", {"var", "eps"}, {"ve"}, "AddEps");
  b.Node("Sqrt", {"ve"}, {"s"}, "Sqrt");
  if (s.division == 0) {
    b.Node("Div", {d, "s"}, {"n"}, "Div");
  } else if (s.division == 1) {
    b.Node("Reciprocal", {"s"}, {"r"}, "Reciprocal");
    b.Node("Mul", {d, "r"}, {"n"}, "MulR");
  } else {
    ScalarConstant(b, "one", 1.0f);
    b.Node("Div", {"one", "s"}, {"r"}, "DivOne");
    b.Node("Mul", {"r", d}, {"n"}, "MulR");
  }
  std::string cur = "n";
  if (s.cast) {
    auto& c = b.Node("Cast", {cur}, {"nc"}, "Cast");
    ModelBuilder::IntAttr(c, "to", kF);
    cur = "nc";
  }
  if (s.gamma) {
    FloatInit(b, "gamma", *s.gamma, rng, 0.5f, 1.5f);
    b.Node("Mul", {"gamma", cur}, {"scaled"}, "MulGamma");  // gamma first, as in Hugging Face's code
    cur = "scaled";
  }
  if (s.beta && !s.rms) {
    FloatInit(b, "beta", *s.beta, rng);
    b.Node("Add", {cur, "beta"}, {"shifted"}, "AddBeta");
    cur = "shifted";
  }
  return cur;
}

// x [2, 5, 16] (or `x_shape`) -> norm -> graph output; `also_outputs`: intermediates that are graph outputs too.
std::string NormModel(const NormSpec& s, const std::vector<int64_t>& x_shape = {2, 5, 16},
                      const std::vector<std::string>& also_outputs = {}) {
  std::mt19937 rng(3);
  ModelBuilder b(s.opset);
  b.InputSym("x", kF, x_shape, "N");
  b.Output(AddNorm(b, "x", s, rng), kF, {});
  for (const auto& o : also_outputs) b.Output(o, kF, {});
  return b.Bytes();
}

const std::vector<std::pair<std::string, Shape>> kX{{"x", {2, 5, 16}}};

// --- FuseLayerNorm ---------------------------------------------------------------------------------------------

TEST(FuseLayerNorm, TorchOpset14FormBecomesOneFerryLayerNorm) {
  const std::string bytes = NormModel({});
  for (const Backends& backends : {Backends{"cpu", "ref"}, Backends{"ref"}}) {
    SCOPED_TRACE(backends.size());
    const auto m = Optimized(bytes, backends);
    EXPECT_EQ(NodeLines(*m), "%shifted = ai.ferry::LayerNormalization(%x, %gamma, %beta) {axis=-1, epsilon=1e-05}\n");
    EXPECT_EQ(m->opsets.at(std::string(schemas::kFerryDomain)), 1);
    ExpectSameOutputs(bytes, kX, backends);
  }
  ExpectSameOutputs(bytes, kX, {"cpu", "ref"}, 2);
  ExpectIdempotent(bytes, "fuse_layer_norm", {"cpu", "ref"});
  // Portable mode (no backends): opset 14 has no LayerNormalization, and ai.ferry ops need a backend.
  EXPECT_EQ(NodesOf(*Optimized(bytes, {}), "LayerNormalization").size(), 0u);
  EXPECT_EQ(NodesOf(*Optimized(bytes, {}), "ReduceMean").size(), 2u);
}

TEST(FuseLayerNorm, Opset17BecomesStandardLayerNormEvenInPortableMode) {
  NormSpec s;
  s.opset = 17;
  const std::string bytes = NormModel(s);
  for (const Backends& backends : {Backends{"cpu", "ref"}, Backends{}}) {
    const auto m = Optimized(bytes, backends);
    EXPECT_EQ(NodeLines(*m), "%shifted = LayerNormalization(%x, %gamma, %beta) {axis=-1, epsilon=1e-05}\n");
    ASSERT_EQ(NodesOf(*m, "LayerNormalization").size(), 1u);
    EXPECT_EQ(NodesOf(*m, "LayerNormalization")[0]->opset(), 17);
    EXPECT_EQ(m->opsets.count(std::string(schemas::kFerryDomain)), 0u);
  }
  ExpectSameOutputs(bytes, kX, {"cpu", "ref"});
  ExpectIdempotent(bytes, "fuse_layer_norm", {});
}

TEST(FuseLayerNorm, Opset18AxesInputOverTwoDims) {
  NormSpec s;
  s.opset = 18;
  s.axes = {-2, -1};
  s.gamma = Shape{5, 16};
  s.beta = Shape{1, 5, 16};  // with a leading 1: passed reshaped to [5, 16]
  const std::string bytes = NormModel(s);
  const auto m = Optimized(bytes, {"cpu", "ref"});
  const auto ln = NodesOf(*m, "LayerNormalization");
  ASSERT_EQ(ln.size(), 1u) << OpList(*m);
  EXPECT_EQ(m->graph->nodes().size(), 1u);
  EXPECT_EQ(ln[0]->GetInt("axis", 0), -2);
  ASSERT_NE(ln[0]->input(2)->initializer(), nullptr);
  EXPECT_EQ(ln[0]->input(2)->initializer()->shape(), (Shape{5, 16}));
  ExpectSameOutputs(bytes, kX, {"cpu", "ref"});
  ExpectSameOutputs(bytes, kX, {"ref"});
}

TEST(FuseLayerNorm, OtherFormsExportersWrite) {
  struct Form {
    const char* what;
    NormSpec spec;
  };
  std::vector<Form> forms;
  for (int division : {1, 2}) {
    NormSpec s;
    s.division = division;
    forms.push_back({division == 1 ? "Mul(d, Reciprocal(s))" : "Mul(Div(1, s), d)", s});
  }
  NormSpec sq;
  sq.mul_square = true;
  sq.axes = {2};  // a positive axis, for a known rank
  forms.push_back({"Mul(d, d), axes [2]", sq});
  NormSpec row;
  row.gamma = Shape{1, 1, 16};
  row.beta = std::nullopt;
  row.cast = true;
  row.epsilon = 1e-12f;
  forms.push_back({"gamma [1, 1, 16], no beta, a no-op Cast", row});
  NormSpec bare;
  bare.gamma = std::nullopt;
  bare.beta = std::nullopt;
  forms.push_back({"no gamma (ones), no beta", bare});
  for (const Form& f : forms) {
    SCOPED_TRACE(f.what);
    const std::string bytes = NormModel(f.spec);
    const auto m = Optimized(bytes, {"cpu", "ref"});
    EXPECT_EQ(OpList(*m), "ai.ferry::LayerNormalization");
    ASSERT_EQ(NodesOf(*m, "LayerNormalization").size(), 1u);
    EXPECT_FLOAT_EQ(NodesOf(*m, "LayerNormalization")[0]->GetFloat("epsilon", 0), f.spec.epsilon);
    ExpectSameOutputs(bytes, kX, {"cpu", "ref"});
  }
}

TEST(FuseLayerNorm, AxisNotLastOrIntermediateReadTwiceIsLeftAlone) {
  NormSpec s;
  s.axes = {1};  // mean over the middle dim
  s.gamma = std::nullopt;
  s.beta = std::nullopt;
  auto m = Optimized(NormModel(s), {"cpu", "ref"});
  EXPECT_TRUE(NodesOf(*m, "LayerNormalization").empty()) << OpList(*m);
  // The mean over another axis than the variance.
  ModelBuilder b(14);
  std::mt19937 rng(1);
  b.InputSym("x", kF, {2, 5, 16}, "N");
  b.Output(AddNorm(b, "x", {}, rng), kF, {});
  for (auto& n : *b.graph().mutable_node()) {
    if (n.name() == "ReduceMean_mean") n.mutable_attribute(0)->set_ints(0, -2);
  }
  m = Optimized(b.Bytes(), {"cpu", "ref"});
  EXPECT_TRUE(NodesOf(*m, "LayerNormalization").empty()) << OpList(*m);
  // The mean, the deviation d, the variance or the denominator also read elsewhere (a graph output here).
  for (const char* v : {"mean", "d", "var", "s"}) {
    SCOPED_TRACE(v);
    const std::string bytes = NormModel({}, {2, 5, 16}, {v});
    m = Optimized(bytes, {"cpu", "ref"});
    EXPECT_TRUE(NodesOf(*m, "LayerNormalization").empty()) << OpList(*m);
    ExpectSameOutputs(bytes, kX, {"cpu", "ref"});
  }
  // The normalized value itself read elsewhere: it is what the fused node writes; gamma and beta stay outside it
  // (as one ScaleShift: fuse_scale_shift).
  const std::string bytes = NormModel({}, {2, 5, 16}, {"n"});
  m = Optimized(bytes, {"cpu", "ref"});
  EXPECT_EQ(OpList(*m), "ai.ferry::LayerNormalization ai.ferry::ScaleShift");
  ExpectSameOutputs(bytes, kX, {"cpu", "ref"});
}

TEST(FuseLayerNorm, GammaOfAnotherShapeStaysAMul) {
  // gamma [5, 16] varies along a dim that is not normalized; [1] and [1, 1, 1, 16] broadcast differently: the
  // core is still fused (with ones), the Mul by that gamma and the Add after it stay outside it: one ScaleShift
  // (fuse_scale_shift), or the two ops where gamma would grow the rank.
  for (const Shape& g : {Shape{5, 16}, Shape{1}, Shape{1, 1, 1, 16}}) {
    SCOPED_TRACE(ShapeToString(g));
    NormSpec s;
    s.gamma = g;
    const std::string bytes = NormModel(s);
    const auto m = Optimized(bytes, {"cpu", "ref"});
    EXPECT_EQ(OpList(*m), g.size() > 3 ? "ai.ferry::LayerNormalization Mul Add"
                                       : "ai.ferry::LayerNormalization ai.ferry::ScaleShift");
    ExpectSameOutputs(bytes, kX, {"cpu", "ref"});
  }
}

TEST(FuseLayerNorm, FrozenNodeUnknownDimsAndNonFloatAreLeftAlone) {
  const std::string bytes = NormModel({});
  EXPECT_TRUE(NodesOf(*Optimized(bytes, {"cpu", "ref"}, {"Sqrt"}), "LayerNormalization").empty());
  EXPECT_TRUE(NodesOf(*Optimized(bytes, {"cpu", "ref"}, {"AddBeta"}), "LayerNormalization").empty());
  // The normalized dim is symbolic: gamma cannot be checked against it.
  EXPECT_TRUE(NodesOf(*Optimized(NormModel({}, {2, 5, -1}), {"cpu", "ref"}), "LayerNormalization").empty());
  // Opset 13 in portable mode: no standard op exists, no ai.ferry op without backends.
  NormSpec s13;
  s13.opset = 13;
  EXPECT_TRUE(NodesOf(*Optimized(NormModel(s13), {}), "LayerNormalization").empty());
  EXPECT_EQ(NodesOf(*Optimized(NormModel(s13), {"cpu", "ref"}), "LayerNormalization").size(), 1u);
}

// A linear layer, the residual Add and nn.LayerNorm(16), node for node as torch.onnx.export writes them at opset 14.
std::string TorchBlock() {
  std::mt19937 rng(5);
  ModelBuilder b(14);
  b.Input("x", kF, {2, 4, 16});
  FloatInit(b, "w", {16, 16}, rng);
  FloatInit(b, "bias", {16}, rng);
  b.Node("MatMul", {"x", "w"}, {"mm"}, "/lin/MatMul");
  b.Node("Add", {"bias", "mm"}, {"lin"}, "/lin/Add");
  b.Node("Add", {"lin", "x"}, {"res"}, "/Add");
  b.Output(AddNorm(b, "res", {}, rng), kF, {});
  return b.Bytes();
}

TEST(FuseLayerNorm, TorchBlockBecomesFusedMatMulAndSkipLayerNorm) {
  const std::string bytes = TorchBlock();
  const auto m = Optimized(bytes, {"cpu", "ref"});
  EXPECT_EQ(OpList(*m), "ai.ferry::FusedMatMul ai.ferry::SkipLayerNormalization");
  ExpectSameOutputs(bytes, {{"x", {2, 4, 16}}}, {"cpu", "ref"});
  ExpectSameOutputs(bytes, {{"x", {2, 4, 16}}}, {"ref"});
}

// --- FuseRmsNorm -----------------------------------------------------------------------------------------------

// T5's RMSNorm as torch exports it: Cast(x), Pow, ReduceMean, Add eps, Sqrt, Div(1, ·), Mul, Cast, Mul by weight.
NormSpec T5(int64_t opset) {
  NormSpec s;
  s.opset = opset;
  s.rms = true;
  s.division = 2;
  s.cast = true;
  s.epsilon = 1e-6f;
  return s;
}

TEST(FuseRmsNorm, T5FormBecomesOneRmsNormWhereItRunsOnTheSameBackend) {
  const std::string bytes = NormModel(T5(14));
  auto m = Optimized(bytes, {"ref"});
  EXPECT_EQ(NodeLines(*m), "%scaled = ai.ferry::RMSNormalization(%x, %gamma) {axis=-1, epsilon=1e-06}\n");
  ExpectSameOutputs(bytes, kX, {"ref"});
  ExpectIdempotent(bytes, "fuse_layer_norm", {"ref"});
  // cpu runs the Sqrt, Div and Muls, and has an RMSNormalization kernel: the fused node stays on cpu.
  m = Optimized(bytes, {"cpu", "ref"});
  EXPECT_EQ(NodesOf(*m, "RMSNormalization").size(), 1u) << OpList(*m);
  ExpectSameOutputs(bytes, kX, {"cpu", "ref"});
  // Opset 23 has the standard op, also for the portable mode.
  m = Optimized(NormModel(T5(23)), {});
  EXPECT_EQ(NodeLines(*m), "%scaled = RMSNormalization(%x, %gamma) {axis=-1, epsilon=1e-06}\n");
  EXPECT_EQ(NodesOf(*m, "RMSNormalization")[0]->opset(), 23);
  ExpectSameOutputs(NormModel(T5(23)), kX, {"ref"});
}

TEST(FuseRmsNorm, OtherFormsAndNegatives) {
  NormSpec s;
  s.rms = true;
  s.mul_square = true;
  s.axes = {-2, -1};
  s.gamma = std::nullopt;
  std::string bytes = NormModel(s);
  auto m = Optimized(bytes, {"ref"});
  EXPECT_EQ(OpList(*m), "ai.ferry::RMSNormalization");
  EXPECT_EQ(NodesOf(*m, "RMSNormalization")[0]->GetInt("axis", 0), -2);
  ExpectSameOutputs(bytes, kX, {"ref"});
  // The mean square read twice; the square of something else than the numerator; a frozen node.
  bytes = NormModel(T5(14), {2, 5, 16}, {"var"});
  EXPECT_TRUE(NodesOf(*Optimized(bytes, {"ref"}), "RMSNormalization").empty());
  EXPECT_TRUE(NodesOf(*Optimized(NormModel(T5(14)), {"ref"}, {"Pow"}), "RMSNormalization").empty());
  ModelBuilder b(14);
  std::mt19937 rng(2);
  b.InputSym("x", kF, {2, 5, 16}, "N");
  b.Input("z", kF, {2, 5, 16});
  b.Output(AddNorm(b, "x", T5(14), rng), kF, {});
  for (auto& n : *b.graph().mutable_node()) {
    if (n.name() == "MulR") n.set_input(1, "z");  // z / rms(x)
  }
  EXPECT_TRUE(NodesOf(*Optimized(b.Bytes(), {"ref"}), "RMSNormalization").empty());
}

// --- FuseSkipLayerNorm -----------------------------------------------------------------------------------------

struct ResidualSpec {
  Shape a{2, 6, 32}, b{2, 6, 32};
  bool sum_read_again = false;  // pre-LN: the residual stream continues from the sum
  bool sum_output = false;      // the sum is a graph output
  bool mean_output = false;     // the LayerNormalization's Mean output is requested
  bool beta = true;
  int64_t axis = -1;
  int64_t opset = 17;
};

// a, b -> Add -> LayerNormalization(gamma, beta) -> Relu [-> Add(sum, ·)].
std::string ResidualModel(const ResidualSpec& s) {
  std::mt19937 rng(8);
  ModelBuilder b(s.opset);
  b.InputSym("a", kF, s.a, "N");
  b.InputSym("b", kF, s.b, "N");
  const int64_t rank = static_cast<int64_t>(s.a.size());
  const Shape norm(s.a.begin() + (s.axis < 0 ? s.axis + rank : s.axis), s.a.end());
  FloatInit(b, "gamma", norm, rng, 0.5f, 1.5f);
  b.Node("Add", {"a", "b"}, {"sum"}, "Add");
  auto& ln = s.beta ? b.Node("LayerNormalization", {"sum", "gamma", "beta"}, {"ln"}, "LayerNorm")
                    : b.Node("LayerNormalization", {"sum", "gamma"}, {"ln"}, "LayerNorm");
  if (s.beta) FloatInit(b, "beta", norm, rng);
  ModelBuilder::IntAttr(ln, "axis", s.axis);
  if (s.mean_output) ln.add_output("mean");
  b.Node("Relu", {"ln"}, {"act"}, "Relu");
  if (s.sum_read_again) {
    b.Node("Add", {"sum", "act"}, {"out"}, "Residual");
    b.Output("out", kF, {});
  } else {
    b.Output("act", kF, {});
  }
  if (s.sum_output) b.Output("sum", kF, {});
  if (s.mean_output) b.Output("mean", kF, {});
  return b.Bytes();
}

std::vector<std::pair<std::string, Shape>> Feeds(const ResidualSpec& s) {
  auto concrete = [](Shape d) {
    for (auto& x : d) x = x < 0 ? 2 : x;
    return d;
  };
  return {{"a", concrete(s.a)}, {"b", concrete(s.b)}};
}

TEST(FuseSkipLayerNorm, PostLnResidualBecomesOneNode) {
  const ResidualSpec s;
  const std::string bytes = ResidualModel(s);
  for (const Backends& backends : {Backends{"cpu", "ref"}, Backends{"ref"}}) {
    SCOPED_TRACE(backends.size());
    const auto m = Optimized(bytes, backends);
    EXPECT_EQ(NodeLines(*m),
              "%ln = ai.ferry::SkipLayerNormalization(%a, %b, %gamma, %beta) {axis=2, epsilon=1e-05}\n"
              "%act = Relu(%ln)\n");
    for (int threads : {1, 2}) ExpectSameOutputs(bytes, Feeds(s), backends, threads);
  }
  ExpectIdempotent(bytes, "fuse_skip_layer_norm", {"cpu", "ref"});
}

TEST(FuseSkipLayerNorm, SumReadAgainOrAGraphOutputBecomesTheSumOutput) {
  for (bool again : {false, true}) {
    ResidualSpec s;
    s.sum_read_again = again;
    s.sum_output = !again;
    s.beta = false;
    const std::string bytes = ResidualModel(s);
    const auto m = Optimized(bytes, {"cpu", "ref"});
    const auto fused = NodesOf(*m, "SkipLayerNormalization");
    ASSERT_EQ(fused.size(), 1u) << OpList(*m);
    ASSERT_EQ(fused[0]->num_outputs(), 2u);
    EXPECT_EQ(fused[0]->output(1)->name(), "sum");  // the same value: its readers and graph output keep it
    EXPECT_EQ(fused[0]->num_inputs(), 3u);
    EXPECT_TRUE(NodesOf(*m, "LayerNormalization").empty());
    ExpectSameOutputs(bytes, Feeds(s), {"cpu", "ref"});
    ExpectSameOutputs(bytes, Feeds(s), {"ref"});
  }
}

TEST(FuseSkipLayerNorm, SkipBroadcastOverLeadingDimsAndOtherAxes) {
  ResidualSpec pos;  // a position embedding [S, D] added to [N, S, D]
  pos.a = {-1, 6, 32};
  pos.b = {6, 32};
  ResidualSpec swapped;  // the broadcast operand first
  swapped.a = {1, 6, 32};
  swapped.b = {3, 6, 32};
  ResidualSpec two_dims;  // normalized over [6, 32]
  two_dims.axis = 1;
  for (const ResidualSpec& s : {pos, swapped, two_dims}) {
    const std::string bytes = ResidualModel(s);
    const auto m = Optimized(bytes, {"cpu", "ref"});
    const auto fused = NodesOf(*m, "SkipLayerNormalization");
    ASSERT_EQ(fused.size(), 1u) << OpList(*m);
    EXPECT_EQ(fused[0]->input(0)->name(), s.a.size() == s.b.size() && s.a[0] == 1 ? "b" : "a");
    for (const Backends& backends : {Backends{"cpu", "ref"}, Backends{"ref"}}) {
      ExpectSameOutputs(bytes, Feeds(s), backends);
    }
  }
}

TEST(FuseSkipLayerNorm, NegativeCases) {
  struct Case {
    const char* what;
    ResidualSpec spec;
  };
  std::vector<Case> cases;
  ResidualSpec both;  // both operands broadcast: neither has the sum's shape
  both.a = {2, 1, 32};
  both.b = {1, 6, 32};
  cases.push_back({"both operands broadcast", both});
  ResidualSpec inner;  // b broadcasts along an inner dim
  inner.b = {2, 1, 32};
  cases.push_back({"skip broadcast along an inner dim", inner});
  ResidualSpec mean;
  mean.mean_output = true;
  cases.push_back({"Mean output requested", mean});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto m = Optimized(ResidualModel(c.spec), {"cpu", "ref"});
    EXPECT_TRUE(NodesOf(*m, "SkipLayerNormalization").empty()) << OpList(*m);
  }
  const std::string bytes = ResidualModel({});
  EXPECT_TRUE(NodesOf(*Optimized(bytes, {}), "SkipLayerNormalization").empty());  // portable mode
  EXPECT_TRUE(NodesOf(*Optimized(bytes, {"cpu", "ref"}, {"Add"}), "SkipLayerNormalization").empty());
  EXPECT_TRUE(NodesOf(*Optimized(bytes, {"cpu", "ref"}, {"LayerNorm"}), "SkipLayerNormalization").empty());
}

}  // namespace
}  // namespace ferry
