// cpu Where against ref, bit for bit: equal shapes with sizes around the SIMD widths, random numpy broadcasts of
// the three inputs, every numeric type and bool, the AVX-512, AVX2 and scalar variants, 1 and 2 threads, empty
// tensors, incompatible shapes.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

const Variant kVariants[] = {{"avx512f", "cpu.any_where__avx512.9"},
                             {"avx2", "cpu.any_where__avx2.9"},
                             {"none", "cpu.any_where__scalar.9"}};

const DataType kTypes[] = {DataType::kFloat, DataType::kInt64, DataType::kInt32,  DataType::kDouble,
                           DataType::kUint8, DataType::kBool,  DataType::kFloat16, DataType::kBFloat16,
                           DataType::kInt8,  DataType::kUint64, DataType::kInt16};

// A shape that broadcasts to `out`: a suffix of it with some dims replaced by 1.
Shape BroadcastableTo(const Shape& out, std::mt19937& rng) {
  const size_t rank = static_cast<size_t>(Pick(rng, 0, static_cast<int64_t>(out.size())));
  Shape s(out.end() - static_cast<std::ptrdiff_t>(rank), out.end());
  for (auto& d : s) {
    if (Pick(rng, 0, 2) == 0) d = 1;
  }
  return s;
}

OpTest WhereTest(const Tensor& c, const Tensor& x, const Tensor& y, int threads, std::mt19937& rng) {
  const int64_t opset = Pick(rng, 0, 1) && x.dtype() != DataType::kBFloat16 ? 9 : 16;  // bfloat16 from 16
  return {.op = "Where",
          .opset = opset,
          .inputs = {In("c", c), Pick(rng, 0, 3) ? In("x", x) : Const("x", x), In("y", y)},
          .threads = threads};
}

TEST(CpuWhere, EqualShapesAllVariants) {
  std::mt19937 rng(601);
  for (int it = 0; it < 40; ++it) {
    const int64_t n = it < 30 ? Pick(rng, 1, 70) : Pick(rng, 70000, 140000);  // tails, then threaded sizes
    const Shape shape = Pick(rng, 0, 1) ? Shape{n} : Shape{1, n};
    const DataType dt = kTypes[static_cast<size_t>(it) % std::size(kTypes)];
    const Tensor c = RandomTensor(DataType::kBool, shape, rng);
    const Tensor x = RandomBits(dt, shape, rng), y = RandomBits(dt, shape, rng);
    const int threads = static_cast<int>(Pick(rng, 1, 2));
    for (const Variant& v : kVariants) {
      if (!HostHas(v)) continue;
      EXPECT_TRUE(BitExactOnCpu(WhereTest(c, x, y, threads, rng), v.isa, v.kernel))
          << DataTypeName(dt) << ShapeToString(shape) << " " << v.kernel;
    }
  }
}

TEST(CpuWhere, RandomBroadcastsMatchRef) {
  std::mt19937 rng(602);
  for (int it = 0; it < 60; ++it) {
    const Shape out = RandomShape(rng, Pick(rng, 0, 4), it % 13 == 0 ? 0 : 1, it % 10 == 0 ? 80 : 9);
    const DataType dt = kTypes[static_cast<size_t>(it) % std::size(kTypes)];
    Shape cs = BroadcastableTo(out, rng), xs = BroadcastableTo(out, rng), ys = BroadcastableTo(out, rng);
    // One input keeps the full shape so the output shape is `out`.
    (Pick(rng, 0, 2) == 0 ? cs : Pick(rng, 0, 1) ? xs : ys) = out;
    const Tensor c = RandomTensor(DataType::kBool, cs, rng);
    const Tensor x = RandomBits(dt, xs, rng), y = RandomBits(dt, ys, rng);
    const int threads = static_cast<int>(Pick(rng, 1, 2));
    for (const Variant& v : kVariants) {
      if (!HostHas(v)) continue;
      EXPECT_TRUE(BitExactOnCpu(WhereTest(c, x, y, threads, rng), v.isa, v.kernel))
          << DataTypeName(dt) << " c" << ShapeToString(cs) << " x" << ShapeToString(xs) << " y"
          << ShapeToString(ys);
    }
  }
}

TEST(CpuWhere, LargeBroadcastsOnTwoThreads) {
  std::mt19937 rng(603);
  const Tensor c = RandomTensor(DataType::kBool, {64, 1, 1000}, rng);
  const Tensor x = RandomBits(DataType::kFloat, {64, 8, 1000}, rng);
  const Tensor y = RandomBits(DataType::kFloat, {1000}, rng);
  EXPECT_TRUE(BitExactOnCpu(WhereTest(c, x, y, 2, rng)));
  const Tensor c2 = RandomTensor(DataType::kBool, {512, 1}, rng);
  EXPECT_TRUE(BitExactOnCpu(WhereTest(c2, RandomBits(DataType::kInt64, {512, 300}, rng),
                                      RandomBits(DataType::kInt64, {1, 300}, rng), 2, rng)));
}

TEST(CpuWhere, MaskRowsAgainstAScalarSide) {
  // The attention-mask form: a [1,1,S,S] mask broadcast over heads, one side full, the other a scalar (either way).
  std::mt19937 rng(604);
  for (const DataType dt : {DataType::kFloat, DataType::kFloat16, DataType::kInt64, DataType::kUint8}) {
    const Tensor c = RandomTensor(DataType::kBool, {1, 1, 37, 37}, rng);
    const Tensor full = RandomBits(dt, {1, 3, 37, 37}, rng), scalar = RandomBits(dt, {}, rng);
    for (const int threads : {1, 2}) {
      for (const Variant& v : kVariants) {
        if (!HostHas(v)) continue;
        EXPECT_TRUE(BitExactOnCpu(WhereTest(c, full, scalar, threads, rng), v.isa, v.kernel)) << DataTypeName(dt);
        EXPECT_TRUE(BitExactOnCpu(WhereTest(c, scalar, full, threads, rng), v.isa, v.kernel)) << DataTypeName(dt);
      }
    }
  }
}

TEST(CpuWhere, IncompatibleShapesAreInvalidArguments) {
  std::mt19937 rng(604);
  OpTest t{.op = "Where", .opset = 16,
           .inputs = {In("c", RandomTensor(DataType::kBool, {3}, rng)),
                      In("x", RandomBits(DataType::kFloat, {4}, rng)),
                      In("y", RandomBits(DataType::kFloat, {1}, rng))}};
  ExpectSameErrorAsRef(t, ErrorCategory::kInvalidArgument);
}

TEST(CpuWhere, StringsFallBackToRef) {
  std::mt19937 rng(605);
  Tensor x(DataType::kString, {2}), y(DataType::kString, {2});
  x.strings()[0] = "a";
  y.strings()[1] = "b";
  OpTest t{.op = "Where", .opset = 16,
           .inputs = {In("c", RandomTensor(DataType::kBool, {2}, rng)), In("x", x), In("y", y)}};
  ExpectRefusedAndFallsBack(t, "string");
}

}  // namespace
}  // namespace ferry::testing::glue
