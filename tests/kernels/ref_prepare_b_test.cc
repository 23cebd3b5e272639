// The ref kernels Einsum .. Momentum under the create -> prepare -> run lifecycle (kernel.h): Prepare raises the
// shape errors, naming the node and the input at fault, and declares the outputs (dynamic where they depend on
// data no Prepare sees); Compute runs from what Prepare kept and still reports errors only data can cause. Called
// directly through the ref registry, and through a Session with backends = {"ref"}.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
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

Tensor Int64s(Shape shape, std::vector<int64_t> values) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, std::move(shape), values);
}

// The InvalidArgumentError Prepare throws, as text ("" when it throws none).
std::string PrepareError(const OneNode& n, const std::vector<In>& inputs) {
  try {
    n.Prepare(inputs);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

TEST(RefPrepareB, EinsumResolvesTheLabelsInPrepare) {
  const Tensor a = Floats({2, 3}), b = Floats({3, 4}), bad = Floats({3, 4, 1});
  OneNode n("Einsum", 12, {{&a}, {&b}}, 1, {ir::StringAttr("equation", "ij,jk->ik")});
  const PreparedKernel p = n.Prepare({{&a}, {&b}});
  ExpectOutput(p, 0, DataType::kFloat, {2, 4});
  const std::vector<Value> out = n.Run(p, {{&a}, {&b}});
  const Tensor& y = out[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{2, 4}));
  float want = 0;
  for (int64_t j = 0; j < 3; ++j) want += a.data<float>()[j] * b.data<float>()[j * 4];
  EXPECT_FLOAT_EQ(y.data<float>()[0], want);
  ExpectNames(PrepareError(n, {{&a}, {&bad}}), {"Einsum_node", "model 'm.onnx'", "input 1 has rank 3"});
}

TEST(RefPrepareB, ExpandIsPreparedForAKnownShapeAndDynamicOtherwise) {
  const Tensor x = Floats({3, 1});
  const Tensor shape3 = Int64s({3}, {2, 3, 4});
  OneNode n("Expand", 13, {{&x}, {&shape3, true}}, 1);
  ExpectOutput(n.Prepare({{&x}, {&shape3, true}}), 0, DataType::kFloat, {2, 3, 4});
  const PreparedKernel dynamic = n.Prepare({{&x}, {&shape3}});
  ASSERT_EQ(dynamic.outputs.size(), 1u);
  EXPECT_FALSE(dynamic.outputs[0].is_tensor());
  const std::vector<Value> out = n.Run(dynamic, {{&x}, {&shape3}});
  EXPECT_EQ(out[0].tensor().shape(), (Shape{2, 3, 4}));
  EXPECT_FLOAT_EQ(out[0].tensor().data<float>()[5], x.data<float>()[1]);
  // A known target that does not broadcast with X is Prepare's error.
  const Tensor wrong = Int64s({2}, {2, 2});
  const std::string what = [&] {
    try {
      n.Prepare({{&x}, {&wrong, true}});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  ExpectNames(what, {"Expand_node"});
}

TEST(RefPrepareB, GatherChecksShapesInPrepareAndIndicesInCompute) {
  const Tensor data = Floats({4, 3});
  const Tensor idx = Int64s({2}, {3, -1});
  OneNode n("Gather", 13, {{&data}, {&idx}}, 1, {ir::IntAttr("axis", 0)});
  const PreparedKernel p = n.Prepare({{&data}, {&idx}});
  ExpectOutput(p, 0, DataType::kFloat, {2, 3});
  const Tensor scalar = Floats({});
  ExpectNames(PrepareError(n, {{&scalar}, {&idx}}), {"Gather_node", "rank >= 1", "input 0 'in0' float32[]"});
  // An index out of range is the data's error, raised as Compute reads it.
  const Tensor far = Int64s({2}, {3, 4});
  try {
    n.Run(p, {{&data}, {&far}});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    ExpectNames(e.what(), {"Gather_node", "index 4 is out of range"});
  }
}

TEST(RefPrepareB, GatherNDNamesBothInputsOfABatchMismatch) {
  const Tensor data = Floats({3, 2, 2});
  const Tensor idx = Int64s({2, 1}, {0, 1});
  OneNode n("GatherND", 13, {{&data}, {&idx}}, 1, {ir::IntAttr("batch_dims", 1)});
  ExpectNames(PrepareError(n, {{&data}, {&idx}}),
              {"GatherND_node", "batch dimension 0", "input 0 'in0' float32[3,2,2]", "input 1 'in1' int64[2,1]"});
  const Tensor idx_ok = Int64s({3, 1}, {0, 1, 1});
  ExpectOutput(n.Prepare({{&data}, {&idx_ok}}), 0, DataType::kFloat, {3, 2});
}

TEST(RefPrepareB, GruDeclaresItsOutputsAndChecksWeightsInPrepare) {
  const int64_t seq = 2, batch = 3, input = 4, hidden = 5;
  const Tensor x = Floats({seq, batch, input});
  const Tensor w = Floats({1, 3 * hidden, input}), r = Floats({1, 3 * hidden, hidden});
  const Tensor bad_w = Floats({1, 3 * hidden, input + 1});
  OneNode n("GRU", 14, {{&x}, {&w}, {&r}}, 2, {ir::IntAttr("hidden_size", hidden)});
  const PreparedKernel p = n.Prepare({{&x}, {&w}, {&r}});
  ExpectOutput(p, 0, DataType::kFloat, {seq, 1, batch, hidden});
  ExpectOutput(p, 1, DataType::kFloat, {1, batch, hidden});
  const std::vector<Value> out = n.Run(p, {{&x}, {&w}, {&r}});
  EXPECT_EQ(out[1].tensor().shape(), (Shape{1, batch, hidden}));
  ExpectNames(PrepareError(n, {{&x}, {&bad_w}, {&r}}), {"GRU_node", "input 'W' has shape [1,15,5]", "[1,15,4]"});
}

TEST(RefPrepareB, LayerNormalizationDeclaresItsStatistics) {
  const Tensor x = Floats({2, 3, 4}), scale = Floats({3, 4}), bias = Floats({3, 4});
  OneNode n("LayerNormalization", 17, {{&x}, {&scale}, {&bias}}, 3, {ir::IntAttr("axis", 1)});
  const PreparedKernel p = n.Prepare({{&x}, {&scale}, {&bias}});
  ExpectOutput(p, 0, DataType::kFloat, {2, 3, 4});
  ExpectOutput(p, 1, DataType::kFloat, {2, 1, 1});
  ExpectOutput(p, 2, DataType::kFloat, {2, 1, 1});
  const Tensor wide = Floats({3, 5});
  ExpectNames(PrepareError(n, {{&x}, {&wide}, {&bias}}), {"LayerNormalization_node", "'Scale'", "[3,5]"});
}

TEST(RefPrepareB, MaxUnpoolInfersItsOutputInPrepare) {
  const Tensor x = Floats({1, 1, 2, 2});
  const Tensor ind = Int64s({1, 1, 2, 2}, {0, 3, 8, 15});
  OneNode n("MaxUnpool", 11, {{&x}, {&ind}}, 1,
            {ir::IntsAttr("kernel_shape", {2, 2}), ir::IntsAttr("strides", {2, 2})});
  const PreparedKernel p = n.Prepare({{&x}, {&ind}});
  ExpectOutput(p, 0, DataType::kFloat, {1, 1, 4, 4});
  const std::vector<Value> out = n.Run(p, {{&x}, {&ind}});
  EXPECT_FLOAT_EQ(out[0].tensor().data<float>()[15], x.data<float>()[3]);
  const Tensor small = Int64s({1, 1, 1, 2}, {0, 1});
  ExpectNames(PrepareError(n, {{&x}, {&small}}), {"MaxUnpool_node", "input 1 'in1' int64[1,1,1,2]"});
}

TEST(RefPrepareB, MelWeightMatrixIsPreparedFromKnownScalars) {
  const Tensor bins = Int64s({}, {8}), dft = Int64s({}, {64}), rate = Int64s({}, {8000});
  Tensor lo(DataType::kFloat, {}), hi(DataType::kFloat, {});
  lo.data<float>()[0] = 0.0f;
  hi.data<float>()[0] = 4000.0f;
  const std::vector<In> known = {{&bins, true}, {&dft, true}, {&rate, true}, {&lo, true}, {&hi, true}};
  OneNode n("MelWeightMatrix", 17, known, 1);
  const PreparedKernel p = n.Prepare(known);
  ExpectOutput(p, 0, DataType::kFloat, {33, 8});
  const std::vector<In> data = {{&bins}, {&dft}, {&rate}, {&lo}, {&hi}};
  const PreparedKernel dynamic = n.Prepare(data);
  EXPECT_FALSE(dynamic.outputs[0].is_tensor());
  const Tensor a = n.Run(p, known)[0].tensor(), b = n.Run(dynamic, data)[0].tensor();
  ASSERT_EQ(b.shape(), (Shape{33, 8}));
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  const Tensor two = Int64s({2}, {8, 8});
  ExpectNames(PrepareError(n, {{&two}, {&dft}, {&rate}, {&lo}, {&hi}}), {"MelWeightMatrix_node", "num_mel_bins"});
}

TEST(RefPrepareB, MaxRoiPoolAndGlobalLpPoolRunFromTheirPreparedOutputs) {
  Tensor x(DataType::kFloat, {1, 1, 4, 4});
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i);
  Tensor rois(DataType::kFloat, {2, 5});
  const float boxes[] = {0, 0, 0, 3, 3, 0, 0, 0, 1, 1};
  std::copy(std::begin(boxes), std::end(boxes), rois.data<float>());
  OneNode roi("MaxRoiPool", 1, {{&x}, {&rois}}, 1, {ir::IntsAttr("pooled_shape", {1, 1})});
  const PreparedKernel p = roi.Prepare({{&x}, {&rois}});
  ExpectOutput(p, 0, DataType::kFloat, {2, 1, 1, 1});
  const Tensor y = roi.Run(p, {{&x}, {&rois}})[0].tensor();
  EXPECT_FLOAT_EQ(y.data<float>()[0], 15.0f);
  EXPECT_FLOAT_EQ(y.data<float>()[1], 5.0f);
  const Tensor flat = Floats({2, 4});
  ExpectNames(PrepareError(roi, {{&x}, {&flat}}), {"MaxRoiPool_node", "[num_rois, 5]", "input 1 'in1' float32[2,4]"});
  // A batch index outside X is the rois' data: Compute's error.
  rois.data<float>()[5] = 3;
  try {
    roi.Run(p, {{&x}, {&rois}});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    ExpectNames(e.what(), {"MaxRoiPool_node", "roi 1"});
  }

  Tensor v(DataType::kFloat, {1, 2, 2});
  const float values[] = {3, 4, 6, 8};
  std::copy(std::begin(values), std::end(values), v.data<float>());
  OneNode lp("GlobalLpPool", 2, {{&v}}, 1, {ir::IntAttr("p", 2)});
  const PreparedKernel lp_p = lp.Prepare({{&v}});
  ExpectOutput(lp_p, 0, DataType::kFloat, {1, 2, 1});
  const Tensor n = lp.Run(lp_p, {{&v}})[0].tensor();
  EXPECT_FLOAT_EQ(n.data<float>()[0], 5.0f);
  EXPECT_FLOAT_EQ(n.data<float>()[1], 10.0f);
  const Tensor row = Floats({4});
  ExpectNames(PrepareError(lp, {{&row}}), {"GlobalLpPool_node", "rank >= 2"});
}

std::unique_ptr<Session> CreateRef(const testing::ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  SessionOptions options;
  options.threads = 1;
  options.backends = {"ref"};
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
}

// x: float[1, C, 4] (symbolic C) normalised with 3 scales: a C other than 3 is known only when the run gives x, and
// is the error of InstanceNormalization's Prepare, naming the node and the parameters.
TEST(RefPrepareB, SessionInstanceNormalizationChannelMismatch) {
  testing::ModelBuilder b;
  b.InputSym("x", onnx::TensorProto::FLOAT, {1, -1, 4}, "C");
  b.FloatInitializer("scale", {3}, {1, 1, 1});
  b.FloatInitializer("bias", {3}, {0, 0, 0});
  b.Node("InstanceNormalization", {"x", "scale", "bias"}, {"y"}, "norm");
  b.Output("y", onnx::TensorProto::FLOAT, {1, 3, 4});
  auto session = CreateRef(b);
  try {
    session->Run({{"x", Floats({1, 5, 4})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ExpectNames(e.what(), {"norm", "InstanceNormalization", "C = 5", "input 1 'scale' float32[3]"});
  }
  auto out = session->Run({{"x", Floats({1, 3, 4})}});
  EXPECT_EQ(out.at(0).second.shape(), (Shape{1, 3, 4}));
}

// GatherND with batch_dims = 1: data's batch dim is symbolic, the indices' is 2.
TEST(RefPrepareB, SessionGatherNDBatchMismatch) {
  testing::ModelBuilder b;
  b.InputSym("data", onnx::TensorProto::FLOAT, {-1, 3}, "N");
  b.Int64Initializer("idx", {2, 1}, {0, 2});
  testing::ModelBuilder::IntAttr(b.Node("GatherND", {"data", "idx"}, {"y"}, "pick"), "batch_dims", 1);
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  auto session = CreateRef(b);
  try {
    session->Run({{"data", Floats({3, 3})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ExpectNames(e.what(), {"pick", "GatherND", "batch dimension 0", "'idx' int64[2,1]"});
  }
  auto out = session->Run({{"data", Floats({2, 3})}});
  const Tensor& y = out.at(0).second;
  ASSERT_EQ(y.shape(), (Shape{2}));
  EXPECT_FLOAT_EQ(y.data<float>()[1], Floats({2, 3}).data<float>()[5]);
}

}  // namespace
}  // namespace ferry
