// Reference reductions and friends beyond the ONNX node tests: the shared reduction engine against a naive loop
// for random shapes and axis sets (every iteration path, with threads), integer wrap-around, empty reductions,
// and error reporting for bad runtime inputs (Reduce*, ArgMax, TopK, NonMaxSuppression, Resize, RoiAlign).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "ferry/session.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using Input = testing::NodeInput;

// A one-node model on the ref backend alone (these are ref kernel tests), outputs y0, y1, ...
std::unique_ptr<Session> OneNode(const std::string& op, const std::vector<Input>& inputs, int outputs, int opset,
                                 const std::function<void(onnx::NodeProto&)>& configure = {}) {
  std::vector<std::string> out;
  for (int i = 0; i < outputs; ++i) out.push_back("y" + std::to_string(i));
  return testing::OneNodeSession(op, inputs, out, opset, configure, testing::OnlyBackend("ref", 3));
}

void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

std::vector<Tensor> RunNode(const Session& s, const std::vector<std::pair<std::string, Tensor>>& in) {
  std::vector<Tensor> out;
  for (auto& [name, t] : s.Run(in)) out.push_back(t);
  return out;
}

// Naive reduction of x (row-major, `shape`) over `mask`, folding with `fold` from `init`.
std::vector<double> NaiveReduce(const std::vector<double>& x, const Shape& shape, const std::vector<bool>& mask,
                                double init, const std::function<double(double, double)>& fold) {
  Shape out_shape;
  for (size_t d = 0; d < shape.size(); ++d) out_shape.push_back(mask[d] ? 1 : shape[d]);
  std::vector<double> out(static_cast<size_t>(ShapeElementCount(out_shape)), init);
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) o = o * out_shape[d] + (mask[d] ? 0 : idx[d]);
    out[static_cast<size_t>(o)] = fold(out[static_cast<size_t>(o)], x[i]);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

TEST(Reduce, EngineMatchesNaiveLoopForRandomShapesAndAxes) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 5);
    Shape shape;
    std::vector<bool> mask;
    std::vector<int64_t> axes;
    const int big = iter % 5 == 0 ? static_cast<int>(rng() % rank) : -1;  // one long dim now and then
    for (int d = 0; d < rank; ++d) {
      shape.push_back(rng() % 4 == 0 ? 1 : 1 + static_cast<int64_t>(rng() % (d == big ? 300 : 6)));
      mask.push_back(rng() % 2 == 0);
      if (mask.back()) axes.push_back(rng() % 2 ? d : d - rank);
    }
    if (axes.empty()) mask.assign(static_cast<size_t>(rank), true);  // empty axes reduce everything
    Tensor x(DataType::kFloat, shape);
    std::vector<double> xd(static_cast<size_t>(x.size()));
    std::uniform_real_distribution<float> dist(-2, 2);
    for (int64_t i = 0; i < x.size(); ++i) xd[static_cast<size_t>(i)] = x.data<float>()[i] = dist(rng);

    struct OpCase {
      const char* op;
      double init;
      std::function<double(double, double)> fold;
    };
    const OpCase ops[] = {
        {"ReduceSum", 0.0, [](double a, double v) { return a + v; }},
        {"ReduceMax", -INFINITY, [](double a, double v) { return std::max(a, v); }},
        {"ReduceSumSquare", 0.0, [](double a, double v) { return a + v * v; }},
    };
    for (const auto& c : ops) {
      auto s = OneNode(c.op, {{"x", DataType::kFloat}, {"axes", DataType::kInt64}}, 1, 18,
                       [](onnx::NodeProto& n) { IntAttr(n, "keepdims", 1); });
      Tensor y = RunNode(*s, {{"x", x}, {"axes", Ints(axes)}})[0];
      std::vector<double> want = NaiveReduce(xd, shape, mask, c.init, c.fold);
      ASSERT_EQ(y.size(), static_cast<int64_t>(want.size())) << c.op << " " << ShapeToString(shape);
      for (int64_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y.data<float>()[i], want[static_cast<size_t>(i)],
                    1e-4 * (1 + std::abs(want[static_cast<size_t>(i)])))
            << c.op << " " << ShapeToString(shape) << " axes " << ShapeToString(axes) << " at " << i;
      }
    }
  }
}

TEST(Reduce, IntegerSumsWrapAndEmptyReductionsGiveIdentities) {
  auto sum = OneNode("ReduceSum", {{"x", DataType::kInt32}, {"axes", DataType::kInt64}}, 1, 13);
  Tensor x = Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {std::numeric_limits<int32_t>::max(), 1});
  EXPECT_EQ(RunNode(*sum, {{"x", x}, {"axes", Ints({0})}})[0].data<int32_t>()[0], std::numeric_limits<int32_t>::min());

  auto mx = OneNode("ReduceMax", {{"x", DataType::kInt64}, {"axes", DataType::kInt64}}, 1, 18);
  Tensor empty(DataType::kInt64, {0, 3});
  Tensor y = RunNode(*mx, {{"x", empty}, {"axes", Ints({0})}})[0];
  ASSERT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(y.data<int64_t>()[0], std::numeric_limits<int64_t>::lowest());

  auto mean = OneNode("ReduceMean", {{"x", DataType::kFloat}, {"axes", DataType::kInt64}}, 1, 18);
  EXPECT_TRUE(
      std::isnan(RunNode(*mean, {{"x", Tensor(DataType::kFloat, {0, 2})}, {"axes", Ints({0})}})[0].data<float>()[0]));

  // noop_with_empty_axes with the axes input omitted returns the input unchanged.
  auto noop = OneNode("ReduceSum", {{"x", DataType::kFloat}}, 1, 13,
                      [](onnx::NodeProto& n) { IntAttr(n, "noop_with_empty_axes", 1); });
  Tensor f = Tensor::FromVector<float>(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  Tensor same = RunNode(*noop, {{"x", f}})[0];
  ASSERT_EQ(same.shape(), (Shape{2, 2}));
  EXPECT_EQ(same.data<float>()[3], 4.0f);
}

TEST(Reduce, BadRuntimeInputsAreInvalidArgument) {
  auto sum = OneNode("ReduceSum", {{"x", DataType::kFloat}, {"axes", DataType::kInt64}}, 1, 13);
  Tensor x(DataType::kFloat, {2, 3});
  EXPECT_THROW(RunNode(*sum, {{"x", x}, {"axes", Ints({2})}}), InvalidArgumentError);

  auto argmax = OneNode("ArgMax", {{"x", DataType::kFloat}}, 1, 13, [](onnx::NodeProto& n) { IntAttr(n, "axis", 1); });
  EXPECT_THROW(RunNode(*argmax, {{"x", Tensor(DataType::kFloat, {2, 0})}}), InvalidArgumentError);

  auto topk = OneNode("TopK", {{"x", DataType::kFloat}, {"k", DataType::kInt64}}, 2, 11);
  EXPECT_THROW(RunNode(*topk, {{"x", x}, {"k", Ints({4})}}), InvalidArgumentError);
  EXPECT_THROW(RunNode(*topk, {{"x", x}, {"k", Ints({-1})}}), InvalidArgumentError);

  auto nms = OneNode("NonMaxSuppression", {{"b", DataType::kFloat}, {"s", DataType::kFloat}}, 1, 11);
  EXPECT_THROW(RunNode(*nms, {{"b", Tensor(DataType::kFloat, {1, 3, 3})}, {"s", Tensor(DataType::kFloat, {1, 1, 3})}}),
               InvalidArgumentError);

  auto roi = OneNode("RoiAlign", {{"x", DataType::kFloat}, {"r", DataType::kFloat}, {"i", DataType::kInt64}}, 1, 16);
  EXPECT_THROW(RunNode(*roi, {{"x", Tensor(DataType::kFloat, {1, 1, 4, 4})},
                              {"r", Tensor(DataType::kFloat, {1, 4})},
                              {"i", Ints({1})}}),
               InvalidArgumentError);

  auto resize = OneNode(
      "Resize", {{"x", DataType::kFloat}, {"", DataType::kUndefined}, {"s", DataType::kFloat}, {"z", DataType::kInt64}},
      1, 19);
  EXPECT_THROW(
      RunNode(*resize,
              {{"x", x}, {"s", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2})}, {"z", Ints({2, 6})}}),
      InvalidArgumentError);
}

TEST(TopK, TiesKeepTheLowerIndexAndNaNRanksHighest) {
  auto topk = OneNode("TopK", {{"x", DataType::kFloat}, {"k", DataType::kInt64}}, 2, 11);
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {5}, {1, NAN, 3, 3, 1});
  auto out = RunNode(*topk, {{"x", x}, {"k", Ints({4})}});
  const std::vector<int64_t> want = {1, 2, 3, 0};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[1].data<int64_t>()[i], want[static_cast<size_t>(i)]) << i;
}

TEST(NonMaxSuppression, SelectsPerClassInScoreOrder) {
  auto nms = OneNode(
      "NonMaxSuppression",
      {{"b", DataType::kFloat}, {"s", DataType::kFloat}, {"m", DataType::kInt64}, {"t", DataType::kFloat}}, 1, 11);
  // Boxes 0 and 1 overlap heavily; box 2 is apart. max_output_boxes_per_class is huge (as torchvision exports it).
  Tensor boxes = Tensor::FromVector<float>(DataType::kFloat, {1, 3, 4}, {0, 0, 1, 1, 0, 0.05f, 1, 1.05f, 2, 2, 3, 3});
  Tensor scores = Tensor::FromVector<float>(DataType::kFloat, {1, 2, 3}, {0.9f, 0.95f, 0.1f, 0.2f, 0.2f, 0.3f});
  Tensor y = RunNode(*nms, {{"b", boxes},
                            {"s", scores},
                            {"m", Ints({std::numeric_limits<int64_t>::max()})},
                            {"t", Tensor::FromVector<float>(DataType::kFloat, {1}, {0.5f})}})[0];
  const std::vector<int64_t> want = {0, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 0};
  ASSERT_EQ(y.shape(), (Shape{4, 3}));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y.data<int64_t>()[i], want[i]) << i;
}

}  // namespace
}  // namespace ferry
