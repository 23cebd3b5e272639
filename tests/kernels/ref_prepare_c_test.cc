// The ref kernels NegativeLogLikelihoodLoss .. ScatterElements under the create -> prepare -> run lifecycle
// (kernel.h): Prepare raises the shape and dtype errors, naming the node, and declares the outputs (dynamic where
// they depend on data no Prepare sees: NonZero, NonMaxSuppression, a Range / OneHot / Pad / Resize / Reduce whose
// shape-carrying input is not a constant); Compute runs from what Prepare kept and still reports errors only data
// can cause. Called directly through the ref registry, and through a Session with backends = {"ref"}.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/registry.h"
#include "testing/model_builder.h"
#include "testing/prepare_harness.h"

namespace ferry {
namespace {

using testing::ExpectNames;
using testing::ExpectOutput;
using In = testing::RefIn;
using OneNode = testing::RefNode;

Tensor Floats(Shape shape, float offset = 0.0f) {
  Tensor t(DataType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = offset + static_cast<float>((i * 5) % 7);
  return t;
}

Tensor FloatValues(Shape shape, std::vector<float> values) {
  return Tensor::FromVector<float>(DataType::kFloat, std::move(shape), values);
}

Tensor Int64s(Shape shape, std::vector<int64_t> values) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, std::move(shape), values);
}

// The error Prepare throws, as text ("" when it throws none).
std::string PrepareError(const OneNode& n, const std::vector<In>& inputs) {
  try {
    n.Prepare(inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void ExpectDynamic(const PreparedKernel& p, int i) {
  ASSERT_LT(static_cast<size_t>(i), p.outputs.size());
  EXPECT_FALSE(p.outputs[static_cast<size_t>(i)].is_tensor()) << "output " << i;
}

TEST(RefPrepareC, PoolDeclaresBothOutputsAndRejectsALowRank) {
  const Tensor x = Floats({1, 1, 4, 4}), flat = Floats({4, 4});
  OneNode n("MaxPool", 12, {{&x}}, 2, {ir::IntsAttr("kernel_shape", {2, 2}), ir::IntsAttr("strides", {2, 2})});
  const PreparedKernel p = n.Prepare({{&x}});
  ExpectOutput(p, 0, DataType::kFloat, {1, 1, 2, 2});
  ExpectOutput(p, 1, DataType::kInt64, {1, 1, 2, 2});
  const std::vector<Value> out = n.Run(p, {{&x}});
  const float* xd = x.data<float>();
  const float want = std::max(std::max(xd[0], xd[1]), std::max(xd[4], xd[5]));
  EXPECT_FLOAT_EQ(out[0].tensor().data<float>()[0], want);
  ExpectNames(PrepareError(n, {{&flat}}), {"MaxPool_node", "model 'm.onnx'", "rank >= 3", "[4,4]"});
}

TEST(RefPrepareC, OneHotIsPreparedForAConstantDepthAndDynamicOtherwise) {
  const Tensor indices = Int64s({2}, {0, 2}), depth = Int64s({}, {3}), values = FloatValues({2}, {0, 1});
  OneNode n("OneHot", 11, {{&indices}, {&depth}, {&values}}, 1);
  const PreparedKernel known = n.Prepare({{&indices}, {&depth, true}, {&values}});
  ExpectOutput(known, 0, DataType::kFloat, {2, 3});
  const PreparedKernel dynamic = n.Prepare({{&indices}, {&depth}, {&values}});
  ExpectDynamic(dynamic, 0);
  const Tensor a = n.Run(known, {{&indices}, {&depth}, {&values}})[0].tensor();
  const Tensor b = n.Run(dynamic, {{&indices}, {&depth}, {&values}})[0].tensor();
  ASSERT_EQ(b.shape(), (Shape{2, 3}));
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  EXPECT_FLOAT_EQ(b.data<float>()[5], 1.0f);
  const Tensor two = Int64s({2}, {3, 3}), zero = Int64s({}, {0});
  ExpectNames(PrepareError(n, {{&indices}, {&two}, {&values}}), {"OneHot_node", "'depth'", "scalar"});
  ExpectNames(PrepareError(n, {{&indices}, {&zero, true}, {&values}}), {"OneHot_node", "must be positive"});
  // A depth that is data is checked when Compute reads it, naming the node.
  const PreparedKernel zero_dynamic = n.Prepare({{&indices}, {&zero}, {&values}});
  try {
    n.Run(zero_dynamic, {{&indices}, {&zero}, {&values}});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    ExpectNames(e.what(), {"OneHot_node", "must be positive"});
  }
}

TEST(RefPrepareC, RangeCountsConstantBoundsInPrepare) {
  const Tensor start = FloatValues({}, {0}), limit = FloatValues({}, {5}), delta = FloatValues({}, {2});
  const Tensor zero = FloatValues({}, {0}), pair = FloatValues({2}, {1, 2});
  OneNode n("Range", 11, {{&start}, {&limit}, {&delta}}, 1);
  const PreparedKernel known = n.Prepare({{&start, true}, {&limit, true}, {&delta, true}});
  ExpectOutput(known, 0, DataType::kFloat, {3});
  ExpectDynamic(n.Prepare({{&start}, {&limit, true}, {&delta, true}}), 0);
  const Tensor y = n.Run(known, {{&start}, {&limit}, {&delta}})[0].tensor();
  EXPECT_FLOAT_EQ(y.data<float>()[2], 4.0f);
  ExpectNames(PrepareError(n, {{&start, true}, {&limit, true}, {&zero, true}}), {"Range_node", "delta != 0"});
  ExpectNames(PrepareError(n, {{&start}, {&pair}, {&delta}}), {"Range_node", "scalars of one type", "float32[2]"});
}

TEST(RefPrepareC, PadResolvesConstantPadsInPrepare) {
  const Tensor x = Floats({2, 3}), pads = Int64s({4}, {0, 1, 1, 0}), short_pads = Int64s({2}, {1, 1});
  const Tensor crop = Int64s({4}, {0, -5, 0, 0});
  OneNode n("Pad", 13, {{&x}, {&pads}}, 1, {ir::StringAttr("mode", "edge")});
  const PreparedKernel known = n.Prepare({{&x}, {&pads, true}});
  ExpectOutput(known, 0, DataType::kFloat, {3, 4});
  const PreparedKernel dynamic = n.Prepare({{&x}, {&pads}});
  ExpectDynamic(dynamic, 0);
  const Tensor a = n.Run(known, {{&x}, {&pads}})[0].tensor();
  const Tensor b = n.Run(dynamic, {{&x}, {&pads}})[0].tensor();
  ASSERT_EQ(b.shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  EXPECT_FLOAT_EQ(a.data<float>()[0], x.data<float>()[0]);  // edge: column -1 repeats column 0
  ExpectNames(PrepareError(n, {{&x}, {&short_pads, true}}), {"Pad_node", "2 entries per padded axis"});
  ExpectNames(PrepareError(n, {{&x}, {&crop, true}}), {"Pad_node", "negative or overflowing", "dimension 1"});
}

TEST(RefPrepareC, ReduceResolvesAxesAndDeclaresTheNoopAView) {
  const Tensor x = Floats({2, 3}), axes = Int64s({1}, {1}), bad = Int64s({1}, {4});
  OneNode n("ReduceSum", 13, {{&x}, {&axes}}, 1, {ir::IntAttr("keepdims", 1)});
  const PreparedKernel known = n.Prepare({{&x}, {&axes, true}});
  ExpectOutput(known, 0, DataType::kFloat, {2, 1});
  const PreparedKernel dynamic = n.Prepare({{&x}, {&axes}});
  ExpectDynamic(dynamic, 0);
  const Tensor a = n.Run(known, {{&x}, {&axes}})[0].tensor(), b = n.Run(dynamic, {{&x}, {&axes}})[0].tensor();
  ASSERT_EQ(b.shape(), (Shape{2, 1}));
  EXPECT_FLOAT_EQ(a.data<float>()[1], b.data<float>()[1]);
  EXPECT_FLOAT_EQ(a.data<float>()[0], x.data<float>()[0] + x.data<float>()[1] + x.data<float>()[2]);
  ExpectNames(PrepareError(n, {{&x}, {&bad, true}}), {"ReduceSum_node"});

  OneNode noop("ReduceSum", 13, {{&x}}, 1, {ir::IntAttr("noop_with_empty_axes", 1)});
  const PreparedKernel view = noop.Prepare({{&x}});
  ExpectOutput(view, 0, DataType::kFloat, {2, 3});
  EXPECT_EQ(view.outputs[0].view_of, 0);
  EXPECT_EQ(noop.Run(view, {{&x}})[0].tensor().shape(), (Shape{2, 3}));
}

TEST(RefPrepareC, ResizeChecksTheScalesInPrepare) {
  const Tensor x = Floats({1, 1, 2, 2}), scales = FloatValues({4}, {1, 1, 2, 2}), two = FloatValues({2}, {2, 2});
  OneNode n("Resize", 13, {{&x}, {}, {&scales}}, 1);
  const PreparedKernel known = n.Prepare({{&x}, {}, {&scales, true}});
  ExpectOutput(known, 0, DataType::kFloat, {1, 1, 4, 4});
  const PreparedKernel dynamic = n.Prepare({{&x}, {}, {&scales}});
  ExpectDynamic(dynamic, 0);
  const Tensor a = n.Run(known, {{&x}, {}, {&scales}})[0].tensor();
  const Tensor b = n.Run(dynamic, {{&x}, {}, {&scales}})[0].tensor();
  ASSERT_EQ(b.shape(), (Shape{1, 1, 4, 4}));
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  // The count of scales is a shape: Prepare's error even when the values are data.
  ExpectNames(PrepareError(n, {{&x}, {}, {&two}}), {"Resize_node", "'scales' has 2 values, expected 4"});
  ExpectNames(PrepareError(n, {{&x}, {}, {}}), {"Resize_node", "exactly one of 'scales' and 'sizes'"});
}

TEST(RefPrepareC, NonMaxSuppressionIsDynamicAndChecksItsShapes) {
  const Tensor boxes = FloatValues({1, 2, 4}, {0, 0, 1, 1, 2, 2, 3, 3}), scores = FloatValues({1, 1, 2}, {0.9f, 0.8f});
  const Tensor wrong = FloatValues({1, 1, 3}, {0.9f, 0.8f, 0.7f}), max_boxes = Int64s({1}, {2});
  OneNode n("NonMaxSuppression", 11, {{&boxes}, {&scores}, {&max_boxes}}, 1);
  const PreparedKernel p = n.Prepare({{&boxes}, {&scores}, {&max_boxes}});
  ExpectDynamic(p, 0);
  const Tensor y = n.Run(p, {{&boxes}, {&scores}, {&max_boxes}})[0].tensor();
  EXPECT_EQ(y.shape(), (Shape{2, 3}));  // disjoint boxes: nothing is suppressed
  ExpectNames(PrepareError(n, {{&boxes}, {&wrong}, {&max_boxes}}), {"NonMaxSuppression_node", "'scores'", "[1,1,3]"});
}

TEST(RefPrepareC, ScatterElementsChecksShapesInPrepareAndIndicesInCompute) {
  const Tensor data = Floats({2, 3}), idx = Int64s({1, 2}, {2, 0}), upd = FloatValues({1, 2}, {10, 20});
  const Tensor out_of_range = Int64s({1, 2}, {3, 0}), upd3 = FloatValues({1, 3}, {1, 2, 3});
  OneNode n("ScatterElements", 16, {{&data}, {&idx}, {&upd}}, 1, {ir::IntAttr("axis", 1)});
  const PreparedKernel p = n.Prepare({{&data}, {&idx}, {&upd}});
  ExpectOutput(p, 0, DataType::kFloat, {2, 3});
  const Tensor y = n.Run(p, {{&data}, {&idx}, {&upd}})[0].tensor();
  EXPECT_FLOAT_EQ(y.data<float>()[2], 10.0f);
  EXPECT_FLOAT_EQ(y.data<float>()[0], 20.0f);
  ExpectNames(PrepareError(n, {{&data}, {&idx}, {&upd3}}), {"ScatterElements_node", "must have one shape"});
  try {
    n.Run(p, {{&data}, {&out_of_range}, {&upd}});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    ExpectNames(e.what(), {"ScatterElements_node", "input 'indices'", "index 3 is out of range"});
  }
}

TEST(RefPrepareC, ShapeErrorsOfTheQuantizedAndRegionKernelsAreRaisedByPrepare) {
  {
    const Tensor a(DataType::kUint8, {2, 4}), b(DataType::kUint8, {4, 3}), zp(DataType::kUint8, {});
    const Tensor one = FloatValues({}, {0.5f}), three = FloatValues({3}, {1, 1, 1});
    OneNode n("QLinearMatMul", 10, {{&a}, {&one}, {&zp}, {&b}, {&one}, {&zp}, {&one}, {&zp}}, 1);
    ExpectOutput(n.Prepare({{&a}, {&one}, {&zp}, {&b}, {&one}, {&zp}, {&one}, {&zp}}), 0, DataType::kUint8, {2, 3});
    ExpectNames(PrepareError(n, {{&a}, {&three}, {&zp}, {&b}, {&one}, {&zp}, {&one}, {&zp}}),
                {"QLinearMatMul_node", "a_scale must have 1 or M values"});
  }
  {
    const Tensor x = Floats({1, 1, 4, 4}), rois = FloatValues({1, 4}, {0, 0, 3, 3}), bad = Floats({1, 5});
    const Tensor batch = Int64s({1}, {0}), far = Int64s({1}, {1});
    OneNode n("RoiAlign", 16, {{&x}, {&rois}, {&batch}}, 1,
              {ir::IntAttr("output_height", 2), ir::IntAttr("output_width", 2)});
    const PreparedKernel p = n.Prepare({{&x}, {&rois}, {&batch}});
    ExpectOutput(p, 0, DataType::kFloat, {1, 1, 2, 2});
    ExpectNames(PrepareError(n, {{&x}, {&bad}, {&batch}}), {"RoiAlign_node", "[num_rois, 4]", "[1,5]"});
    try {
      n.Run(p, {{&x}, {&rois}, {&far}});
      FAIL() << "expected an error";
    } catch (const InvalidArgumentError& e) {
      ExpectNames(e.what(), {"RoiAlign_node", "batch index 1 is out of range"});
    }
  }
  {
    const Tensor x = Floats({3, 2, 1}), lens = Int64s({2}, {1, 2}), three = Int64s({3}, {1, 1, 1});
    OneNode n("ReverseSequence", 10, {{&x}, {&lens}}, 1);
    ExpectOutput(n.Prepare({{&x}, {&lens}}), 0, DataType::kFloat, {3, 2, 1});
    ExpectNames(PrepareError(n, {{&x}, {&three}}), {"ReverseSequence_node", "one entry per batch entry"});
  }
  {
    const Tensor x = Floats({2, 3});
    OneNode n("RandomUniformLike", 1, {{&x}}, 1, {ir::IntAttr("dtype", onnx::TensorProto::INT32)});
    ExpectNames(PrepareError(n, {{&x}}), {"RandomUniformLike_node", "int32", "not supported"});
  }
}

std::unique_ptr<Session> CreateRef(const testing::ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  SessionOptions options;
  options.threads = 1;
  options.backends = {"ref"};
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
}

// x: float[2, C] (symbolic C) with a slope of 3 values: a C other than 3 is known only when the run gives x, and is
// the error of PRelu's Prepare, naming the node and both shapes.
TEST(RefPrepareC, SessionPReluSlopeMismatch) {
  testing::ModelBuilder b;
  b.InputSym("x", onnx::TensorProto::FLOAT, {2, -1}, "C");
  b.FloatInitializer("slope", {3}, {0.1f, 0.2f, 0.3f});
  b.Node("PRelu", {"x", "slope"}, {"y"}, "leaky");
  b.Output("y", onnx::TensorProto::FLOAT, {2, 3});
  auto session = CreateRef(b);
  try {
    session->Run({{"x", Floats({2, 5})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ExpectNames(e.what(), {"leaky", "PRelu", "[3]", "[2,5]"});
  }
  Tensor x = FloatValues({2, 3}, {-1, -1, -1, 1, 1, 1});
  auto out = session->Run({{"x", x}});
  const Tensor& y = out.at(0).second;
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_FLOAT_EQ(y.data<float>()[2], -0.3f);
  EXPECT_FLOAT_EQ(y.data<float>()[3], 1.0f);
}

// Constant pads that crop more than a symbolic dimension holds: Pad's Prepare reports the negative size.
TEST(RefPrepareC, SessionPadCropsPastTheInput) {
  testing::ModelBuilder b(18);
  b.InputSym("x", onnx::TensorProto::FLOAT, {2, -1}, "K");
  b.Int64Initializer("pads", {4}, {0, -4, 0, 0});
  b.Node("Pad", {"x", "pads"}, {"y"}, "crop");
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto session = CreateRef(b);
  try {
    session->Run({{"x", Floats({2, 3})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ExpectNames(e.what(), {"crop", "Pad", "negative or overflowing size", "float32[2,3]"});
  }
  auto out = session->Run({{"x", Floats({2, 6})}});
  const Tensor& y = out.at(0).second;
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_FLOAT_EQ(y.data<float>()[0], Floats({2, 6}).data<float>()[4]);
}

}  // namespace
}  // namespace ferry
