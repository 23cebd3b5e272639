// The cpu LpPool and GlobalLpPool kernels (lp_pool.cc, AVX2+FMA / scalar) against ref: random 1-D/2-D/3-D windows
// with pads (some as large as the window: outputs wholly in padding), strides, dilations, ceil_mode and auto_pad,
// p = 1, 2 and 3 (an int from opset 2, a float at opset 1, absent: 2), values with NaN / +-inf / 1e30 (whose
// squares overflow a float but not ref's double), planes large enough for several threads, every ISA variant the
// host has (proven by the kernel that ran); GlobalLpPool over ranks 2-5; empty tensors; and bad inputs, whose
// errors name the node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

// MatchesRef, and with every ISA variant the host has, the kernel `stem`__impl.1 (proven to run).
void ExpectVariantsMatchRef(const OpTest& t, const std::string& stem, const std::string& what) {
  EXPECT_TRUE(MatchesRef(t, "cpu")) << what;
  for (const EwVariant& v : {kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, stem + "__" + v.impl + ".1")) << v.impl << " " << what;
  }
}

// A random LpPool of `rank` spatial dims at opset 18 (dilations and ceil_mode) or 11.
OpTest RandomLpPool(std::mt19937& rng, int64_t rank, int i) {
  const int64_t pads_kind = Pick(rng, 0, 7);  // 0-3 explicit, 4 SAME_UPPER, 5 SAME_LOWER, 6 VALID, 7 none
  const bool opset18 = i % 2 == 0;
  std::vector<int64_t> kernel, strides, dilations, pads(static_cast<size_t>(2 * rank));
  Shape xs{Pick(rng, 1, 2), Pick(rng, 1, 6)};
  for (int64_t d = 0; d < rank; ++d) {
    kernel.push_back(Pick(rng, 1, rank == 3 ? 3 : 5));
    strides.push_back(Pick(rng, 1, 3));
    dilations.push_back(opset18 ? Pick(rng, 1, 2) : 1);
    const int64_t span = (kernel.back() - 1) * dilations.back() + 1;
    int64_t min_in = span;
    if (pads_kind <= 3) {
      const int64_t most = Pick(rng, 0, 3) == 0 ? span : span - 1;
      pads[static_cast<size_t>(d)] = Pick(rng, 0, most);
      pads[static_cast<size_t>(d + rank)] = Pick(rng, 0, most);
      min_in = std::max<int64_t>(1, span - pads[static_cast<size_t>(d)] - pads[static_cast<size_t>(d + rank)]);
    } else if (pads_kind <= 5) {
      min_in = 1;
    }
    xs.push_back(min_in + Pick(rng, 0, rank == 3 ? 5 : 30));
  }
  OpTest t{.op = "LpPool", .opset = opset18 ? 18 : 11, .rtol = 1e-5, .atol = 1e-6, .threads = 1 + i % 2};
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, xs, rng, -2, 2, /*edges=*/i % 4 == 0)));
  t.attributes.push_back(Ints("kernel_shape", kernel));
  t.attributes.push_back(Int("p", 1 + i % 3));
  if (Pick(rng, 0, 3) > 0) t.attributes.push_back(Ints("strides", strides));
  if (opset18 && Pick(rng, 0, 1)) t.attributes.push_back(Ints("dilations", dilations));
  if (opset18 && Pick(rng, 0, 1)) t.attributes.push_back(Int("ceil_mode", 1));
  if (pads_kind <= 3) t.attributes.push_back(Ints("pads", pads));
  if (pads_kind == 4) t.attributes.push_back(Str("auto_pad", "SAME_UPPER"));
  if (pads_kind == 5) t.attributes.push_back(Str("auto_pad", "SAME_LOWER"));
  if (pads_kind == 6) t.attributes.push_back(Str("auto_pad", "VALID"));
  return t;
}

TEST(CpuLpPool, RandomWindowsMatchRef) {
  std::mt19937 rng(701);
  for (int i = 0; i < 72; ++i) {
    const OpTest t = RandomLpPool(rng, 1 + i % 3, i);
    ExpectVariantsMatchRef(t, "cpu.f32_lppool", "case " + std::to_string(i) + ": " + DescribeCase(t));
  }
}

// Planes with many outputs per row and several planes per thread (threads 1 and 2), p = 1, 2 and 3, stride 1 (the
// contiguous runs) and 2 (the strided ones).
TEST(CpuLpPool, LargePlanesMatchRef) {
  std::mt19937 rng(702);
  for (int threads : {1, 2}) {
    for (int64_t p : {1, 2, 3}) {
      for (int64_t stride : {1, 2}) {
        OpTest t{.op = "LpPool", .opset = 18, .rtol = 1e-5, .atol = 1e-6, .threads = threads};
        t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, {2, 9, 47, 83}, rng, -3, 3)));
        t.attributes = {Ints("kernel_shape", {3, 3}), Ints("strides", {stride, stride}), Ints("pads", {1, 1, 1, 1}),
                        Int("p", p)};
        ExpectVariantsMatchRef(t, "cpu.f32_lppool", DescribeCase(t));
      }
    }
  }
}

// Opset 1's float p (2 and a fractional one), p absent (2), a kernel as large as the input, and empty N or C.
TEST(CpuLpPool, FloatAndDefaultPAndEmptyTensorsMatchRef) {
  std::mt19937 rng(703);
  for (const float p : {2.0f, 1.5f}) {
    OpTest t{.op = "LpPool", .opset = 1, .rtol = 1e-5, .atol = 1e-6};
    t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, {1, 3, 9, 10}, rng)));
    t.attributes = {Ints("kernel_shape", {2, 3}), Ints("strides", {2, 1}), Float("p", p)};
    ExpectVariantsMatchRef(t, "cpu.f32_lppool", DescribeCase(t));
  }
  OpTest t{.op = "LpPool", .opset = 11, .rtol = 1e-5, .atol = 1e-6};
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, {2, 3, 5, 4}, rng)));
  t.attributes = {Ints("kernel_shape", {5, 4})};
  ExpectVariantsMatchRef(t, "cpu.f32_lppool", DescribeCase(t));
  for (const Shape& xs : {Shape{0, 3, 6}, Shape{2, 0, 6}}) {
    t.inputs[0].value = RandomTensor(DataType::kFloat, xs, rng);
    t.attributes = {Ints("kernel_shape", {3}), Int("p", 1)};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(xs);
  }
}

TEST(CpuGlobalLpPool, RanksAndPMatchRef) {
  std::mt19937 rng(711);
  for (int i = 0; i < 36; ++i) {
    const int64_t rank = 2 + i % 4;
    Shape xs{Pick(rng, 1, 3), Pick(rng, 1, 9)};
    for (int64_t d = 2; d < rank; ++d) xs.push_back(Pick(rng, 1, rank == 5 ? 9 : 40));
    OpTest t{.op = "GlobalLpPool", .opset = i % 6 == 5 ? 1 : 2, .rtol = 1e-5, .atol = 1e-6, .threads = 1 + i % 2};
    t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, xs, rng, -3, 3, /*edges=*/i % 5 == 0)));
    if (t.opset == 1) {
      t.attributes.push_back(Float("p", 3.0f));
    } else if (i % 3 < 2) {
      t.attributes.push_back(Int("p", 1 + i % 3));
    }
    ExpectVariantsMatchRef(t, "cpu.f32_globallppool", "case " + std::to_string(i) + ": " + DescribeCase(t));
  }
  OpTest t{.op = "GlobalLpPool", .opset = 2, .threads = 2};
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, {2, 3, 300, 301}, rng, -3, 3)));
  ExpectVariantsMatchRef(t, "cpu.f32_globallppool", "large planes");
  for (const Shape& xs : {Shape{0, 3, 4}, Shape{2, 3, 0}}) {
    t.inputs[0].value = RandomTensor(DataType::kFloat, xs, rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(xs);
  }
}

// A window wider than X without padding (no output), found by the cpu kernel's Prepare at the first run of the
// dynamic-shape model (shape inference cannot know X's extent): an InvalidArgumentError naming the node; and a p
// that is not positive, refused when the kernel is created.
TEST(CpuLpPool, BadInputsNameTheNode) {
  std::mt19937 rng(721);
  OpTest t{.op = "LpPool", .opset = 18};
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, {1, 2, 3}, rng)));
  t.attributes = {Ints("kernel_shape", {5})};
  try {
    SessionFor(DynamicOneNodeModel(t), {"cpu"}, true, 1)->Run(Feeds(t));
    ADD_FAILURE() << "expected an InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'node' (LpPool)"), std::string::npos) << what;
    EXPECT_NE(what.find("input spatial shape [3] is too small for kernel [5]"), std::string::npos) << what;
  }
  for (const char* op : {"LpPool", "GlobalLpPool"}) {
    OpTest z{.op = op, .opset = 11};
    z.inputs.push_back(In("x", RandomTensor(DataType::kFloat, {1, 2, 6}, rng)));
    if (z.op == "LpPool") z.attributes.push_back(Ints("kernel_shape", {2}));
    z.attributes.push_back(Int("p", 0));
    try {
      SessionFor(OneNodeModel(z), {"cpu"}, true, 1);
      ADD_FAILURE() << op << ": expected an error for p = 0";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("(" + z.op + ")"), std::string::npos) << what;
      EXPECT_NE(what.find("must be positive"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace ferry::testing
