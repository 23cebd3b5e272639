// Random-number kernels (RandomUniform/Normal[Like], Multinomial, Bernoulli): their ONNX test cases cannot match
// another generator's values, so these tests check what Ferry promises instead: shapes, dtypes, statistics over
// 100k samples, and determinism for a fixed seed (and for a node without one).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <memory>
#include <vector>

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

void FloatAttr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void IntsAttr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

Tensor Eval(const Session& s, std::vector<Tensor> in = {}) {
  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < in.size(); ++i) named.emplace_back("x" + std::to_string(i), in[i]);
  return s.Run(named).at(0).second;
}

template <typename T>
std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) v[static_cast<size_t>(i)] = static_cast<double>(t.data<T>()[i]);
  return v;
}

void MeanVar(const std::vector<double>& v, double& mean, double& var) {
  mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
}

constexpr int64_t kN = 100000;

TEST(RandomOps, UniformStatisticsRangeAndDeterminism) {
  auto make = [](float seed) {
    return OneNode("RandomUniform", {}, 22, [&](onnx::NodeProto& n) {
      IntsAttr(n, "shape", {kN / 100, 100});
      FloatAttr(n, "low", -2.0f);
      FloatAttr(n, "high", 3.0f);
      FloatAttr(n, "seed", seed);
    });
  };
  auto s = make(5.0f);
  Tensor y = Eval(*s);
  ASSERT_EQ(y.dtype(), DataType::kFloat);
  ASSERT_EQ(y.shape(), (Shape{kN / 100, 100}));
  auto v = AsDoubles<float>(y);
  for (double x : v) ASSERT_TRUE(x >= -2.0 && x < 3.0) << x;
  double mean, var;
  MeanVar(v, mean, var);
  EXPECT_NEAR(mean, 0.5, 0.03);
  EXPECT_NEAR(var, 25.0 / 12.0, 0.05);
  EXPECT_EQ(AsDoubles<float>(Eval(*make(5.0f))), v);  // same seed, new session: same values
  EXPECT_EQ(AsDoubles<float>(Eval(*s)), v);           // same session, second run: same values
  EXPECT_NE(AsDoubles<float>(Eval(*make(6.0f))), v);  // other seed: other values
}

TEST(RandomOps, NormalStatisticsAndDtype) {
  auto s = OneNode("RandomNormal", {}, 17, [](onnx::NodeProto& n) {
    IntsAttr(n, "shape", {kN});
    FloatAttr(n, "mean", 1.0f);
    FloatAttr(n, "scale", 2.0f);
    FloatAttr(n, "seed", 1.0f);
    IntAttr(n, "dtype", static_cast<int64_t>(DataType::kDouble));
  });
  Tensor y = Eval(*s);
  ASSERT_EQ(y.dtype(), DataType::kDouble);
  ASSERT_EQ(y.shape(), (Shape{kN}));
  double mean, var;
  MeanVar(AsDoubles<double>(y), mean, var);
  EXPECT_NEAR(mean, 1.0, 0.03);
  EXPECT_NEAR(var, 4.0, 0.1);
}

TEST(RandomOps, LikeOpsTakeShapeAndDtypeFromInput) {
  Tensor x(DataType::kDouble, {kN / 10, 10});
  auto u = OneNode("RandomUniformLike", {DataType::kDouble}, 17, [](onnx::NodeProto& n) { FloatAttr(n, "seed", 3.0f); });
  Tensor yu = Eval(*u, {x});
  ASSERT_EQ(yu.dtype(), DataType::kDouble);
  ASSERT_EQ(yu.shape(), x.shape());
  double mean, var;
  MeanVar(AsDoubles<double>(yu), mean, var);
  EXPECT_NEAR(mean, 0.5, 0.01);
  EXPECT_NEAR(var, 1.0 / 12.0, 0.005);

  Tensor xi(DataType::kInt64, {kN});
  auto nl = OneNode("RandomNormalLike", {DataType::kInt64}, 22, [](onnx::NodeProto& n) {
    IntAttr(n, "dtype", static_cast<int64_t>(DataType::kFloat));
    FloatAttr(n, "scale", 0.5f);
  });
  Tensor yn = Eval(*nl, {xi});
  ASSERT_EQ(yn.dtype(), DataType::kFloat);
  ASSERT_EQ(yn.shape(), xi.shape());
  MeanVar(AsDoubles<float>(yn), mean, var);
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 0.25, 0.01);
  // No seed attribute: a fixed per-node seed, so runs repeat.
  EXPECT_EQ(AsDoubles<float>(Eval(*nl, {xi})), AsDoubles<float>(yn));
}

TEST(RandomOps, MultinomialFrequencies) {
  auto s = OneNode("Multinomial", {DataType::kFloat}, 7, [](onnx::NodeProto& n) {
    IntAttr(n, "sample_size", kN);
    IntAttr(n, "dtype", static_cast<int64_t>(DataType::kInt64));
    FloatAttr(n, "seed", 2.0f);
  });
  const std::vector<double> p = {0.2, 0.3, 0.5};
  std::vector<float> logits;
  for (double q : p) logits.push_back(static_cast<float>(std::log(q) + 7.0));  // unnormalised
  logits.push_back(-INFINITY);                                                  // never drawn
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {1, 4}, logits);
  Tensor y = Eval(*s, {x});
  ASSERT_EQ(y.dtype(), DataType::kInt64);
  ASSERT_EQ(y.shape(), (Shape{1, kN}));
  std::vector<double> freq(4, 0.0);
  for (int64_t i = 0; i < y.size(); ++i) {
    int64_t k = y.data<int64_t>()[i];
    ASSERT_TRUE(k >= 0 && k < 4) << k;
    freq[static_cast<size_t>(k)] += 1.0 / static_cast<double>(kN);
  }
  for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(freq[k], p[k], 0.01) << k;
  EXPECT_EQ(freq[3], 0.0);
}

TEST(RandomOps, BernoulliMeanAndEdges) {
  auto s = OneNode("Bernoulli", {DataType::kFloat}, 15, [](onnx::NodeProto& n) {
    FloatAttr(n, "seed", 0.0f);
    IntAttr(n, "dtype", static_cast<int64_t>(DataType::kBool));
  });
  std::vector<float> probs(static_cast<size_t>(kN), 0.3f);
  probs[0] = 0.0f;
  probs[1] = 1.0f;
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {kN}, probs);
  Tensor y = Eval(*s, {x});
  ASSERT_EQ(y.dtype(), DataType::kBool);
  ASSERT_EQ(y.shape(), (Shape{kN}));
  EXPECT_FALSE(y.data<bool>()[0]);
  EXPECT_TRUE(y.data<bool>()[1]);
  double mean = 0;
  for (int64_t i = 2; i < kN; ++i) mean += y.data<bool>()[i] ? 1.0 : 0.0;
  mean /= static_cast<double>(kN - 2);
  EXPECT_NEAR(mean, 0.3, 0.01);
  // Output dtype defaults to the input's.
  auto d = OneNode("Bernoulli", {DataType::kDouble}, 22);
  Tensor yd = Eval(*d, {Tensor::FromVector<double>(DataType::kDouble, {3}, {0.0, 1.0, 1.0})});
  ASSERT_EQ(yd.dtype(), DataType::kDouble);
  EXPECT_EQ(AsDoubles<double>(yd), (std::vector<double>{0.0, 1.0, 1.0}));
  // A probability outside [0, 1] is a bad input, reported, not a crash.
  EXPECT_THROW(Eval(*d, {Tensor::FromVector<double>(DataType::kDouble, {1}, {1.5})}), InvalidArgumentError);
}

}  // namespace
}  // namespace ferry
