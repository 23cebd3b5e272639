// fuse_hard_swish: HardSigmoid(x, 1/6, 0.5) * x (either order) => HardSwish(x); not when the HardSigmoid has
// another reader or other constants, nor below opset 14; the fused graph computes what the unfused one does.
#include <gtest/gtest.h>

#include "passes/pass_list.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::NodesOf;
using pass_test::Optimized;
using pass_test::OpList;

struct Form {
  bool x_first = false;        // Mul(x, HardSigmoid(x)) instead of Mul(HardSigmoid(x), x)
  float alpha = 1.0f / 6;
  bool beta_given = true;      // else the default (0.5)
  float beta = 0.5f;
  bool extra_reader = false;   // the HardSigmoid output is also a graph output
  int64_t opset = 17;
};

// y = (in * 3) * HardSigmoid(in * 3) written as `f`.
std::string Model(const Form& f) {
  Net net(f.opset);
  net.b.Input("in", kF, {2, 3, 40});
  const std::string x = net.Op("Mul", {"in", net.Constant("three", 3.0f)});
  std::string hs;
  auto& node = net.Node("HardSigmoid", {x}, &hs);
  pass_test::FloatAttr(node, "alpha", f.alpha);
  if (f.beta_given) pass_test::FloatAttr(node, "beta", f.beta);
  net.b.Output(f.x_first ? net.Op("Mul", {x, hs}) : net.Op("Mul", {hs, x}), kF, {});
  if (f.extra_reader) net.b.Output(hs, kF, {});
  return net.b.Bytes();
}

TEST(FuseHardSwish, BothOrdersBecomeOneHardSwish) {
  for (const Form& f : {Form{}, Form{.x_first = true}, Form{.beta_given = false}, Form{.alpha = 0.16666667f},
                        Form{.opset = 14}, Form{.opset = 21}}) {
    SCOPED_TRACE(std::to_string(f.x_first) + " opset " + std::to_string(f.opset));
    for (const std::vector<std::string>& backends :
         {std::vector<std::string>{"cpu", "ref"}, {"ref"}, std::vector<std::string>{}}) {
      const auto m = Optimized(Model(f), 2, backends);
      EXPECT_EQ(OpList(*m), "Mul HardSwish");
      const auto hswish = NodesOf(*m, "HardSwish");
      ASSERT_EQ(hswish.size(), 1u);
      EXPECT_EQ(hswish[0]->domain(), "");
      EXPECT_EQ(hswish[0]->input(0), m->graph->nodes()[0]->output(0));
    }
    // HardSigmoid's alpha x + beta and HardSwish's x / 6 + 0.5 differ by rounding only.
    pass_test::ExpectSameOutputs(Model(f), 2, {"ref"}, 1e-6, 1e-6);
    pass_test::ExpectSameOutputs(Model(f), 2, {"cpu", "ref"}, 1e-6, 1e-6);
    pass_test::ExpectSamePortableOutputs(Model(f), 2, {"ref"}, 1e-6, 1e-6);
  }
}

TEST(FuseHardSwish, ExpectedIr) {
  const auto m = Optimized(Model({}), 2, {"ref"});
  EXPECT_EQ(ir::DumpGraph(*m->graph),
            "graph g (in: float32[2,3,40]) -> (Mul3: float32[2,3,40]) {\n"
            "  %three = initializer float32[]\n"
            "  %Mul1 = Mul(%in, %three)   # Mul_1, opset 17\n"
            "  %Mul3 = HardSwish(%Mul1)   # HardSigmoid_2_hard_swish, opset 17\n"
            "}\n");
}

TEST(FuseHardSwish, LeavesOtherFormsAlone) {
  const Form kept[] = {
      {.extra_reader = true},             // the HardSigmoid output is read elsewhere too
      {.alpha = 0.2f},                    // HardSigmoid's default alpha: another function
      {.alpha = 0.1667f},                 // 1/6 only to 4 digits
      {.beta = 0.6f},                     // another beta
      {.alpha = 0.2f, .beta_given = false},
      {.opset = 13},                      // no HardSwish before opset 14
  };
  int i = 0;
  for (const Form& f : kept) {
    SCOPED_TRACE(i++);
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
      const auto m = Optimized(Model(f), 2, backends);
      EXPECT_EQ(NodesOf(*m, "HardSwish").size(), 0u) << OpList(*m);
      EXPECT_EQ(NodesOf(*m, "HardSigmoid").size(), 1u) << OpList(*m);
    }
  }
}

TEST(FuseHardSwish, OnlyAtLevel2) {
  EXPECT_EQ(OpList(*Optimized(Model({}), 1, {"cpu", "ref"})), "Mul HardSigmoid Mul");
}

TEST(FuseHardSwish, ThePassIsListedAtLevel2) {
  const auto pass = passes::MakeFuseHardSwish();
  EXPECT_EQ(pass->name(), "fuse_hard_swish");
  EXPECT_EQ(pass->level(), 2);
}

}  // namespace
}  // namespace ferry
