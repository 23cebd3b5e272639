// The host-side arithmetic of the CUDA kernels (src/kernels/cuda_defs/cuda_shapes.h), tested without a GPU:
// launch configurations, index maps (offsets computed here the way the device code does), reductions, views.
#include "kernels/cuda_defs/cuda_shapes.h"

#include <gtest/gtest.h>

#include "ferry/error.h"

namespace ferry::cuda {
namespace {

// The device's MapOffset, on the host.
int64_t Offset(const IndexMap& m, int k, int64_t i) {
  int64_t off = m.base[k];
  for (int d = m.rank - 1; d >= 0; --d) {
    off += (i % m.dims[d]) * m.strides[k][d];
    i /= m.dims[d];
  }
  return off;
}

TEST(CudaShapes, LaunchCoversEveryElementWithBoundedBlocks) {
  EXPECT_EQ(LaunchFor(0).blocks, 0);
  EXPECT_EQ(LaunchFor(1).blocks, 1);
  EXPECT_EQ(LaunchFor(256).blocks, 1);
  EXPECT_EQ(LaunchFor(257).blocks, 2);
  EXPECT_EQ(LaunchFor(int64_t{1} << 40).blocks, kMaxBlocks);  // the grid-stride loop covers the rest
  EXPECT_EQ(LaunchFor(1000, 128).threads, 128);
}

TEST(CudaShapes, BroadcastMapMatchesNumpy) {
  const Shape a = {2, 1, 4}, b = {3, 1};
  const Shape shapes[] = {a, b};
  EXPECT_EQ(BroadcastShape(shapes, "t"), (Shape{2, 3, 4}));
  const IndexMap m = BroadcastMap(shapes, "t");
  EXPECT_EQ(m.count, 24);
  for (int64_t i = 0; i < 24; ++i) {
    const int64_t x = i / 12, y = (i / 4) % 3, z = i % 4;
    EXPECT_EQ(Offset(m, 0, i), x * 4 + z) << i;
    EXPECT_EQ(Offset(m, 1, i), y) << i;
  }
  // Same shapes coalesce to one dim.
  const Shape same[] = {Shape{2, 3, 4}, Shape{2, 3, 4}};
  EXPECT_EQ(BroadcastMap(same, "t").rank, 1);
  const Shape bad[] = {Shape{2, 3}, Shape{4}};
  EXPECT_THROW(BroadcastShape(bad, "node 'n' (Add)"), InvalidModelError);
  const Shape scalar[] = {Shape{}, Shape{5}};
  EXPECT_EQ(BroadcastShape(scalar, "t"), (Shape{5}));
}

TEST(CudaShapes, TransposeMapPermutes) {
  Shape out;
  const IndexMap m = TransposeMap({2, 3, 4}, {2, 0, 1}, &out, "t");
  EXPECT_EQ(out, (Shape{4, 2, 3}));
  for (int64_t i = 0; i < 24; ++i) {
    const int64_t c = i / 6, a = (i / 3) % 2, b = i % 3;  // out[c][a][b] = in[a][b][c]
    EXPECT_EQ(Offset(m, 0, i), a * 12 + b * 4 + c) << i;
  }
  TransposeMap({2, 3}, {}, &out, "t");
  EXPECT_EQ(out, (Shape{3, 2}));
  EXPECT_THROW(TransposeMap({2, 3}, {0, 0}, &out, "t"), InvalidModelError);
  EXPECT_THROW(TransposeMap(Shape(9, 1), {}, &out, "t"), UnsupportedError);
}

TEST(CudaShapes, SliceMapClampsAndSteps) {
  Shape out;
  // x[1:, ::-2] of a 3x5.
  const IndexMap m = SliceMap({3, 5}, {1, -1}, {100, INT64_MIN}, {}, {1, -2}, &out, "t");
  EXPECT_EQ(out, (Shape{2, 3}));
  const int64_t want[] = {9, 7, 5, 14, 12, 10};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(Offset(m, 0, i), want[i]) << i;
  SliceMap({4}, {3}, {1}, {0}, {1}, &out, "t");
  EXPECT_EQ(out, (Shape{0}));
  EXPECT_THROW(SliceMap({4}, {0}, {1}, {0}, {0}, &out, "t"), InvalidModelError);
}

TEST(CudaShapes, ReducePlanSplitsKeptAndReducedDims) {
  const ReducePlan p = PlanReduce({2, 3, 4}, {1}, "t");
  EXPECT_EQ(p.outputs, 8);
  EXPECT_EQ(p.reduced, 3);
  EXPECT_EQ(p.kept_rank, 2);
  EXPECT_EQ(p.red_strides[0], 4);
  EXPECT_EQ(ReducedShape({2, 3, 4}, {1}, true), (Shape{2, 1, 4}));
  EXPECT_EQ(ReducedShape({2, 3, 4}, {0, 2}, false), (Shape{3}));
  EXPECT_EQ(NormalizeAxes({-1, 0}, 3, "t"), (std::vector<int64_t>{0, 2}));
  EXPECT_THROW(NormalizeAxes({3}, 3, "t"), InvalidModelError);
  EXPECT_THROW(NormalizeAxes({1, -2}, 3, "t"), InvalidModelError);
}

TEST(CudaShapes, ViewShapes) {
  EXPECT_EQ(ReshapeShape({2, 3, 4}, std::vector<int64_t>{0, -1}, false, "t"), (Shape{2, 12}));
  EXPECT_EQ(ReshapeShape({0, 3}, std::vector<int64_t>{0, 3}, true, "t"), (Shape{0, 3}));
  EXPECT_THROW(ReshapeShape({2, 3}, std::vector<int64_t>{4, -1}, false, "t"), InvalidModelError);
  EXPECT_THROW(ReshapeShape({2, 3}, std::vector<int64_t>{-1, -1}, false, "t"), InvalidModelError);
  EXPECT_EQ(FlattenShape({2, 3, 4}, 1, "t"), (Shape{2, 12}));
  EXPECT_EQ(FlattenShape({2, 3, 4}, 0, "t"), (Shape{1, 24}));
  EXPECT_EQ(FlattenShape({2, 3, 4}, -1, "t"), (Shape{6, 4}));
  EXPECT_EQ(SqueezeShape({1, 3, 1}, {}, "t"), (Shape{3}));
  EXPECT_EQ(SqueezeShape({1, 3, 1}, {-1}, "t"), (Shape{1, 3}));
  EXPECT_THROW(SqueezeShape({1, 3}, {1}, "t"), InvalidModelError);
  EXPECT_EQ(UnsqueezeShape({3, 4}, {0, -1}, "t"), (Shape{1, 3, 4, 1}));
}

TEST(CudaShapes, SoftmaxGatherConcatPlans) {
  SoftmaxPlan s = PlanSoftmax({2, 3, 4}, 1, 13, "t");
  EXPECT_EQ(s.outer, 2);
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.inner, 4);
  s = PlanSoftmax({2, 3, 4}, 1, 11, "t");  // before opset 13: the row is every dim from axis on
  EXPECT_EQ(s.n, 12);
  EXPECT_EQ(s.inner, 1);
  Shape out;
  const GatherPlan g = PlanGather({5, 6, 7}, {2, 3}, 1, &out, "t");
  EXPECT_EQ(out, (Shape{5, 2, 3, 7}));
  EXPECT_EQ(g.outer, 5);
  EXPECT_EQ(g.axis_dim, 6);
  EXPECT_EQ(g.inner, 7);
  EXPECT_EQ(g.indices, 6);
  int64_t outer = 0;
  std::vector<int64_t> widths;
  EXPECT_EQ(ConcatShape({{2, 3, 4}, {2, 1, 4}}, 1, &outer, &widths, "t"), (Shape{2, 4, 4}));
  EXPECT_EQ(outer, 2);
  EXPECT_EQ(widths, (std::vector<int64_t>{12, 4}));
  EXPECT_THROW(ConcatShape({{2, 3}, {3, 3}}, 1, &outer, &widths, "t"), InvalidModelError);
}

}  // namespace
}  // namespace ferry::cuda
