// The cpu convolution kernels' Prepare (Conv, ai.ferry FusedConv / BlockedConv, ConvTranspose, ReorderToBlocked /
// ReorderFromBlocked): every shape and dtype check is raised by Prepare, naming the model, the node and the input;
// Prepare declares Y's dtype and exact shape (blocked where the op writes the blocked layout), Z's buffer as the
// place Y may accumulate in, and the scratch slots the run keeps (what OpKernel::AddWorkspace gave); and a run on
// the prepared state matches ref.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/evaluate_node.h"
#include "kernels/kernel.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/registry.h"
#include "testing/prepare_harness.h"

namespace ferry {
namespace {

using testing::Contains;
using testing::CpuRegistry;
using testing::ErrorOf;
using testing::RefRegistry;
using OneNode = testing::CpuNode;

Tensor Ramp(const Shape& shape, float scale = 0.01f) {
  Tensor t(DataType::kFloat, shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i) p[i] = scale * static_cast<float>(i % 23) - 0.1f;
  return t;
}

// The message Prepare throws as `E`, or "" (a test failure) when it throws nothing or something else.
template <typename E>
std::string PrepareError(const OneNode& n, const std::string& name) {
  return ErrorOf<E>([&] { n.Prepare(name); });
}

constexpr const char* kConv = "cpu.f32_conv__onednn.1";
constexpr const char* kFusedConv = "cpu.f32_fused_conv__onednn.1";
constexpr const char* kBlockedConv = "cpu.f32_blocked_conv__onednn.1";
constexpr const char* kConvTranspose = "cpu.f32_conv_transpose__onednn.1";
constexpr const char* kToBlocked = "cpu.f32_reorder_to_blocked__onednn.1";
constexpr const char* kFromBlocked = "cpu.f32_reorder_from_blocked__onednn.1";

TEST(CpuPrepareConv, ChannelMismatchIsRaisedByPrepareNamingModelNodeAndInputs) {
  // X has 3 channels, W wants 2 (group 1).
  OneNode n("Conv", "", {{"x", Ramp({1, 3, 5, 5})}, {"w", Ramp({4, 2, 3, 3}), true}}, {});
  const std::string e = PrepareError<InvalidArgumentError>(n, kConv);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Conv)")) << e;
  EXPECT_TRUE(Contains(e, "input 0 'x' float32[1,3,5,5]")) << e;
  EXPECT_TRUE(Contains(e, "input 1 'w' float32[4,2,3,3]")) << e;
}

TEST(CpuPrepareConv, BadBiasAndDtypeAreRaisedByPrepare) {
  OneNode bias("Conv", "",
               {{"x", Ramp({1, 2, 5, 5})}, {"w", Ramp({4, 2, 3, 3}), true}, {"b", Ramp({3}), true}}, {});
  std::string e = PrepareError<InvalidArgumentError>(bias, kConv);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Conv)")) << e;
  EXPECT_TRUE(Contains(e, "input 2 'b' float32[3], expected float32[4]")) << e;

  Tensor x64(DataType::kDouble, {1, 2, 5, 5});
  OneNode f64("Conv", "", {{"x", x64}, {"w", Ramp({4, 2, 3, 3}), true}}, {});
  e = PrepareError<InvalidArgumentError>(f64, kConv);
  EXPECT_TRUE(Contains(e, "must be float32")) << e;
  EXPECT_TRUE(Contains(e, "input 0 'x' float64[1,2,5,5]")) << e;
}

TEST(CpuPrepareConv, FusedConvZOfTheWrongShapeIsRaisedByPrepare) {
  OneNode n("FusedConv", "ai.ferry",
            {{"x", Ramp({1, 2, 5, 5})},
             {"w", Ramp({4, 2, 3, 3}), true},
             {"b", Ramp({4}), true},
             {"z", Ramp({1, 4, 5, 5})}},
            {ir::IntsAttr("pads", {0, 0, 0, 0})});
  const std::string e = PrepareError<InvalidArgumentError>(n, kFusedConv);
  EXPECT_TRUE(Contains(e, "node 'n' (ai.ferry::FusedConv)")) << e;
  EXPECT_TRUE(Contains(e, "input 3 'z' float32[1,4,5,5], expected Y's float32[1,4,3,3]")) << e;
}

TEST(CpuPrepareConv, ConvDeclaresYAndTheWorkspaceOfItsPlan) {
  // A 3x3 convolution over 16 channels: the blocked layout oneDNN picks, so both activations are reordered.
  OneNode n("Conv", "", {{"x", Ramp({1, 16, 20, 20})}, {"w", Ramp({32, 16, 3, 3}, 0.001f), true}},
            {ir::IntsAttr("pads", {1, 1, 1, 1})});
  const PreparedKernel p = n.Prepare(kConv);
  ASSERT_EQ(p.outputs.size(), 1u);
  ASSERT_TRUE(p.outputs[0].is_tensor());
  EXPECT_EQ(p.outputs[0].dtype, DataType::kFloat);
  EXPECT_EQ(p.outputs[0].shape, (Shape{1, 32, 20, 20}));
  EXPECT_EQ(p.outputs[0].in_place_of, -1);
  EXPECT_EQ(p.outputs[0].view_of, -1);
  EXPECT_NE(p.state, nullptr);
  const auto& buffers = p.workspace.buffers();
  ASSERT_TRUE(buffers.count("conv src reorder")) << "no reorder of X predicted";
  ASSERT_TRUE(buffers.count("conv dst reorder")) << "no reorder of Y predicted";
  EXPECT_EQ(buffers.at("conv src reorder").bytes, 16 * 20 * 20 * 4);
  EXPECT_EQ(buffers.at("conv dst reorder").bytes, 32 * 20 * 20 * 4);
  // A run on that state matches ref.
  const Tensor got = n.Evaluate(CpuRegistry()), want = n.Evaluate(RefRegistry());
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-4) << "element " << i;
  }
  // Empty X: Y is declared, and nothing is planned.
  OneNode empty("Conv", "", {{"x", Ramp({0, 16, 20, 20})}, {"w", Ramp({32, 16, 3, 3}), true}},
                {ir::IntsAttr("pads", {1, 1, 1, 1})});
  const PreparedKernel q = empty.Prepare(kConv);
  EXPECT_EQ(q.outputs[0].shape, (Shape{0, 32, 20, 20}));
  EXPECT_EQ(q.workspace.bytes(), 0);
}

TEST(CpuPrepareConv, FusedConvMayAccumulateInZ) {
  OneNode n("FusedConv", "ai.ferry",
            {{"x", Ramp({1, 2, 5, 5})},
             {"w", Ramp({4, 2, 3, 3}), true},
             {"b", Ramp({4}), true},
             {"z", Ramp({1, 4, 3, 3})}},
            {ir::StringAttr("activation", "Relu")});
  const PreparedKernel p = n.Prepare(kFusedConv);
  ASSERT_TRUE(p.outputs[0].is_tensor());
  EXPECT_EQ(p.outputs[0].shape, (Shape{1, 4, 3, 3}));
  EXPECT_EQ(p.outputs[0].in_place_of, 3);
  const Tensor got = n.Evaluate(CpuRegistry()), want = n.Evaluate(RefRegistry());
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5);
}

TEST(CpuPrepareConv, BlockedConvDeclaresTheBlockedY) {
  // X [1, 16, 6, 6] blocked by 8; W [M, 16, 3, 3] padded by 1: Y [1, ceil(M/8), 6, 6, 8].
  for (int64_t m : {int64_t{12}, int64_t{16}}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    const Shape y{1, (m + 7) / 8, 6, 6, 8};
    OneNode n("BlockedConv", "ai.ferry",
              {{"x", Ramp({1, 2, 6, 6, 8})}, {"w", Ramp({m, 16, 3, 3}, 0.001f), true}, {"b", Ramp({m}), true},
               {"z", Ramp(y)}},
              {ir::IntAttr("block", 8), ir::IntsAttr("pads", {1, 1, 1, 1})});
    const PreparedKernel p = n.Prepare(kBlockedConv);
    ASSERT_TRUE(p.outputs[0].is_tensor());
    EXPECT_EQ(p.outputs[0].dtype, DataType::kFloat);
    EXPECT_EQ(p.outputs[0].shape, y);
    // Padding channels in Y (M = 12) need Z copied with zeros there first: no accumulating in Z's buffer.
    EXPECT_EQ(p.outputs[0].in_place_of, m % 8 == 0 ? 3 : -1);
    // No activation is reordered: the primitive runs on the blocked tensors (or brgconv, reordering to nhwc).
    EXPECT_NE(p.state, nullptr);
  }
  // A blocked X that does not match W: Prepare names it.
  OneNode bad("BlockedConv", "ai.ferry", {{"x", Ramp({1, 3, 6, 6, 8})}, {"w", Ramp({16, 16, 3, 3}), true}},
              {ir::IntAttr("block", 8), ir::IntsAttr("pads", {1, 1, 1, 1})});
  const std::string e = PrepareError<InvalidArgumentError>(bad, kBlockedConv);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (ai.ferry::BlockedConv)")) << e;
  EXPECT_TRUE(Contains(e, "input 0 'x' float32[1,3,6,6,8]")) << e;
  EXPECT_TRUE(Contains(e, "blocked by 8")) << e;
}

TEST(CpuPrepareConv, ReordersDeclareTheirShapes) {
  // 13 channels blocked by 8: [1, 2, 4, 4, 8] and back.
  OneNode to("ReorderToBlocked", "ai.ferry", {{"x", Ramp({1, 13, 4, 4})}},
             {ir::IntAttr("block", 8), ir::IntAttr("channels", 13)});
  const PreparedKernel pt = to.Prepare(kToBlocked);
  ASSERT_TRUE(pt.outputs[0].is_tensor());
  EXPECT_EQ(pt.outputs[0].dtype, DataType::kFloat);
  EXPECT_EQ(pt.outputs[0].shape, (Shape{1, 2, 4, 4, 8}));
  const Tensor blocked = to.Evaluate(CpuRegistry());
  EXPECT_EQ(blocked.shape(), (Shape{1, 2, 4, 4, 8}));

  OneNode from("ReorderFromBlocked", "ai.ferry", {{"x", blocked}},
               {ir::IntAttr("block", 8), ir::IntAttr("channels", 13)});
  const PreparedKernel pf = from.Prepare(kFromBlocked);
  ASSERT_TRUE(pf.outputs[0].is_tensor());
  EXPECT_EQ(pf.outputs[0].shape, (Shape{1, 13, 4, 4}));
  const Tensor back = from.Evaluate(CpuRegistry());
  ASSERT_EQ(back.shape(), (Shape{1, 13, 4, 4}));
  const Tensor x = Ramp({1, 13, 4, 4});
  for (int64_t i = 0; i < x.size(); ++i) EXPECT_EQ(back.data<float>()[i], x.data<float>()[i]) << "element " << i;

  // Channels-last: [1, 4, 4, 13].
  OneNode nhwc("ReorderToBlocked", "ai.ferry", {{"x", Ramp({1, 13, 4, 4})}}, {ir::IntAttr("block", 0)});
  EXPECT_EQ(nhwc.Prepare(kToBlocked).outputs[0].shape, (Shape{1, 4, 4, 13}));

  // X not blocked as the node says (3 blocks for 13 channels), and a rank with no blocked layout.
  OneNode bad("ReorderFromBlocked", "ai.ferry", {{"x", Ramp({1, 3, 4, 4, 8})}},
              {ir::IntAttr("block", 8), ir::IntAttr("channels", 13)});
  std::string e = PrepareError<InvalidArgumentError>(bad, kFromBlocked);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (ai.ferry::ReorderFromBlocked)")) << e;
  EXPECT_TRUE(Contains(e, "input 0 'x' float32[1,3,4,4,8], expected 13 channels blocked by 8")) << e;
  OneNode rank2("ReorderToBlocked", "ai.ferry", {{"x", Ramp({2, 13})}}, {ir::IntAttr("block", 8)});
  e = PrepareError<UnsupportedError>(rank2, kToBlocked);
  EXPECT_TRUE(Contains(e, "input 0 'x' float32[2,13]")) << e;
}

TEST(CpuPrepareConv, ConvTransposeDeclaresYAndRaisesShapeErrors) {
  OneNode n("ConvTranspose", "", {{"x", Ramp({1, 3, 5, 5})}, {"w", Ramp({3, 2, 3, 3}), true}},
            {ir::IntsAttr("strides", {2, 2})});
  const PreparedKernel p = n.Prepare(kConvTranspose);
  ASSERT_TRUE(p.outputs[0].is_tensor());
  EXPECT_EQ(p.outputs[0].shape, (Shape{1, 2, 11, 11}));
  EXPECT_NE(p.state, nullptr);
  const Tensor got = n.Evaluate(CpuRegistry()), want = n.Evaluate(RefRegistry());
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5);

  OneNode bad("ConvTranspose", "", {{"x", Ramp({1, 3, 5, 5})}, {"w", Ramp({4, 2, 3, 3}), true}}, {});
  std::string e = PrepareError<InvalidArgumentError>(bad, kConvTranspose);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (ConvTranspose)")) << e;
  EXPECT_TRUE(Contains(e, "input 1 'w' float32[4,2,3,3]")) << e;

  OneNode bias("ConvTranspose", "",
               {{"x", Ramp({1, 3, 5, 5})}, {"w", Ramp({3, 2, 3, 3}), true}, {"b", Ramp({3}), true}}, {});
  e = PrepareError<InvalidArgumentError>(bias, kConvTranspose);
  EXPECT_TRUE(Contains(e, "input 2 'b' float32[3], expected float32[2]")) << e;
}

}  // namespace
}  // namespace ferry
