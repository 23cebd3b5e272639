// The ref kernel of ai.ferry FusedMatMul (schemas_ferry.cc) against its definition, run as standard ONNX ops on
// ref: FusedMatMul(A, B, C) == act(Add(MatMul(A, B), C)) for random shapes (1-D, 2-D and batched A, broadcast
// batch dims, 1-D B), with and without C, every activation (Gelu: ONNX Gelu-20); K = 0 (Y = act(C)); and the
// errors for a C that is not [N].
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ferry/session.h"
#include "ir/tensor_proto.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::Floats;
using testing::Str;

int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

struct NodeSpec {
  std::string op, domain;
  std::vector<std::string> inputs;
  std::string output;
  std::vector<onnx::AttributeProto> attrs;
};

using Named = std::vector<std::pair<std::string, Tensor>>;

// A model over ai.onnx (opset 20) and ai.ferry (opset 1) writing "Y", as a ref session with no optimization.
// `declare_shapes` false: inputs declared by element type only (no shape inference to catch a bad C).
std::unique_ptr<Session> RefSession(const std::vector<NodeSpec>& nodes, const Named& inputs, const Named& constants,
                                    bool declare_shapes = true) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  for (auto [domain, version] : {std::pair<const char*, int>{"", 20}, {"ai.ferry", 1}}) {
    auto* imp = m.add_opset_import();
    imp->set_domain(domain);
    imp->set_version(version);
  }
  auto* g = m.mutable_graph();
  g->set_name("fused_matmul");
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto* n = g->add_node();
    n->set_op_type(nodes[i].op);
    n->set_domain(nodes[i].domain);
    n->set_name("n" + std::to_string(i));
    for (const auto& in : nodes[i].inputs) n->add_input(in);
    n->add_output(nodes[i].output);
    for (const auto& a : nodes[i].attrs) *n->add_attribute() = a;
  }
  for (const auto& [name, t] : inputs) {
    auto* tt = g->add_input();
    tt->set_name(name);
    auto* type = tt->mutable_type()->mutable_tensor_type();
    type->set_elem_type(static_cast<int>(t.dtype()));
    if (!declare_shapes) continue;
    auto* shape = type->mutable_shape();
    for (int64_t d : t.shape()) shape->add_dim()->set_dim_value(d);
  }
  for (const auto& [name, t] : constants) ir::TensorToProto(t, name, g->add_initializer());
  g->add_output()->set_name("Y");
  const std::string bytes = m.SerializeAsString();
  SessionOptions o = testing::OnlyBackend("ref", 2);
  o.optimization_level = 0;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

Tensor RunRef(const std::vector<NodeSpec>& nodes, const Named& inputs, const Named& constants) {
  return RefSession(nodes, inputs, constants)->Run(inputs)[0].second;
}

Tensor Scalar(float v) {
  Tensor t(DataType::kFloat, Shape{});
  t.data<float>()[0] = v;
  return t;
}

struct Act {
  std::string name;
  std::vector<float> params;
};

const std::vector<Act>& Activations() {
  static const std::vector<Act> acts = {
      {"", {}},          {"Relu", {}},         {"LeakyRelu", {}},          {"LeakyRelu", {0.3f}},
      {"Clip", {}},      {"Clip", {-0.5f, 0.7f}}, {"Clip", {0.5f, -0.5f}},  // min > max: everything is max
      {"Sigmoid", {}},   {"Tanh", {}},         {"HardSigmoid", {}},        {"HardSigmoid", {0.5f, 0.25f}},
      {"HardSwish", {}}, {"Silu", {}},         {"Gelu", {}},                {"GeluTanh", {}},
      {"Mish", {}},  // the Mish-18 op
  };
  return acts;
}

// The standard ONNX nodes computing act(in) -> "Y" (Clip's bounds as the constants clip_min / clip_max).
void AppendStandardActivation(std::vector<NodeSpec>& nodes, Named& constants, const Act& act, const std::string& in) {
  const auto& p = act.params;
  if (act.name.empty()) {
    nodes.push_back({"Identity", "", {in}, "Y", {}});
  } else if (act.name == "LeakyRelu") {
    std::vector<onnx::AttributeProto> a;
    if (!p.empty()) a.push_back(testing::Float("alpha", p[0]));
    nodes.push_back({"LeakyRelu", "", {in}, "Y", a});
  } else if (act.name == "HardSigmoid") {
    std::vector<onnx::AttributeProto> a;
    if (!p.empty()) a = {testing::Float("alpha", p[0]), testing::Float("beta", p[1])};
    nodes.push_back({"HardSigmoid", "", {in}, "Y", a});
  } else if (act.name == "Clip") {
    // Ferry's defaults are -inf / +inf; ONNX Clip's absent bounds are lowest() / max(): pass them explicitly.
    constexpr float kInf = std::numeric_limits<float>::infinity();
    constants.emplace_back("clip_min", Scalar(p.empty() ? -kInf : p[0]));
    constants.emplace_back("clip_max", Scalar(p.empty() ? kInf : p[1]));
    nodes.push_back({"Clip", "", {in, "clip_min", "clip_max"}, "Y", {}});
  } else if (act.name == "Silu") {
    nodes.push_back({"Sigmoid", "", {in}, in + "_sig", {}});
    nodes.push_back({"Mul", "", {in, in + "_sig"}, "Y", {}});
  } else if (act.name == "GeluTanh") {
    nodes.push_back({"Gelu", "", {in}, "Y", {Str("approximate", "tanh")}});
  } else {
    nodes.push_back({act.name, "", {in}, "Y", {}});  // Gelu: opset 20, approximate "none"
  }
}

// act(MatMul(A, B) + C) from standard ops, and FusedMatMul, on the same inputs (C omitted when empty).
Tensor Standard(const Tensor& a, const Tensor& b, const Tensor& c, const Act& act) {
  std::vector<NodeSpec> nodes{{"MatMul", "", {"A", "B"}, "p", {}}};
  Named inputs{{"A", a}, {"B", b}}, constants;
  std::string s = "p";
  if (c.size() > 0) {
    inputs.emplace_back("C", c);
    nodes.push_back({"Add", "", {"C", "p"}, "s", {}});  // bias first, as torch exports it
    s = "s";
  }
  AppendStandardActivation(nodes, constants, act, s);
  return RunRef(nodes, inputs, constants);
}

Tensor Fused(const Tensor& a, const Tensor& b, const Tensor& c, const Act& act) {
  NodeSpec n{"FusedMatMul", "ai.ferry", {"A", "B"}, "Y", {}};
  Named inputs{{"A", a}, {"B", b}};
  if (c.size() > 0) {
    inputs.emplace_back("C", c);
    n.inputs.push_back("C");
  }
  if (!act.name.empty()) n.attrs.push_back(Str("activation", act.name));
  if (!act.params.empty()) n.attrs.push_back(Floats("activation_params", act.params));
  return RunRef({n}, inputs, {});
}

std::string ActName(const Act& a) {
  std::string s = a.name.empty() ? "none" : a.name;
  for (float p : a.params) s += " " + std::to_string(p);
  return s;
}

// Shapes of one random MatMul: ranks 1-4 for A, 1-3 for B, batch dims broadcasting (some 1s, ranks may differ).
std::pair<Shape, Shape> RandomShapes(std::mt19937& rng) {
  const int64_t ra = Pick(rng, 1, 4), rb = Pick(rng, 1, 3);
  const int64_t m = Pick(rng, 1, 9), k = Pick(rng, 1, 13), n = Pick(rng, 1, 11);
  const int64_t batch_rank = std::max<int64_t>(ra, rb) - 2;
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < batch_rank; ++i) batch.push_back(Pick(rng, 2, 3));
  auto operand = [&](int64_t rank, int64_t rows, int64_t cols) {
    if (rank == 1) return Shape{k};  // a 1-D A or B is a vector of K
    Shape s;
    for (int64_t i = batch_rank - (rank - 2); i < batch_rank; ++i) {
      s.push_back(Pick(rng, 0, 2) == 0 ? 1 : batch[static_cast<size_t>(i)]);
    }
    s.insert(s.end(), {rows, cols});
    return s;
  };
  return {operand(ra, m, k), operand(rb, k, n)};
}

TEST(RefFerryOpsFusedMatMul, EqualsMatMulAddActivationOnRandomShapes) {
  std::mt19937 rng(23);
  for (int i = 0; i < 30; ++i) {
    auto [as, bs] = RandomShapes(rng);
    // A few fixed forms among the random ones: a 2-D linear layer, a batched A over a shared B, K = 0.
    const std::pair<Shape, Shape> fixed[] = {{{5, 7}, {7, 3}}, {{2, 3, 5, 7}, {7, 4}}, {{2, 3, 0}, {0, 4}}};
    if (i < 3) std::tie(as, bs) = fixed[i];
    const int64_t n = bs.size() == 1 ? 1 : bs.back();
    const Tensor a = testing::RandomTensor(DataType::kFloat, as, rng, -2, 2);
    const Tensor b = testing::RandomTensor(DataType::kFloat, bs, rng, -1, 1);
    const Tensor c = testing::RandomTensor(DataType::kFloat, {n}, rng, -1, 1);
    for (bool with_c : {true, false}) {
      // Two vectors make a scalar, which Add would broadcast against C [1] to [1]; Y keeps MatMul's shape.
      if (with_c && as.size() == 1 && bs.size() == 1) continue;
      for (const Act& act : Activations()) {
        SCOPED_TRACE("A " + ShapeToString(as) + ", B " + ShapeToString(bs) + (with_c ? ", C" : "") + ", activation " +
                     ActName(act));
        const Tensor none;
        EXPECT_TRUE(testing::TensorsClose(Fused(a, b, with_c ? c : none, act), Standard(a, b, with_c ? c : none, act),
                                          1e-5, 1e-6));
      }
    }
  }
}

TEST(RefFerryOpsFusedMatMul, EdgeValuesPropagateLikeTheStandardOps) {
  // NaN, ±inf and huge values in A reach the activations as the standard ops would see them.
  std::mt19937 rng(24);
  const Tensor a = testing::RandomTensor(DataType::kFloat, {3, 16, 5}, rng, -1, 1, /*edges=*/true);
  const Tensor b = testing::RandomTensor(DataType::kFloat, {5, 6}, rng);
  const Tensor c = testing::RandomTensor(DataType::kFloat, {6}, rng);
  for (const Act& act : Activations()) {
    SCOPED_TRACE(ActName(act));
    EXPECT_TRUE(testing::TensorsClose(Fused(a, b, c, act), Standard(a, b, c, act), 1e-6, 0));
  }
}

TEST(RefFerryOpsFusedMatMul, CNotOfShapeNIsAnError) {
  std::mt19937 rng(25);
  const Tensor a = testing::RandomTensor(DataType::kFloat, {2, 3}, rng);
  const Tensor b = testing::RandomTensor(DataType::kFloat, {3, 4}, rng);
  const NodeSpec n{"FusedMatMul", "ai.ferry", {"A", "B", "C"}, "Y", {Str("activation", "Relu")}};
  for (const Shape& cs : {Shape{3}, Shape{1, 4}, Shape{2, 4}}) {
    SCOPED_TRACE(ShapeToString(cs));
    const Named inputs{{"A", a}, {"B", b}, {"C", testing::RandomTensor(DataType::kFloat, cs, rng)}};
    try {  // declared shapes: shape inference rejects the model
      RefSession({n}, inputs, {});
      ADD_FAILURE() << "expected the model to be rejected";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel) << e.what();
      EXPECT_NE(std::string(e.what()).find("input C"), std::string::npos) << e.what();
    }
    try {  // undeclared shapes: the kernel names C
      RefSession({n}, inputs, {}, false)->Run(inputs);
      ADD_FAILURE() << "expected an invalid argument";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("input C has shape " + ShapeToString(cs) + ", expected [4]"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ferry
