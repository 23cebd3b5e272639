// fuse_scale_shift: X * S + T by constants (either operand order), and an inference BatchNormalization before an
// activation, become ai.ferry::ScaleShift with the activation fused; not when S or T would grow X, is not constant,
// or the Mul has another reader; a BatchNormalization alone stays. eliminate_identity drops a Pad by zeros. The
// optimized graphs compute what the unoptimized ones do, on cpu and on ref, and in the portable mode.
#include <gtest/gtest.h>

#include "ir/value_query.h"
#include "pass_test_util.h"
#include "passes/pass_list.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::NodesOf;
using pass_test::OpList;
using pass_test::Optimized;

struct Form {
  std::vector<int64_t> s_dims{3, 1, 1};  // per channel of x [2, 3, 5, 4]
  std::vector<int64_t> t_dims{3, 1, 1};
  bool s_first = false;         // Mul(S, X)
  bool t_first = false;         // Add(T, Mul)
  bool mul_read_twice = false;  // the product is a graph output too
  std::string activation;       // an op after the Add ("" none)
};

// A float initializer of any dims (ModelBuilder's takes a braced list).
void Initializer(Net& net, const std::string& name, const std::vector<int64_t>& dims, std::vector<float> values) {
  onnx::TensorProto* t = net.b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

std::string MulAdd(const Form& f) {
  Net net;
  net.b.Input("x", kF, {2, 3, 5, 4});
  auto size = [](const std::vector<int64_t>& d) {
    size_t n = 1;
    for (int64_t v : d) n *= static_cast<size_t>(v);
    return n;
  };
  Initializer(net, "s", f.s_dims, net.Random(size(f.s_dims), 0.5f, 2.0f));
  Initializer(net, "t", f.t_dims, net.Random(size(f.t_dims), 1.0f));
  const std::string m = f.s_first ? net.Op("Mul", {"s", "x"}) : net.Op("Mul", {"x", "s"});
  std::string y = f.t_first ? net.Op("Add", {"t", m}) : net.Op("Add", {m, "t"});
  if (!f.activation.empty()) y = net.Op(f.activation, {y});
  net.b.Output(y, kF, {});
  if (f.mul_read_twice) net.b.Output(m, kF, {});
  return net.b.Bytes();
}

TEST(FuseScaleShift, MulAddBecomesOneScaleShift) {
  for (const Form& f : {Form{}, Form{.s_first = true}, Form{.t_first = true}, Form{.s_dims = {}, .t_dims = {1}},
                        Form{.s_dims = {4}, .t_dims = {5, 4}}, Form{.s_dims = {2, 3, 5, 4}}}) {
    SCOPED_TRACE(OpList(*pass_test::Import(MulAdd(f))));
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
      const auto m = Optimized(MulAdd(f), 2, backends);
      EXPECT_EQ(OpList(*m), "ai.ferry::ScaleShift");
      EXPECT_EQ(m->graph->nodes()[0]->input(0)->name(), "x");
    }
    pass_test::ExpectSameOutputs(MulAdd(f), 2, {"cpu", "ref"}, 1e-6, 1e-6);
    pass_test::ExpectSameOutputs(MulAdd(f), 2, {"ref"}, 0, 0);  // ref rounds the product and the sum as they did
  }
}

TEST(FuseScaleShift, ActivationAfterItIsFused) {
  for (const char* act : {"Relu", "Sigmoid", "Tanh", "HardSwish"}) {
    SCOPED_TRACE(act);
    const Form f{.activation = act};
    const auto m = Optimized(MulAdd(f), 2);
    ASSERT_EQ(OpList(*m), "ai.ferry::ScaleShift");
    EXPECT_EQ(m->graph->nodes()[0]->GetString("activation", ""), act);
    pass_test::ExpectSameOutputs(MulAdd(f), 2, {"cpu", "ref"}, 1e-6, 1e-6);
    pass_test::ExpectSameOutputs(MulAdd(f), 2, {"ref"}, 0, 0);
  }
}

TEST(FuseScaleShift, LeavesOtherFormsAlone) {
  const Form kept[] = {
      {.s_dims = {4, 1, 1, 1, 1}},  // S would grow X (a higher rank)
      {.t_dims = {2, 2, 3, 5, 4}},  // so would T
      {.mul_read_twice = true},     // the product is read elsewhere
  };
  for (const Form& f : kept) {
    EXPECT_TRUE(NodesOf(*Optimized(MulAdd(f), 2), "ScaleShift").empty()) << OpList(*pass_test::Import(MulAdd(f)));
  }
  // A Mul by a value computed at run time.
  Net net;
  net.b.Input("x", kF, {2, 3});
  net.b.Input("s", kF, {2, 3});
  net.b.FloatInitializer("t", {3}, {1, 2, 3});
  net.b.Output(net.Op("Add", {net.Op("Mul", {"x", "s"}), "t"}), kF, {});
  EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 2)), "Mul Add");
}

// x -> BatchNormalization [-> activation], the BN not after a convolution (nothing to fold it into).
std::string BatchNorm(const std::string& activation, int64_t rank) {
  Net net;
  if (rank == 2) net.b.Input("x", kF, {2, 6});
  if (rank == 3) net.b.Input("x", kF, {2, 6, 5});
  if (rank == 4) net.b.Input("x", kF, {2, 6, 5, 3});
  std::vector<float> var = net.Random(6, 0.5f);
  for (float& v : var) v += 0.6f;
  net.b.FloatInitializer("gamma", {6}, net.Random(6, 1.5f));
  net.b.FloatInitializer("beta", {6}, net.Random(6, 0.5f));
  net.b.FloatInitializer("mean", {6}, net.Random(6, 0.5f));
  net.b.FloatInitializer("var", {6}, var);
  net.b.Node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"bn"}, "BN");
  net.b.Output(activation.empty() ? "bn" : net.Op(activation, {"bn"}), kF, {});
  return net.b.Bytes();
}

TEST(FuseScaleShift, BatchNormBeforeAnActivation) {
  for (int64_t rank : {2, 3, 4}) {
    SCOPED_TRACE(rank);
    const auto m = Optimized(BatchNorm("Relu", rank), 2);
    ASSERT_EQ(OpList(*m), "ai.ferry::ScaleShift");
    const ir::Node& n = *m->graph->nodes()[0];
    EXPECT_EQ(n.GetString("activation", ""), "Relu");
    const auto s = ir::KnownDims(n.input(1));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->size(), static_cast<size_t>(rank - 1));  // [C, 1, ...]: per channel of X
    EXPECT_EQ(m->graph->initializers().size(), 2u);       // the BN's four parameters are gone
    pass_test::ExpectSameOutputs(BatchNorm("Relu", rank), 2, {"cpu", "ref"}, 1e-5, 1e-5);
    pass_test::ExpectSameOutputs(BatchNorm("Relu", rank), 2, {"ref"}, 1e-5, 1e-5);
  }
  // Alone it stays: its kernels are one pass already.
  EXPECT_EQ(OpList(*Optimized(BatchNorm("", 4), 2)), "BatchNormalization");
}

TEST(FuseScaleShift, PortableOutputMatches) {
  const std::string bytes = MulAdd({.activation = "Relu"});
  pass_test::ExpectSamePortableOutputs(bytes, 2, {"ref"}, 0, 0);
}

TEST(EliminateIdentity, PadByZerosIsRemoved) {
  for (bool zeros : {true, false}) {
    Net net;
    net.b.Input("x", kF, {1, 2, 4, 4});
    net.b.Int64Initializer("pads", {8},
                           zeros ? std::vector<int64_t>(8, 0) : std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1});
    const std::string p = net.Op("Pad", {"x", "pads"});
    auto& pool = net.b.Node("AveragePool", {p}, {"y"}, "pool");
    pass_test::IntsAttr(pool, "kernel_shape", {2, 2});
    pass_test::IntsAttr(pool, "strides", {2, 2});
    net.b.Output("y", kF, {});
    EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 1)), zeros ? "AveragePool" : "Pad AveragePool");
    pass_test::ExpectSameOutputs(net.b.Bytes(), 1, {"cpu", "ref"}, 0, 0);
  }
}

}  // namespace
}  // namespace ferry
