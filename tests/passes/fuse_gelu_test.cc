// fuse_gelu: the tanh formula of GELU (and the erf one at opset 20, in the portable mode) => one Gelu node.
#include <gtest/gtest.h>

#include "passes/pass_list.h"
#include "pass_test_util.h"
#include "schemas/schema.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::NodesOf;
using pass_test::Optimized;
using pass_test::OpList;

// How the tanh formula 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) is written.
struct TanhForm {
  bool pow = true;             // x^3 as Pow(x, 3); else Mul(x, Mul(x, x)) (or Mul(Mul(x, x), x): sq_first)
  bool int_exponent = false;   // Pow's exponent an int64 constant
  bool sq_first = false;
  int half_at = 0;             // 0: Mul(Mul(x, a), 0.5)  1: Mul(Mul(x, 0.5), a)  2: Mul(x, Mul(a, 0.5))
  bool constants_first = false;  // Mul(c, v) / Add(c, v) instead of Mul(v, c) / Add(v, c)
  float kappa = 0.044715f, beta = 0.7978846f, one = 1.0f, half = 0.5f, exponent = 3.0f;
};

// y = gelu_tanh(3 * in) written as `f`, at `opset`; constants are initializers.
std::string TanhGeluModel(const TanhForm& f, int64_t opset = 17) {
  Net net(opset);
  net.b.Input("in", kF, {2, 3, 40});
  const std::string x = net.Op("Mul", {"in", net.Constant("three", 3.0f)});  // x is an intermediate value
  net.Constant("kappa", f.kappa);
  net.Constant("beta", f.beta);
  net.Constant("one", f.one);
  net.Constant("half", f.half);
  auto bin = [&](const std::string& op, const std::string& v, const std::string& c) {
    return f.constants_first ? net.Op(op, {c, v}) : net.Op(op, {v, c});
  };
  std::string cube;
  if (f.pow) {
    if (f.int_exponent) net.b.Int64Initializer("e", {}, {static_cast<int64_t>(f.exponent)});
    else net.Constant("e", f.exponent);
    cube = net.Op("Pow", {x, "e"});
  } else {
    const std::string sq = net.Op("Mul", {x, x});
    cube = f.sq_first ? net.Op("Mul", {sq, x}) : net.Op("Mul", {x, sq});
  }
  const std::string inner = bin("Mul", bin("Add", bin("Mul", cube, "kappa"), x), "beta");
  const std::string a = bin("Add", net.Op("Tanh", {inner}), "one");
  std::string y;
  if (f.half_at == 0) y = bin("Mul", net.Op("Mul", {x, a}), "half");
  else if (f.half_at == 1) y = net.Op("Mul", {bin("Mul", x, "half"), a});
  else y = net.Op("Mul", {x, bin("Mul", a, "half")});
  net.b.Output(y, kF, {});
  return net.b.Bytes();
}

std::vector<TanhForm> MatchedForms() {
  std::vector<TanhForm> forms;
  forms.push_back({});                                                      // Pow, HF's gelu_new
  forms.push_back({.pow = false, .half_at = 2, .constants_first = true});   // torch's export of gelu(tanh)
  forms.push_back({.pow = false, .sq_first = true, .half_at = 1});
  forms.push_back({.int_exponent = true, .half_at = 1, .constants_first = true});
  forms.push_back({.pow = false, .half_at = 2, .beta = 0.7978845608028654f});
  return forms;
}

TEST(FuseGeluTanh, EveryFormBecomesOneGelu) {
  int i = 0;
  for (const TanhForm& f : MatchedForms()) {
    SCOPED_TRACE(i++);
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
      const auto m = Optimized(TanhGeluModel(f), 2, backends);
      EXPECT_EQ(OpList(*m), "Mul ai.ferry::Gelu");
      const auto gelu = NodesOf(*m, "Gelu");
      ASSERT_EQ(gelu.size(), 1u);
      EXPECT_EQ(gelu[0]->GetString("approximate", ""), "tanh");
      EXPECT_EQ(gelu[0]->input(0), m->graph->nodes()[0]->output(0));
      EXPECT_EQ(m->graph->initializers().size(), 1u);  // the formula's constants are gone
      pass_test::ExpectSameOutputs(TanhGeluModel(f), 2, backends);
    }
  }
}

TEST(FuseGeluTanh, ExpectedIr) {
  const auto m = Optimized(TanhGeluModel({}), 2, {"ref"});
  EXPECT_EQ(ir::DumpGraph(*m->graph),
            "graph g (in: float32[2,3,40]) -> (Mul9: float32[2,3,40]) {\n"
            "  %three = initializer float32[]\n"
            "  %Mul1 = Mul(%in, %three)   # Mul_1, opset 17\n"
            "  %Mul9 = ai.ferry::Gelu(%Mul1) {approximate=\"tanh\"}   # Tanh_6_gelu, opset 1\n"
            "}\n");
}

TEST(FuseGeluTanh, Opset20MakesTheStandardGeluAlsoWithoutBackends) {
  for (const std::vector<std::string>& backends : {std::vector<std::string>{}, {"cpu", "ref"}, {"ref"}}) {
    SCOPED_TRACE(backends.size());
    const auto m = Optimized(TanhGeluModel({}, 20), 2, backends);
    EXPECT_EQ(OpList(*m), "Mul Gelu");
    const auto gelu = NodesOf(*m, "Gelu");
    ASSERT_EQ(gelu.size(), 1u);
    EXPECT_EQ(gelu[0]->domain(), "");
    EXPECT_EQ(gelu[0]->opset(), 20);
    EXPECT_EQ(gelu[0]->GetString("approximate", ""), "tanh");
    EXPECT_EQ(m->opsets.count(std::string(schemas::kFerryDomain)), 0u);
  }
  pass_test::ExpectSameOutputs(TanhGeluModel({}, 20), 2, {"cpu", "ref"});
  pass_test::ExpectSamePortableOutputs(TanhGeluModel({}, 20), 2, {"cpu", "ref"});
  // Below opset 20 the portable mode has no op to make.
  EXPECT_EQ(NodesOf(*Optimized(TanhGeluModel({}), 2, {}), "Gelu").size(), 0u);
}

// The erf form, as torch exports it, at `opset`.
std::string ErfGeluModel(int64_t opset) {
  Net net(opset);
  net.b.Input("x", kF, {4, 16});
  const std::string a =
      net.Op("Add", {net.Op("Erf", {net.Op("Div", {"x", net.Constant("sqrt2", 1.4142135f)})}), net.Constant("one", 1)});
  net.b.Output(net.Op("Mul", {net.Op("Mul", {"x", a}), net.Constant("half", 0.5f)}), kF, {});
  return net.b.Bytes();
}

TEST(FuseGeluTanh, ErfFormAtOpset20IsTheStandardGelu) {
  for (const std::vector<std::string>& backends : {std::vector<std::string>{}, {"cpu", "ref"}}) {
    const auto m = Optimized(ErfGeluModel(20), 2, backends);
    EXPECT_EQ(OpList(*m), "Gelu");
    EXPECT_EQ(NodesOf(*m, "Gelu")[0]->GetString("approximate", ""), "none");
  }
  EXPECT_EQ(OpList(*Optimized(ErfGeluModel(17), 2, {})), "Div Erf Add Mul Mul");
  EXPECT_EQ(OpList(*Optimized(ErfGeluModel(17), 2, {"ref"})), "ai.ferry::Gelu");
  pass_test::ExpectSameOutputs(ErfGeluModel(20), 2, {"ref"});
  pass_test::ExpectSamePortableOutputs(ErfGeluModel(20), 2, {"ref"});
}

TEST(FuseGeluTanh, Idempotent) {
  const passes::Pass* pass = nullptr;
  for (const auto& p : passes::AllPasses()) {
    if (p->name() == "fuse_gelu") pass = p.get();
  }
  ASSERT_NE(pass, nullptr);
  for (const std::vector<std::string>& backends : {std::vector<std::string>{}, {"cpu", "ref"}}) {
    auto m = pass_test::Import(TanhGeluModel({.pow = false}, 20));
    const auto ctx = pass_test::Context(2, backends);
    EXPECT_TRUE(pass->Apply(*m, ctx));
    const std::string once = ir::DumpGraph(*m->graph);
    EXPECT_FALSE(pass->Apply(*m, ctx));
    EXPECT_EQ(ir::DumpGraph(*m->graph), once);
  }
}

TEST(FuseGeluTanh, NearMissConstantsAreLeftAlone) {
  std::vector<TanhForm> misses(6);
  misses[0].kappa = 0.0447f;
  misses[1].beta = 0.8f;
  misses[2].one = 1.001f;
  misses[3].half = 0.4999f;
  misses[4].exponent = 2.0f;
  misses[5].int_exponent = true;
  misses[5].exponent = 4.0f;
  int i = 0;
  for (const TanhForm& f : misses) {
    SCOPED_TRACE(i++);
    const auto m = Optimized(TanhGeluModel(f, 20), 2, {"cpu", "ref"});
    EXPECT_TRUE(NodesOf(*m, "Gelu").empty());
    EXPECT_EQ(NodesOf(*m, "Tanh").size(), 1u);
  }
}

TEST(FuseGeluTanh, SharedIntermediatesAndFrozenNodesAreLeftAlone) {
  {
    TanhForm f;
    Net net;
    net.b.Input("x", kF, {4, 8});
    net.Constant("kappa", f.kappa);
    net.Constant("beta", f.beta);
    net.Constant("e", 3.0f);
    const std::string t =
        net.Op("Tanh", {net.Op("Mul", {net.Op("Add", {"x", net.Op("Mul", {net.Op("Pow", {"x", "e"}), "kappa"})}),
                                       "beta"})});
    const std::string a = net.Op("Add", {t, net.Constant("one", 1.0f)});
    net.b.Output(net.Op("Mul", {net.Op("Mul", {"x", a}), net.Constant("half", 0.5f)}), kF, {});
    net.b.Output(t, kF, {});  // the tanh is also a result
    EXPECT_TRUE(NodesOf(*Optimized(net.b.Bytes(), 2), "Gelu").empty());
  }
  for (const char* pin : {"Tanh", "Pow", "Mul_9"}) {
    SCOPED_TRACE(pin);
    EXPECT_TRUE(NodesOf(*Optimized(TanhGeluModel({}), 2, {"cpu", "ref"}, {pin}), "Gelu").empty());
  }
}

// A linear layer then the tanh GELU: MatMul, bias and Gelu become one FusedMatMul with activation GeluTanh (its
// oneDNN eltwise_gelu_tanh post-op on cpu); the model's standard Gelu-20 (approximate "tanh") too.
std::string LinearTanhGelu(int64_t opset) {
  Net net(opset);
  net.b.Input("in", kF, {2, 8, 16});
  net.Weights("w", {16, 24}, -0.5f, 0.5f);
  net.Weights("bias", {24}, -0.5f, 0.5f);
  const std::string h = net.Op("Add", {net.Op("MatMul", {"in", "w"}), "bias"});
  net.Constant("kappa", 0.044715f);
  net.Constant("beta", 0.7978846f);
  net.Constant("e", 3.0f);
  const std::string inner = net.Op("Mul", {net.Op("Add", {h, net.Op("Mul", {net.Op("Pow", {h, "e"}), "kappa"})}),
                                           "beta"});
  const std::string a = net.Op("Add", {net.Op("Tanh", {inner}), net.Constant("one", 1.0f)});
  net.b.Output(net.Op("Mul", {net.Op("Mul", {h, net.Constant("half", 0.5f)}), a}), kF, {});
  return net.b.Bytes();
}

TEST(FuseGeluTanh, AfterALinearLayerBecomesOneFusedMatMul) {
  for (int64_t opset : {17, 20}) {
    SCOPED_TRACE(opset);
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
      const auto m = Optimized(LinearTanhGelu(opset), 2, backends);
      EXPECT_EQ(OpList(*m), "ai.ferry::FusedMatMul");
      EXPECT_EQ(NodesOf(*m, "FusedMatMul")[0]->GetString("activation", ""), "GeluTanh");
      pass_test::ExpectSameOutputs(LinearTanhGelu(opset), 2, backends);
    }
    // Without backends: the standard Gelu at opset 20, nothing at 17; no FusedMatMul either way.
    EXPECT_EQ(OpList(*Optimized(LinearTanhGelu(opset), 2, {})),
              opset >= 20 ? "MatMul Add Gelu" : "MatMul Add Pow Mul Add Mul Tanh Add Mul Mul");
  }
}

}  // namespace
}  // namespace ferry
