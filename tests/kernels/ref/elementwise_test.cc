// Elementwise reference kernels beyond the ONNX node tests: every broadcast path against a naive loop, legacy
// (opset < 7) broadcast with axis, integer edge cases (division by zero, INT_MIN / -1, over-wide shifts),
// Cast's string formatting and opset-1 string `to`, Clip's attribute form, PRelu's per-channel slope.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "ferry/float16.h"
#include "ferry/session.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

// A model with one node of `op` over graph inputs named x0, x1, ... of the given types, on the ref backend alone
// (these are ref kernel tests).
std::unique_ptr<Session> OneNode(const std::string& op, const std::vector<DataType>& inputs, int opset,
                                 const std::function<void(onnx::NodeProto&)>& configure = {}) {
  std::vector<testing::NodeInput> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back({"x" + std::to_string(i), inputs[i]});
  return testing::OneNodeSession(op, in, {"y"}, opset, configure, testing::OnlyBackend("ref", 2));
}

onnx::AttributeProto* Attr(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

Tensor Eval(const Session& s, std::vector<Tensor> in) {
  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < in.size(); ++i) named.emplace_back("x" + std::to_string(i), in[i]);
  return s.Run(named).at(0).second;
}

template <typename T>
Tensor Make(DataType dt, Shape shape, std::vector<T> v) {
  return Tensor::FromVector<T>(dt, std::move(shape), v);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

// Naive numpy-broadcast index of output element `o` into an input of shape `in`.
int64_t BroadcastIndex(const Shape& out, const Shape& in, int64_t o) {
  int64_t idx = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    int64_t coord = o % out[k];
    o /= out[k];
    size_t off = out.size() - in.size();
    if (k >= off) {
      int64_t d = in[k - off];
      idx += (d == 1 ? 0 : coord) * stride;
      stride *= d;
    }
  }
  return idx;
}

// Relu is max(x, 0): NaN propagates (numpy.maximum and the ONNX reference implementation), infinities map as
// expected — on ref and on cpu (every ISA variant the host has is the one the cpu backend picks).
TEST(Elementwise, ReluPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  testing::OpTest t{.op = "Relu",
                    .inputs = {testing::In("x", Make<float>(DataType::kFloat, {6}, {nan, -1, 0, 2, -inf, inf}))}};
  for (const char* backend : {"ref", "cpu"}) {
    auto v = Values<float>(testing::RunOn(t, {backend}, true, 1).at(0).second);
    EXPECT_TRUE(std::isnan(v[0])) << backend;
    EXPECT_EQ(v[1], 0.0f) << backend;
    EXPECT_EQ(v[2], 0.0f) << backend;
    EXPECT_EQ(v[3], 2.0f) << backend;
    EXPECT_EQ(v[4], 0.0f) << backend;
    EXPECT_EQ(v[5], inf) << backend;
  }
}

TEST(Elementwise, BroadcastPathsMatchNaive) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4, 4);
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 3, 4}},       {{2, 3, 4}, {}},           {{1}, {5, 2}},          {{2, 3, 4, 5}, {3, 1, 1}},
      {{8, 128, 64}, {64}},         {{4, 1, 5}, {1, 3, 1}},    {{2, 1, 3, 1}, {1, 4, 1, 6}}, {{3, 0, 2}, {2}},
      {{1, 300, 1}, {70, 1, 130}},  {{5, 1}, {1, 1, 7}},
  };
  auto s = OneNode("Sub", {DataType::kFloat, DataType::kFloat}, 14);
  for (const auto& c : cases) {
    Tensor a(DataType::kFloat, c.a), b(DataType::kFloat, c.b);
    for (int64_t i = 0; i < a.size(); ++i) a.data<float>()[i] = dist(rng);
    for (int64_t i = 0; i < b.size(); ++i) b.data<float>()[i] = dist(rng);
    Tensor y = Eval(*s, {a, b});
    for (int64_t o = 0; o < y.size(); ++o) {
      float expect = a.data<float>()[BroadcastIndex(y.shape(), c.a, o)] - b.data<float>()[BroadcastIndex(y.shape(), c.b, o)];
      ASSERT_EQ(y.data<float>()[o], expect) << ShapeToString(c.a) << " - " << ShapeToString(c.b) << " at " << o;
    }
  }
  // Incompatible shapes are an InvalidArgument naming the shapes.
  EXPECT_THROW(Eval(*s, {Tensor(DataType::kFloat, {2, 3}), Tensor(DataType::kFloat, {4})}), InvalidArgumentError);
}

TEST(Elementwise, WhereBroadcastsThreeInputs) {
  auto s = OneNode("Where", {DataType::kBool, DataType::kString, DataType::kString}, 16);
  Tensor c = Make<bool>(DataType::kBool, {2, 1}, {true, false});
  Tensor x = Make<std::string>(DataType::kString, {3}, {"a", "b", "c"});
  Tensor y = Make<std::string>(DataType::kString, {}, {"z"});
  Tensor out = Eval(*s, {c, x, y});
  ASSERT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<std::string>(out), (std::vector<std::string>{"a", "b", "c", "z", "z", "z"}));
}

TEST(Elementwise, LegacyBroadcastWithAxis) {
  // Opset 6 Add with broadcast=1, axis=1: B of shape [3] aligns with A's dim 1 in [2, 3, 2].
  auto s = OneNode("Add", {DataType::kFloat, DataType::kFloat}, 6, [](onnx::NodeProto& n) {
    Attr(n, "broadcast", onnx::AttributeProto::INT)->set_i(1);
    Attr(n, "axis", onnx::AttributeProto::INT)->set_i(1);
  });
  Tensor a(DataType::kFloat, {2, 3, 2});
  Tensor b = Make<float>(DataType::kFloat, {3}, {10, 20, 30});
  Tensor y = Eval(*s, {a, b});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{10, 10, 20, 20, 30, 30, 10, 10, 20, 20, 30, 30}));
}

TEST(Elementwise, IntegerEdgeCases) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto div = OneNode("Div", {DataType::kInt32, DataType::kInt32}, 14);
  Tensor y = Eval(*div, {Make<int32_t>(DataType::kInt32, {4}, {7, -7, kMin, 5}),
                        Make<int32_t>(DataType::kInt32, {4}, {2, 2, -1, 0})});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{3, -3, kMin, 0}));

  auto mod = OneNode("Mod", {DataType::kInt32, DataType::kInt32}, 13);
  y = Eval(*mod, {Make<int32_t>(DataType::kInt32, {4}, {-4, 7, kMin, 5}),
                 Make<int32_t>(DataType::kInt32, {4}, {3, -3, -1, 0})});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{2, -2, 0, 0}));

  auto shift = OneNode("BitShift", {DataType::kUint8, DataType::kUint8}, 11, [](onnx::NodeProto& n) {
    Attr(n, "direction", onnx::AttributeProto::STRING)->set_s("LEFT");
  });
  y = Eval(*shift, {Make<uint8_t>(DataType::kUint8, {3}, {1, 3, 255}), Make<uint8_t>(DataType::kUint8, {3}, {7, 1, 8})});
  EXPECT_EQ(Values<uint8_t>(y), (std::vector<uint8_t>{128, 6, 0}));

  auto pow = OneNode("Pow", {DataType::kInt64, DataType::kInt32}, 15);
  y = Eval(*pow, {Make<int64_t>(DataType::kInt64, {4}, {3, -2, 2, -1}), Make<int32_t>(DataType::kInt32, {4}, {4, 3, -1, -3})});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{81, -8, 0, -1}));

  auto abs = OneNode("Abs", {DataType::kInt8}, 13);
  y = Eval(*abs, {Make<int8_t>(DataType::kInt8, {3}, {-128, -5, 5})});
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{-128, 5, 5}));
}

TEST(Elementwise, VariadicMaxPropagatesNaNAndBroadcasts) {
  auto s = OneNode("Max", {DataType::kFloat, DataType::kFloat, DataType::kFloat}, 13);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor y = Eval(*s, {Make<float>(DataType::kFloat, {2, 1}, {1, nan}), Make<float>(DataType::kFloat, {2}, {0, 5}),
                      Make<float>(DataType::kFloat, {}, {2})});
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  auto v = Values<float>(y);
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[1], 5);
  EXPECT_TRUE(std::isnan(v[2]) && std::isnan(v[3]));
}

TEST(Elementwise, ClipAttributesAndPReluChannels) {
  auto clip = OneNode("Clip", {DataType::kFloat}, 6, [](onnx::NodeProto& n) {
    Attr(n, "min", onnx::AttributeProto::FLOAT)->set_f(-1);
    Attr(n, "max", onnx::AttributeProto::FLOAT)->set_f(1);
  });
  Tensor y = Eval(*clip, {Make<float>(DataType::kFloat, {3}, {-3, 0.5f, 7})});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-1, 0.5f, 1}));

  // Opset 6 PRelu with a per-channel slope [C] on [N, C, W] (numpy would align it with W).
  auto prelu = OneNode("PRelu", {DataType::kFloat, DataType::kFloat}, 6);
  y = Eval(*prelu, {Make<float>(DataType::kFloat, {1, 2, 2}, {-1, -1, -1, 1}), Make<float>(DataType::kFloat, {2}, {0.5f, 2})});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-0.5f, -0.5f, -2, 1}));
}

TEST(Elementwise, CastToAndFromString) {
  auto to_string = OneNode("Cast", {DataType::kFloat}, 13, [](onnx::NodeProto& n) {
    Attr(n, "to", onnx::AttributeProto::INT)->set_i(static_cast<int>(DataType::kString));
  });
  const float inf = std::numeric_limits<float>::infinity();
  Tensor y = Eval(*to_string, {Make<float>(DataType::kFloat, {8}, {0.1f, 100.0f, 1e-5f, -2.5e20f, inf, -inf,
                                                                  std::numeric_limits<float>::quiet_NaN(), -0.0f})});
  EXPECT_EQ(Values<std::string>(y),
            (std::vector<std::string>{"0.1", "100.0", "1e-05", "-2.5e+20", "INF", "-INF", "NaN", "-0.0"}));

  auto half_to_string = OneNode("Cast", {DataType::kFloat16}, 13, [](onnx::NodeProto& n) {
    Attr(n, "to", onnx::AttributeProto::INT)->set_i(static_cast<int>(DataType::kString));
  });
  y = Eval(*half_to_string, {Make<Float16>(DataType::kFloat16, {2}, {Float16(0.1f), Float16(65504.0f)})});
  EXPECT_EQ(Values<std::string>(y), (std::vector<std::string>{"0.1", "65500.0"}));

  auto from_string = OneNode("Cast", {DataType::kString}, 13, [](onnx::NodeProto& n) {
    Attr(n, "to", onnx::AttributeProto::INT)->set_i(static_cast<int>(DataType::kInt64));
  });
  y = Eval(*from_string, {Make<std::string>(DataType::kString, {3}, {"42", "-7", "100.5"})});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{42, -7, 100}));

  // Opset 1 names the target type with a string.
  auto v1 = OneNode("Cast", {DataType::kFloat}, 1, [](onnx::NodeProto& n) {
    Attr(n, "to", onnx::AttributeProto::STRING)->set_s("INT32");
  });
  y = Eval(*v1, {Make<float>(DataType::kFloat, {3}, {-2.7f, 0.5f, 3.9f})});
  ASSERT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{-2, 0, 3}));
}

TEST(Elementwise, CastFloat8SaturateAttribute) {
  auto make = [](int saturate) {
    return OneNode("Cast", {DataType::kFloat}, 19, [saturate](onnx::NodeProto& n) {
      Attr(n, "to", onnx::AttributeProto::INT)->set_i(static_cast<int>(DataType::kFloat8E4M3FN));
      Attr(n, "saturate", onnx::AttributeProto::INT)->set_i(saturate);
    });
  };
  Tensor x = Make<float>(DataType::kFloat, {3}, {1000.0f, -1000.0f, 1.0f});
  EXPECT_EQ(Values<uint8_t>(Eval(*make(1), {x})), (std::vector<uint8_t>{0x7E, 0xFE, 0x38}));
  EXPECT_EQ(Values<uint8_t>(Eval(*make(0), {x})), (std::vector<uint8_t>{0x7F, 0xFF, 0x38}));
}

}  // namespace
}  // namespace ferry
