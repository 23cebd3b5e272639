// The ref kernels of Ferry's own ops (domain ai.ferry, schemas_ferry.cc) against their definitions, each checked
// as a composition of standard ONNX ops run on ref: FusedConv == Conv, Add, activation; ReorderFromBlocked .
// ReorderToBlocked == identity with zero padding lanes; BlockedConv == ReorderToBlocked . FusedConv (blocked and
// plain input, padding lanes of X ignored); BlockedPool == the standard pool between the reorders. Plus the errors
// for bad attributes (at session creation) and bad runtime inputs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "ir/tensor_proto.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::Int;
using testing::Ints;
using testing::Floats;
using testing::Str;

struct NodeSpec {
  std::string op;
  std::string domain;  // "" or "ai.ferry"
  std::vector<std::string> inputs, outputs;
  std::vector<onnx::AttributeProto> attrs;
};

// A small model over ai.onnx (opset 19) and ai.ferry (opset 1), run on ref alone with no graph optimization.
struct Model {
  std::vector<NodeSpec> nodes;
  std::vector<std::pair<std::string, Tensor>> inputs;        // graph inputs (fed at run time)
  std::vector<std::pair<std::string, Tensor>> initializers;  // constants
  std::vector<std::string> outputs;
  bool declare_shapes = true;  // false: inputs declared by element type only (no shape inference to catch errors)

  std::unique_ptr<Session> Create() const {
    onnx::ModelProto m;
    m.set_ir_version(10);
    for (auto [domain, version] : {std::pair<const char*, int>{"", 19}, {"ai.ferry", 1}}) {
      auto* imp = m.add_opset_import();
      imp->set_domain(domain);
      imp->set_version(version);
    }
    auto* g = m.mutable_graph();
    g->set_name("ferry_ops");
    int k = 0;
    for (const NodeSpec& spec : nodes) {
      auto* n = g->add_node();
      n->set_op_type(spec.op);
      n->set_domain(spec.domain);
      n->set_name("n" + std::to_string(k++) + "_" + spec.op);
      for (const auto& i : spec.inputs) n->add_input(i);
      for (const auto& o : spec.outputs) n->add_output(o);
      for (const auto& a : spec.attrs) *n->add_attribute() = a;
    }
    for (const auto& [name, t] : inputs) {
      auto* vi = g->add_input();
      vi->set_name(name);
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(static_cast<int>(t.dtype()));
      if (declare_shapes) {
        auto* shape = tt->mutable_shape();
        for (int64_t d : t.shape()) shape->add_dim()->set_dim_value(d);
      }
    }
    for (const auto& [name, t] : initializers) ir::TensorToProto(t, name, g->add_initializer());
    for (const auto& o : outputs) g->add_output()->set_name(o);
    const std::string bytes = m.SerializeAsString();
    SessionOptions o = testing::OnlyBackend("ref", 2);
    o.optimization_level = 0;
    return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
  }

  std::vector<Tensor> Run() const {
    auto session = Create();
    std::vector<Tensor> out;
    for (auto& [name, t] : session->Run(inputs)) out.push_back(t);
    return out;
  }
};

Tensor Random(const Shape& shape, std::mt19937& rng, bool edges = false) {
  return testing::RandomTensor(DataType::kFloat, shape, rng, -1, 1, edges);
}

Tensor Scalar(float v) {
  Tensor t(DataType::kFloat, Shape{});
  t.data<float>()[0] = v;
  return t;
}

int64_t Blocks(int64_t c, int64_t b) { return (c + b - 1) / b; }

// Element (n, c, s) of a blocked [N, Cb, S..., b] tensor, s the flat spatial index.
float BlockedAt(const Tensor& t, int64_t n, int64_t c, int64_t s) {
  const int64_t b = t.dim(t.rank() - 1), cb = t.dim(1);
  const int64_t spatial = t.size() / std::max<int64_t>(t.dim(0) * cb * b, 1);
  return t.data<float>()[((n * cb + c / b) * spatial + s) * b + c % b];
}

// Every padding lane (channel >= channels) of blocked t is +0.
::testing::AssertionResult PaddingIsZero(const Tensor& t, int64_t channels) {
  const int64_t b = t.dim(t.rank() - 1), cb = t.dim(1);
  const int64_t spatial = t.size() / std::max<int64_t>(t.dim(0) * cb * b, 1);
  for (int64_t n = 0; n < t.dim(0); ++n)
    for (int64_t c = channels; c < cb * b; ++c)
      for (int64_t s = 0; s < spatial; ++s) {
        const float v = BlockedAt(t, n, c, s);
        if (v != 0 || std::signbit(v)) {
          return ::testing::AssertionFailure() << "padding lane c=" << c << " n=" << n << " s=" << s << " is " << v;
        }
      }
  return ::testing::AssertionSuccess();
}

// --- activations ---

struct Act {
  std::string name;
  std::vector<float> params;
};

const std::vector<Act>& Activations() {
  static const std::vector<Act> acts = {
      {"", {}},          {"Relu", {}},        {"LeakyRelu", {}},           {"LeakyRelu", {0.3f}},
      {"Clip", {}},      {"Clip", {-0.5f, 0.7f}}, {"Clip", {0.5f, -0.5f}},  // min > max: everything is max
      {"Sigmoid", {}},   {"Tanh", {}},        {"HardSigmoid", {}},         {"HardSigmoid", {0.5f, 0.25f}},
      {"HardSwish", {}}, {"Silu", {}},       {"Mish", {}},  // the Mish-18 op (opset 19 here)
  };
  return acts;
}

std::string ActName(const Act& a) {
  std::string s = a.name.empty() ? "none" : a.name;
  for (float p : a.params) s += " " + std::to_string(p);
  return s;
}

void AddActivationAttrs(std::vector<onnx::AttributeProto>& attrs, const Act& act) {
  if (!act.name.empty()) attrs.push_back(Str("activation", act.name));
  if (!act.params.empty()) attrs.push_back(Floats("activation_params", act.params));
}

// Appends the standard ONNX nodes computing act(in) -> out.
void AppendStandardActivation(Model& m, const Act& act, const std::string& in, const std::string& out) {
  const auto& p = act.params;
  if (act.name.empty()) {
    m.nodes.push_back({"Identity", "", {in}, {out}, {}});
  } else if (act.name == "LeakyRelu") {
    std::vector<onnx::AttributeProto> a;
    if (!p.empty()) a.push_back(testing::Float("alpha", p[0]));
    m.nodes.push_back({"LeakyRelu", "", {in}, {out}, a});
  } else if (act.name == "HardSigmoid") {
    std::vector<onnx::AttributeProto> a;
    if (!p.empty()) a = {testing::Float("alpha", p[0]), testing::Float("beta", p[1])};
    m.nodes.push_back({"HardSigmoid", "", {in}, {out}, a});
  } else if (act.name == "Clip") {
    // Ferry's defaults are -inf / +inf (no clipping at all); ONNX Clip's absent bounds are lowest() / max(),
    // which would clip ±inf to ±FLT_MAX, so the composition passes the bounds explicitly.
    constexpr float kInf = std::numeric_limits<float>::infinity();
    m.initializers.emplace_back("clip_min", Scalar(p.empty() ? -kInf : p[0]));
    m.initializers.emplace_back("clip_max", Scalar(p.empty() ? kInf : p[1]));
    m.nodes.push_back({"Clip", "", {in, "clip_min", "clip_max"}, {out}, {}});
  } else if (act.name == "Silu") {
    m.nodes.push_back({"Sigmoid", "", {in}, {in + "_sig"}, {}});
    m.nodes.push_back({"Mul", "", {in, in + "_sig"}, {out}, {}});
  } else {
    m.nodes.push_back({act.name, "", {in}, {out}, {}});
  }
}

// --- convolutions ---

struct ConvCase {
  std::string name;
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, pads, dilations;
  std::string auto_pad;
};

const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      {"plain 3x3 padded", {2, 3, 7, 6}, {4, 3, 3, 3}, 1, {}, {1, 1, 1, 1}, {}, ""},
      {"grouped strided asymmetric pads", {1, 6, 8, 8}, {4, 3, 3, 3}, 2, {2, 2}, {0, 1, 1, 0}, {}, ""},
      {"depthwise dilated", {1, 5, 9, 7}, {5, 1, 3, 3}, 5, {}, {2, 2, 2, 2}, {2, 2}, ""},
      {"depthwise multiplier 2", {2, 4, 6, 6}, {8, 1, 3, 3}, 4, {2, 1}, {1, 0, 1, 0}, {}, ""},
      {"1-D strided", {2, 3, 10}, {5, 3, 4}, 1, {3}, {1, 2}, {}, ""},
      {"3-D", {1, 2, 4, 5, 5}, {3, 2, 2, 3, 3}, 1, {1, 2, 1}, {0, 1, 1, 1, 0, 1}, {}, ""},
      {"pointwise 17 channels", {1, 17, 5, 5}, {9, 17, 1, 1}, 1, {}, {}, {}, ""},
      {"SAME_UPPER strided", {1, 3, 7, 7}, {2, 3, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"},
  };
  return cases;
}

std::vector<onnx::AttributeProto> ConvAttrs(const ConvCase& c) {
  std::vector<onnx::AttributeProto> a;
  if (c.group != 1) a.push_back(Int("group", c.group));
  if (!c.strides.empty()) a.push_back(Ints("strides", c.strides));
  if (!c.pads.empty()) a.push_back(Ints("pads", c.pads));
  if (!c.dilations.empty()) a.push_back(Ints("dilations", c.dilations));
  if (!c.auto_pad.empty()) a.push_back(Str("auto_pad", c.auto_pad));
  return a;
}

// Conv's output shape for the case (computed by running the standard Conv once).
Shape ConvOutputShape(const ConvCase& c, std::mt19937& rng) {
  Model m;
  m.inputs = {{"X", Random(c.x, rng)}, {"W", Random(c.w, rng)}};
  m.nodes.push_back({"Conv", "", {"X", "W"}, {"Y"}, ConvAttrs(c)});
  m.outputs = {"Y"};
  return m.Run()[0].shape();
}

// The inputs of one FusedConv case: X, W, B (when with_b), Z (when with_z; with edge values: NaN, ±inf, ±0,
// denormals, 1e30 so that the activations' edge behaviour is compared too).
struct ConvInputs {
  Tensor x, w, b, z;
};

ConvInputs MakeConvInputs(const ConvCase& c, bool with_b, bool with_z, std::mt19937& rng) {
  ConvInputs in;
  in.x = Random(c.x, rng);
  in.w = Random(c.w, rng);
  if (with_b) in.b = Random({c.w[0]}, rng);
  if (with_z) in.z = Random(ConvOutputShape(c, rng), rng, /*edges=*/true);
  return in;
}

// act(Conv(X, W, B) + Z) from standard ops.
Tensor StandardFusedConv(const ConvCase& c, const ConvInputs& in, const Act& act) {
  Model m;
  m.inputs = {{"X", in.x}, {"W", in.w}};
  std::vector<std::string> conv_in = {"X", "W"};
  if (in.b.size() > 0) {
    m.inputs.emplace_back("B", in.b);
    conv_in.push_back("B");
  }
  m.nodes.push_back({"Conv", "", conv_in, {"c"}, ConvAttrs(c)});
  std::string s = "c";
  if (in.z.size() > 0) {
    m.inputs.emplace_back("Z", in.z);
    m.nodes.push_back({"Add", "", {"c", "Z"}, {"s"}, {}});
    s = "s";
  }
  AppendStandardActivation(m, act, s, "Y");
  m.outputs = {"Y"};
  return m.Run()[0];
}

// The FusedConv (block < 0) or BlockedConv node over graph inputs X, W, B?, Z? -> Y.
NodeSpec FerryConvNode(const ConvCase& c, const Act& act, bool with_b, bool with_z, int64_t block, bool plain_input,
                       const std::string& x = "X", const std::string& z = "Z") {
  NodeSpec n{block >= 0 ? "BlockedConv" : "FusedConv", "ai.ferry", {x, "W", with_b ? "B" : "", with_z ? z : ""}, {"Y"},
             ConvAttrs(c)};
  if (!with_z) {
    n.inputs.pop_back();
    if (!with_b) n.inputs.pop_back();
  }
  AddActivationAttrs(n.attrs, act);
  if (block >= 0) {
    n.attrs.push_back(Int("block", block));
    if (plain_input) n.attrs.push_back(Int("plain_input", 1));
  }
  return n;
}

Tensor RunFusedConv(const ConvCase& c, const ConvInputs& in, const Act& act) {
  Model m;
  const bool with_b = in.b.size() > 0, with_z = in.z.size() > 0;
  m.inputs = {{"X", in.x}, {"W", in.w}};
  if (with_b) m.inputs.emplace_back("B", in.b);
  if (with_z) m.inputs.emplace_back("Z", in.z);
  m.nodes.push_back(FerryConvNode(c, act, with_b, with_z, -1, false));
  m.outputs = {"Y"};
  return m.Run()[0];
}

TEST(RefFerryOpsFusedConv, EqualsConvAddActivationForEveryActivation) {
  std::mt19937 rng(7);
  for (const ConvCase& c : ConvCases()) {
    for (int bz = 0; bz < 4; ++bz) {
      const bool with_b = bz & 1, with_z = bz & 2;
      const ConvInputs in = MakeConvInputs(c, with_b, with_z, rng);
      for (const Act& act : Activations()) {
        SCOPED_TRACE(c.name + ", activation " + ActName(act) + (with_b ? ", B" : "") + (with_z ? ", Z" : ""));
        const Tensor want = StandardFusedConv(c, in, act);
        const Tensor got = RunFusedConv(c, in, act);
        EXPECT_TRUE(testing::TensorsClose(got, want, 1e-5, 1e-6));
      }
    }
  }
}

TEST(RefFerryOpsFusedConv, ActivationEdgeValues) {
  // A 1x1 identity convolution, so Y = act(X + Z) elementwise, on values where the activations' definitions
  // differ from naive code: NaN, ±inf, ±0, large |x| for Sigmoid / Silu.
  const std::vector<float> v = {std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                0.0f,
                                -0.0f,
                                -100.0f,
                                100.0f,
                                -1000.0f,
                                1000.0f,
                                -3.0f,
                                3.0f,
                                -2.5f,
                                1e-40f};
  Tensor x(DataType::kFloat, {1, 1, 1, static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) x.data<float>()[i] = v[i];
  Tensor w(DataType::kFloat, {1, 1, 1, 1});
  w.data<float>()[0] = 1;
  const ConvCase c{"identity", x.shape(), w.shape(), 1, {}, {}, {}, ""};
  ConvInputs in{x, w, Tensor(), Tensor()};
  for (const Act& act : Activations()) {
    SCOPED_TRACE(ActName(act));
    const Tensor got = RunFusedConv(c, in, act);
    EXPECT_TRUE(testing::TensorsClose(got, StandardFusedConv(c, in, act), 1e-6, 0));
    const float* y = got.data<float>();
    if (act.name == "Relu") {
      EXPECT_TRUE(std::isnan(y[0]));
      EXPECT_EQ(y[2], 0.0f);
    }
    if (act.name == "Sigmoid") {
      EXPECT_EQ(y[7], 0.0f);  // exp(1000) would overflow in 1 / (1 + exp(-x)) rearranged naively
      EXPECT_EQ(y[8], 1.0f);
      EXPECT_TRUE(std::isnan(y[0]));
    }
    if (act.name == "Silu") {
      EXPECT_FLOAT_EQ(y[6], 100.0f);
      EXPECT_EQ(y[7], 0.0f);
    }
    if (act.name == "Mish") {
      EXPECT_TRUE(std::isnan(y[0]));
      EXPECT_EQ(y[1], std::numeric_limits<float>::infinity());
      EXPECT_EQ(y[6], 100.0f);
      EXPECT_EQ(y[8], 1000.0f);  // softplus(1000) without exp overflow
      EXPECT_EQ(y[7], 0.0f);
      EXPECT_NEAR(y[9], -3 * std::tanh(std::log1p(std::exp(-3.0))), 1e-6);
    }
    if (act.name == "HardSwish") {
      EXPECT_EQ(y[9], 0.0f);
      EXPECT_EQ(y[10], 3.0f);
      EXPECT_TRUE(std::isnan(y[0]));
    }
    if (act.name == "Clip" && act.params.empty()) {
      EXPECT_EQ(y[1], std::numeric_limits<float>::infinity());  // default bounds are ±inf
      EXPECT_EQ(y[2], -std::numeric_limits<float>::infinity());
    }
    if (act.name == "Clip" && act.params.size() == 2 && act.params[0] > act.params[1]) {
      EXPECT_EQ(y[3], act.params[1]);
      EXPECT_TRUE(std::isnan(y[0]));
    }
  }
}

// --- reorders ---

TEST(RefFerryOpsReorder, RoundTripsAndZeroesPadding) {
  std::mt19937 rng(11);
  for (int64_t block : {1, 8, 16}) {
    for (int64_t ch : {1, 3, 5, 8, 16, 17}) {
      for (const Shape& rest : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 1, 3}}) {
        Shape shape{2, ch};
        shape.insert(shape.end(), rest.begin(), rest.end());
        SCOPED_TRACE("block " + std::to_string(block) + ", X " + ShapeToString(shape));
        Model m;
        m.inputs = {{"X", Random(shape, rng, /*edges=*/true)}};
        m.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"X"}, {"Xb"}, {Int("block", block)}});
        m.nodes.push_back(
            {"ReorderFromBlocked", "ai.ferry", {"Xb"}, {"Y"}, {Int("block", block), Int("channels", ch)}});
        m.outputs = {"Xb", "Y"};
        const auto out = m.Run();
        const Tensor& x = m.inputs[0].second;
        const Tensor& xb = out[0];
        Shape want_b = shape;
        want_b[1] = Blocks(ch, block);
        want_b.push_back(block);
        ASSERT_EQ(xb.shape(), want_b);
        EXPECT_TRUE(PaddingIsZero(xb, ch));
        const int64_t spatial = x.size() / (2 * ch);
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t c = 0; c < ch; ++c)
            for (int64_t s = 0; s < spatial; ++s) {
              const float want = x.data<float>()[(n * ch + c) * spatial + s];
              const float got = BlockedAt(xb, n, c, s);
              ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << n << "," << c << "," << s;
            }
        EXPECT_TRUE(testing::TensorsClose(out[1], x, 0, 0));
      }
    }
  }
}

TEST(RefFerryOpsReorder, ChannelsLastIsATransposeAndRoundTrips) {
  std::mt19937 rng(12);
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{1, 17, 3}, Shape{2, 5}, Shape{1, 0, 2, 2}}) {
    SCOPED_TRACE("X " + ShapeToString(shape));
    const int64_t ch = shape[1];
    Model m;
    m.inputs = {{"X", Random(shape, rng, /*edges=*/true)}};
    m.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"X"}, {"Xb"}, {Int("block", 0)}});
    m.nodes.push_back({"ReorderFromBlocked", "ai.ferry", {"Xb"}, {"Y"}, {Int("block", 0), Int("channels", ch)}});
    m.outputs = {"Xb", "Y"};
    const auto out = m.Run();
    const Tensor& x = m.inputs[0].second;
    Shape want_b{shape[0]};
    want_b.insert(want_b.end(), shape.begin() + 2, shape.end());
    want_b.push_back(ch);
    ASSERT_EQ(out[0].shape(), want_b);
    const int64_t spatial = ch == 0 ? 0 : x.size() / (shape[0] * ch);
    for (int64_t n = 0; n < shape[0]; ++n)
      for (int64_t c = 0; c < ch; ++c)
        for (int64_t s = 0; s < spatial; ++s) {
          const float want = x.data<float>()[(n * ch + c) * spatial + s];
          const float got = out[0].data<float>()[(n * spatial + s) * ch + c];
          ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << n << "," << c << "," << s;
        }
    EXPECT_TRUE(testing::TensorsClose(out[1], x, 0, 0));
  }
}

TEST(RefFerryOpsReorder, FromBlockedIgnoresPaddingLanes) {
  std::mt19937 rng(12);
  Tensor xb = Random({1, 2, 3, 8}, rng);  // 13 channels blocked by 8: lanes 13..15 of block 1 are padding
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t lane = 5; lane < 8; ++lane) xb.data<float>()[(1 * 3 + s) * 8 + lane] = std::nanf("");
  Model m;
  m.inputs = {{"Xb", xb}};
  m.nodes.push_back({"ReorderFromBlocked", "ai.ferry", {"Xb"}, {"Y"}, {Int("block", 8), Int("channels", 13)}});
  m.outputs = {"Y"};
  const Tensor y = m.Run()[0];
  ASSERT_EQ(y.shape(), (Shape{1, 13, 3}));
  for (int64_t c = 0; c < 13; ++c)
    for (int64_t s = 0; s < 3; ++s) EXPECT_EQ(y.data<float>()[c * 3 + s], BlockedAt(xb, 0, c, s));
}

// --- BlockedConv ---

TEST(RefFerryOpsBlockedConv, EqualsReorderOfFusedConv) {
  std::mt19937 rng(13);
  const std::vector<Act> acts = {{"", {}}, {"Relu", {}}, {"Clip", {0.0f, 6.0f}}, {"Silu", {}}};
  size_t k = 0;
  for (const ConvCase& c : ConvCases()) {
    for (int64_t block : {0, 8, 16}) {  // 0: channels-last
      for (bool plain_input : {false, true}) {
        for (int bz = 0; bz < 4; ++bz) {
          const bool with_b = bz & 1, with_z = bz & 2;
          const Act& act = acts[k++ % acts.size()];
          SCOPED_TRACE(c.name + ", block " + std::to_string(block) + (plain_input ? ", plain input" : "") +
                       ", activation " + ActName(act) + (with_b ? ", B" : "") + (with_z ? ", Z" : ""));
          const ConvInputs in = MakeConvInputs(c, with_b, with_z, rng);
          // Want: ReorderToBlocked(FusedConv(X, W, B, Z)).
          Model want;
          want.inputs = {{"X", in.x}, {"W", in.w}};
          if (with_b) want.inputs.emplace_back("B", in.b);
          if (with_z) want.inputs.emplace_back("Z", in.z);
          want.nodes.push_back(FerryConvNode(c, act, with_b, with_z, -1, false));
          want.nodes.back().outputs = {"Yp"};
          want.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"Yp"}, {"Y"}, {Int("block", block)}});
          want.outputs = {"Y"};
          // Got: BlockedConv(ReorderToBlocked(X) or X, W, B, ReorderToBlocked(Z)).
          Model got;
          got.inputs = want.inputs;
          if (!plain_input) got.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"X"}, {"Xb"}, {Int("block", block)}});
          if (with_z) got.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"Z"}, {"Zb"}, {Int("block", block)}});
          const std::string x_in = plain_input ? "X" : "Xb";
          got.nodes.push_back(FerryConvNode(c, act, with_b, with_z, block, plain_input, x_in, "Zb"));
          got.outputs = {"Y"};
          const Tensor y = got.Run()[0];
          EXPECT_TRUE(testing::TensorsClose(y, want.Run()[0], 1e-5, 1e-6));
          if (block > 0) {
            EXPECT_TRUE(PaddingIsZero(y, c.w[0]));
          }
        }
      }
    }
  }
}

TEST(RefFerryOpsBlockedConv, IgnoresPaddingLanesOfXAndZ) {
  // Blocked X and Z fed directly, their padding lanes full of NaN: the result is the same as with zero padding.
  std::mt19937 rng(14);
  const ConvCase c{"5 -> 3 channels", {2, 5, 6, 6}, {3, 5, 3, 3}, 1, {}, {1, 1, 1, 1}, {}, ""};
  const ConvInputs in = MakeConvInputs(c, true, true, rng);
  const Act act{"LeakyRelu", {0.2f}};
  auto blocked = [&](const Tensor& t) {
    Model m;
    m.inputs = {{"T", t}};
    m.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"T"}, {"Tb"}, {Int("block", 8)}});
    m.outputs = {"Tb"};
    return m.Run()[0];
  };
  Tensor xb = blocked(in.x), zb = blocked(in.z);
  const Tensor clean_x = xb.Clone(), clean_z = zb.Clone();
  for (Tensor* t : {&xb, &zb}) {
    const int64_t ch = t == &xb ? 5 : 3;
    const int64_t spatial = t->size() / (t->dim(0) * 8);
    for (int64_t n = 0; n < t->dim(0); ++n)
      for (int64_t s = 0; s < spatial; ++s)
        for (int64_t lane = ch; lane < 8; ++lane) t->data<float>()[(n * spatial + s) * 8 + lane] = std::nanf("");
  }
  auto run = [&](const Tensor& x, const Tensor& z) {
    Model m;
    m.inputs = {{"Xb", x}, {"W", in.w}, {"B", in.b}, {"Zb", z}};
    m.nodes.push_back(FerryConvNode(c, act, true, true, 8, false, "Xb", "Zb"));
    m.outputs = {"Y"};
    return m.Run()[0];
  };
  const Tensor y = run(xb, zb);
  EXPECT_TRUE(testing::TensorsClose(y, run(clean_x, clean_z), 0, 0));
  EXPECT_TRUE(PaddingIsZero(y, 3));
}

// --- BlockedPool ---

struct PoolCase {
  std::string name, mode;
  Shape x;
  std::vector<onnx::AttributeProto> attrs;
};

TEST(RefFerryOpsBlockedPool, EqualsStandardPoolBetweenReorders) {
  std::mt19937 rng(15);
  std::vector<PoolCase> cases;
  for (int64_t ch : {3, 17}) {
    const Shape x2{2, ch, 7, 8}, x1{1, ch, 9}, x3{1, ch, 4, 5, 3};
    cases.push_back({"max 3x3 s2 p1", "MaxPool", x2, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}),
                                                     Ints("pads", {1, 1, 1, 1})}});
    cases.push_back({"max ceil dilated", "MaxPool", x2, {Ints("kernel_shape", {2, 3}), Ints("strides", {2, 2}),
                                                        Ints("dilations", {2, 1}), Int("ceil_mode", 1)}});
    cases.push_back({"max 1-D SAME_LOWER", "MaxPool", x1, {Ints("kernel_shape", {4}), Ints("strides", {2}),
                                                          Str("auto_pad", "SAME_LOWER")}});
    cases.push_back({"max 3-D", "MaxPool", x3, {Ints("kernel_shape", {2, 2, 2}), Ints("pads", {0, 1, 0, 1, 0, 1})}});
    cases.push_back({"avg exclude pad", "AveragePool", x2, {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 2, 1, 0})}});
    cases.push_back({"avg include pad", "AveragePool", x2, {Ints("kernel_shape", {3, 2}), Ints("strides", {2, 1}),
                                                           Ints("pads", {1, 1, 1, 1}), Int("count_include_pad", 1)}});
    cases.push_back({"avg ceil dilated", "AveragePool", x2, {Ints("kernel_shape", {2, 2}), Ints("strides", {3, 3}),
                                                            Ints("dilations", {2, 2}), Int("ceil_mode", 1)}});
    cases.push_back({"avg 1-D", "AveragePool", x1, {Ints("kernel_shape", {3}), Ints("strides", {2})}});
    cases.push_back({"global avg", "GlobalAveragePool", x2, {}});
    cases.push_back({"global max", "GlobalMaxPool", x2, {}});
    cases.push_back({"global avg 1-D", "GlobalAveragePool", x1, {}});
    cases.push_back({"global max 3-D", "GlobalMaxPool", x3, {}});
  }
  for (const PoolCase& pc : cases) {
    for (int64_t block : {0, 8, 16}) {  // 0: channels-last
      const int64_t ch = pc.x[1];
      SCOPED_TRACE(pc.name + ", X " + ShapeToString(pc.x) + ", block " + std::to_string(block));
      const Tensor x = Random(pc.x, rng);
      Model want;
      want.inputs = {{"X", x}};
      want.nodes.push_back({pc.mode, "", {"X"}, {"Y"}, pc.attrs});
      want.outputs = {"Y"};
      Model got;
      got.inputs = {{"X", x}};
      got.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"X"}, {"Xb"}, {Int("block", block)}});
      auto attrs = pc.attrs;
      attrs.push_back(Int("block", block));
      attrs.push_back(Str("mode", pc.mode));
      got.nodes.push_back({"BlockedPool", "ai.ferry", {"Xb"}, {"Yb"}, attrs});
      got.nodes.push_back(
          {"ReorderFromBlocked", "ai.ferry", {"Yb"}, {"Y"}, {Int("block", block), Int("channels", ch)}});
      got.outputs = {"Y", "Yb"};
      const auto out = got.Run();
      EXPECT_TRUE(testing::TensorsClose(out[0], want.Run()[0], 1e-6, 1e-7));
      if (block > 0) {
        EXPECT_TRUE(PaddingIsZero(out[1], ch));  // X's padding lanes were zero, pools keep zeros
      }
    }
  }
}

// --- errors ---

std::string CreateError(const Model& m) {
  try {
    m.Create();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string RunError(const Model& m, ErrorCategory* category) {
  auto session = m.Create();
  try {
    session->Run(m.inputs);
  } catch (const Error& e) {
    *category = e.category();
    return e.what();
  }
  return "";
}

Model FusedConvModel(const std::string& activation, const std::vector<float>& params) {
  std::mt19937 rng(16);
  Model m;
  m.inputs = {{"X", Random({1, 2, 4, 4}, rng)}, {"W", Random({3, 2, 3, 3}, rng)}};
  NodeSpec n{"FusedConv", "ai.ferry", {"X", "W"}, {"Y"}, {Str("activation", activation)}};
  if (!params.empty()) n.attrs.push_back(Floats("activation_params", params));
  m.nodes.push_back(n);
  m.outputs = {"Y"};
  return m;
}

TEST(RefFerryOpsErrors, UnknownActivationIsRejectedAtSessionCreation) {
  const std::string e = CreateError(FusedConvModel("Softplus", {}));
  EXPECT_NE(e.find("Softplus"), std::string::npos) << e;
  EXPECT_NE(e.find("activation"), std::string::npos) << e;
}

TEST(RefFerryOpsErrors, WrongActivationParamCountIsRejectedAtSessionCreation) {
  for (const auto& [act, params] : std::vector<std::pair<std::string, std::vector<float>>>{
           {"LeakyRelu", {0.1f, 0.2f}}, {"Clip", {1.0f}}, {"Relu", {1.0f}}, {"HardSigmoid", {0.1f, 0.2f, 0.3f}}}) {
    const std::string e = CreateError(FusedConvModel(act, params));
    EXPECT_NE(e.find("activation_params"), std::string::npos) << act << ": " << e;
    EXPECT_NE(e.find(act), std::string::npos) << e;
  }
  EXPECT_EQ(CreateError(FusedConvModel("LeakyRelu", {0.1f})), "");
  EXPECT_EQ(CreateError(FusedConvModel("Clip", {})), "");
}

TEST(RefFerryOpsErrors, BadRuntimeInputsNameTheInput) {
  std::mt19937 rng(17);
  ErrorCategory cat = ErrorCategory::kInternal;
  {  // FusedConv: Z not Y's shape
    Model m = FusedConvModel("Relu", {});
    m.declare_shapes = false;
    m.inputs.emplace_back("Z", Random({1, 3, 2, 3}, rng));
    m.nodes[0].inputs = {"X", "W", "", "Z"};
    const std::string e = RunError(m, &cat);
    EXPECT_EQ(cat, ErrorCategory::kInvalidArgument) << e;
    EXPECT_NE(e.find("input Z has shape [1,3,2,3], expected [1,3,2,2]"), std::string::npos) << e;
  }
  auto blocked_conv = [&](const Shape& x, const Shape& z, int64_t block) {
    Model m;
    m.declare_shapes = false;
    m.inputs = {{"X", Random(x, rng)}, {"W", Random({3, 5, 3, 3}, rng)}, {"Z", Random(z, rng)}};
    m.nodes.push_back({"BlockedConv", "ai.ferry", {"X", "W", "", "Z"}, {"Y"}, {Int("block", block)}});
    m.outputs = {"Y"};
    return m;
  };
  {  // X blocked by 16, the node says 8
    const std::string e = RunError(blocked_conv({1, 1, 4, 4, 16}, {1, 1, 2, 2, 8}, 8), &cat);
    EXPECT_EQ(cat, ErrorCategory::kInvalidArgument) << e;
    EXPECT_NE(e.find("input X has shape [1,1,4,4,16]"), std::string::npos) << e;
    EXPECT_NE(e.find("expected [1,1,4,4,8] ([1,5,4,4] blocked by 8)"), std::string::npos) << e;
  }
  {  // X has two channel blocks, W wants 5 channels (one block of 8)
    const std::string e = RunError(blocked_conv({1, 2, 4, 4, 8}, {1, 1, 2, 2, 8}, 8), &cat);
    EXPECT_NE(e.find("input X has shape [1,2,4,4,8]"), std::string::npos) << e;
  }
  {  // Z plain where a blocked Z is expected
    const std::string e = RunError(blocked_conv({1, 1, 4, 4, 8}, {1, 3, 2, 2}, 8), &cat);
    EXPECT_EQ(cat, ErrorCategory::kInvalidArgument) << e;
    EXPECT_NE(e.find("input Z has shape [1,3,2,2], expected [1,1,2,2,8]"), std::string::npos) << e;
  }
  {  // ReorderFromBlocked: 20 channels need 3 blocks of 8
    Model m;
    m.declare_shapes = false;
    m.inputs = {{"X", Random({1, 2, 3, 8}, rng)}};
    m.nodes.push_back({"ReorderFromBlocked", "ai.ferry", {"X"}, {"Y"}, {Int("block", 8), Int("channels", 20)}});
    m.outputs = {"Y"};
    const std::string e = RunError(m, &cat);
    EXPECT_EQ(cat, ErrorCategory::kInvalidArgument) << e;
    EXPECT_NE(e.find("input X has shape [1,2,3,8], expected [1,3,3,8] ([1,20,3] blocked by 8)"), std::string::npos) << e;
  }
  {  // BlockedPool: last dim not the block
    Model m;
    m.declare_shapes = false;
    m.inputs = {{"X", Random({1, 2, 3, 3, 16}, rng)}};
    m.nodes.push_back({"BlockedPool", "ai.ferry", {"X"}, {"Y"}, {Int("block", 8), Str("mode", "GlobalMaxPool")}});
    m.outputs = {"Y"};
    const std::string e = RunError(m, &cat);
    EXPECT_EQ(cat, ErrorCategory::kInvalidArgument) << e;
    EXPECT_NE(e.find("input X has shape [1,2,3,3,16]"), std::string::npos) << e;
  }
}

TEST(RefFerryOpsErrors, BadAttributesAreRejectedAtSessionCreation) {
  std::mt19937 rng(18);
  Model pool;
  pool.inputs = {{"X", Random({1, 1, 3, 3, 8}, rng)}};
  pool.nodes.push_back({"BlockedPool", "ai.ferry", {"X"}, {"Y"}, {Int("block", 8), Str("mode", "LpPool")}});
  pool.outputs = {"Y"};
  std::string e = CreateError(pool);
  EXPECT_NE(e.find("LpPool"), std::string::npos) << e;

  Model reorder;
  reorder.inputs = {{"X", Random({1, 3, 2}, rng)}};
  reorder.nodes.push_back({"ReorderToBlocked", "ai.ferry", {"X"}, {"Y"}, {Int("block", -1)}});
  reorder.outputs = {"Y"};
  e = CreateError(reorder);
  EXPECT_NE(e.find("block"), std::string::npos) << e;
}

}  // namespace
}  // namespace ferry
