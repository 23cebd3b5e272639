// cpu ScatterND, ScatterElements, GatherND, Range, NonZero, OneHot, EyeLike against ref, bit for bit: random shapes and index tuples (negative and repeated
// ones), every reduction, byte-sized types, inputs known before the run and fed at run time, empty tensors, 1 and 2
// threads, and the data errors (out-of-range indices, a zero delta) with ref's error category.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

const DataType kTypes[] = {DataType::kFloat, DataType::kInt64, DataType::kUint8, DataType::kBool,
                           DataType::kFloat16, DataType::kInt32, DataType::kDouble, DataType::kInt8};

DataType TypeAt(int it) { return kTypes[static_cast<size_t>(it) % std::size(kTypes)]; }

// --- ScatterND ---

OpTest ScatterNDTest(const Tensor& data, const Tensor& indices, const Tensor& updates, const std::string& reduction,
                     int threads) {
  OpTest t{.op = "ScatterND",
           .opset = 18,
           .inputs = {In("data", data), In("indices", indices), In("updates", updates)},
           .threads = threads};
  if (!reduction.empty()) t.attributes.push_back(Str("reduction", reduction));
  return t;
}

// `tuples` index tuples of length k into `shape` (negative ones too), as int64 [tuples..., k].
Tensor RandomTuples(const Shape& shape, const Shape& lead, int64_t k, std::mt19937& rng) {
  Shape s = lead;
  s.push_back(k);
  Tensor t(DataType::kInt64, s);
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t dim = shape[static_cast<size_t>(i % k)];
    t.data<int64_t>()[i] = Pick(rng, -dim, dim - 1);
  }
  return t;
}

TEST(CpuScatterND, RandomConfigurationsMatchRef) {
  std::mt19937 rng(851);
  const char* reductions[] = {"", "none", "add", "mul", "max", "min"};
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    const Shape shape = RandomShape(rng, rank, 1, rank <= 2 ? 10 : 5);
    const int64_t k = Pick(rng, 1, rank);
    const Shape lead = RandomShape(rng, Pick(rng, 0, 2), it % 15 == 0 ? 0 : 1, 4);
    Shape ushape = lead;
    ushape.insert(ushape.end(), shape.begin() + k, shape.end());
    const std::string reduction = reductions[it % std::size(reductions)];
    const DataType dt = reduction.empty() || reduction == "none" ? TypeAt(it) : (it % 4 < 2 ? DataType::kFloat
                                                                                          : DataType::kInt64);
    const OpTest t = ScatterNDTest(RandomBits(dt, shape, rng), RandomTuples(shape, lead, k, rng),
                                   RandomBits(dt, ushape, rng), reduction, static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_scatter_nd__memcpy.11"))
        << DataTypeName(dt) << ShapeToString(shape) << " k " << k << " lead " << ShapeToString(lead) << " reduction '"
        << reduction << "'";
  }
}

TEST(CpuScatterND, LargeSlicesOnTwoThreads) {
  std::mt19937 rng(852);
  const Shape shape = {64, 4096};
  EXPECT_TRUE(BitExactOnCpu(ScatterNDTest(RandomBits(DataType::kFloat, shape, rng), RandomTuples(shape, {20}, 1, rng),
                                          RandomBits(DataType::kFloat, {20, 4096}, rng), "", 2)));
  // Finite values: which NaN operand's payload a sum keeps is unspecified (the compiler may swap the operands).
  EXPECT_TRUE(BitExactOnCpu(ScatterNDTest(RandomTensor(DataType::kFloat, shape, rng, -9, 9),
                                          RandomTuples(shape, {30}, 1, rng),
                                          RandomTensor(DataType::kFloat, {30, 4096}, rng, -9, 9), "add", 2)));
}

TEST(CpuScatterND, OutOfRangeIndicesAreInvalidArguments) {
  std::mt19937 rng(853);
  const Tensor data = RandomBits(DataType::kFloat, {4, 3}, rng);
  for (int64_t bad : {4, -5, 99}) {
    const Tensor idx = Tensor::FromVector<int64_t>(DataType::kInt64, {2, 1}, std::vector<int64_t>{1, bad});
    ExpectSameErrorAsRef(ScatterNDTest(data, idx, RandomBits(DataType::kFloat, {2, 3}, rng), "", 1),
                         ErrorCategory::kInvalidArgument);
    ExpectSameErrorAsRef(ScatterNDTest(data, idx, RandomBits(DataType::kFloat, {2, 3}, rng), "max", 2),
                         ErrorCategory::kInvalidArgument);
  }
}

// --- Range ---

template <typename T>
Tensor ScalarOf(DataType dt, T v) {
  return Tensor::FromVector<T>(dt, {}, std::vector<T>{v});
}

template <typename T>
OpTest RangeTest(DataType dt, T start, T limit, T delta, bool constant, int threads) {
  auto in = [&](const char* name, T v) { return constant ? Const(name, ScalarOf(dt, v)) : In(name, ScalarOf(dt, v)); };
  return {.op = "Range",
          .opset = 11,
          .inputs = {in("start", start), in("limit", limit), in("delta", delta)},
          .threads = threads};
}

TEST(CpuRange, FloatAndIntegerRangesMatchRef) {
  for (bool constant : {true, false}) {
    for (int threads : {1, 2}) {
      // Constant bounds fold the node away at session creation: the kernel is named only when they are fed.
      EXPECT_TRUE(BitExactOnCpu(RangeTest<float>(DataType::kFloat, 0.5f, 17.3f, 0.7f, constant, threads), "",
                                constant ? "" : "cpu.f32_i32_i64_range__parallel.11"));
      EXPECT_TRUE(BitExactOnCpu(RangeTest<float>(DataType::kFloat, 3.0f, -8.0f, -0.3f, constant, threads)));
      EXPECT_TRUE(BitExactOnCpu(RangeTest<float>(DataType::kFloat, 1.0f, 1.0f, 0.5f, constant, threads)));
      EXPECT_TRUE(BitExactOnCpu(RangeTest<float>(DataType::kFloat, -1.0f, 1.0e4f, 0.01f, constant, threads)));
      EXPECT_TRUE(BitExactOnCpu(RangeTest<int32_t>(DataType::kInt32, -7, 40, 3, constant, threads)));
      EXPECT_TRUE(BitExactOnCpu(RangeTest<int32_t>(DataType::kInt32, 5, -300000, -1, constant, threads)));
      EXPECT_TRUE(BitExactOnCpu(RangeTest<int64_t>(DataType::kInt64, 10, 3, 1, constant, threads)));
      EXPECT_TRUE(BitExactOnCpu(
          RangeTest<int64_t>(DataType::kInt64, INT64_MIN + 5, INT64_MIN + 400000, 7, constant, threads)));
    }
  }
}

TEST(CpuRange, ZeroDeltaIsAnInvalidArgument) {
  ExpectSameErrorAsRef(RangeTest<int64_t>(DataType::kInt64, 0, 5, 0, false, 1), ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef(RangeTest<float>(DataType::kFloat, 0, 5, 0, false, 1), ErrorCategory::kInvalidArgument);
}

// --- NonZero ---

OpTest NonZeroTest(const Tensor& x, int threads) {
  return {.op = "NonZero", .opset = 13, .inputs = {In("x", x)}, .threads = threads};
}

// Random data with about `zeros` in 8 elements zero (-0.0 among them for floats).
Tensor SparseBits(DataType dt, const Shape& shape, int zeros, std::mt19937& rng) {
  Tensor t = RandomBits(dt, shape, rng);
  const int64_t elem = static_cast<int64_t>(t.nbytes()) / std::max<int64_t>(t.size(), 1);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.size(); ++i) {
    if (Pick(rng, 0, 7) < zeros) {
      std::memset(p + i * elem, 0, static_cast<size_t>(elem));
      if (dt == DataType::kFloat && Pick(rng, 0, 1)) t.data<float>()[i] = -0.0f;
    }
  }
  return t;
}

TEST(CpuNonZero, RandomConfigurationsMatchRef) {
  std::mt19937 rng(861);
  for (int it = 0; it < 40; ++it) {
    const int64_t rank = Pick(rng, 0, 4);
    const Shape shape = RandomShape(rng, rank, it % 11 == 0 ? 0 : 1, rank <= 2 ? 30 : 6);
    const DataType dt = TypeAt(it);
    const OpTest t = NonZeroTest(SparseBits(dt, shape, static_cast<int>(Pick(rng, 0, 8)), rng),
                                 static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.num_non_zero__two_pass.9")) << DataTypeName(dt) << ShapeToString(shape);
  }
  EXPECT_TRUE(BitExactOnCpu(NonZeroTest(SparseBits(DataType::kFloat, {300, 700}, 5, rng), 2)));
  EXPECT_TRUE(BitExactOnCpu(NonZeroTest(SparseBits(DataType::kBool, {7, 100, 999}, 2, rng), 2)));
}

// --- ScatterElements ---

OpTest ScatterElementsTest(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis,
                           const std::string& reduction, int threads) {
  OpTest t{.op = "ScatterElements",
           .opset = 18,
           .inputs = {In("data", data), In("indices", indices), In("updates", updates)},
           .attributes = {Int("axis", axis)},
           .threads = threads};
  if (!reduction.empty()) t.attributes.push_back(Str("reduction", reduction));
  return t;
}

Tensor RandomIndices(const Shape& shape, int64_t dim, bool int64, std::mt19937& rng) {
  Tensor t(int64 ? DataType::kInt64 : DataType::kInt32, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t v = Pick(rng, -dim, dim - 1);
    if (int64) {
      t.data<int64_t>()[i] = v;
    } else {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    }
  }
  return t;
}

TEST(CpuScatterElements, RandomConfigurationsMatchRef) {
  std::mt19937 rng(871);
  const char* reductions[] = {"", "none", "add", "mul", "max", "min"};
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    const Shape shape = RandomShape(rng, rank, 1, rank <= 2 ? 12 : 5);
    const int64_t axis = Pick(rng, -rank, rank - 1);
    const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    Shape ishape = shape;
    for (size_t d = 0; d < ishape.size(); ++d) ishape[d] = d == a ? Pick(rng, 1, 6) : Pick(rng, 1, shape[d]);
    if (it % 17 == 0) ishape[0] = 0;
    const std::string reduction = reductions[it % std::size(reductions)];
    const DataType dt = reduction.empty() || reduction == "none" ? TypeAt(it) : (it % 4 < 2 ? DataType::kFloat
                                                                                          : DataType::kInt64);
    const OpTest t = ScatterElementsTest(RandomBits(dt, shape, rng), RandomIndices(ishape, shape[a], it % 2, rng),
                                         RandomBits(dt, ishape, rng), axis, reduction,
                                         static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_scatter_elements__rows.11"))
        << DataTypeName(dt) << ShapeToString(shape) << " axis " << axis << " indices " << ShapeToString(ishape)
        << " reduction '" << reduction << "'";
  }
}

TEST(CpuScatterElements, OutOfRangeIndicesAreInvalidArguments) {
  std::mt19937 rng(872);
  const Tensor data = RandomBits(DataType::kFloat, {3, 4}, rng);
  for (int64_t bad : {4, -5}) {
    const Tensor idx = Tensor::FromVector<int64_t>(DataType::kInt64, {1, 2}, std::vector<int64_t>{0, bad});
    ExpectSameErrorAsRef(ScatterElementsTest(data, idx, RandomBits(DataType::kFloat, {1, 2}, rng), 1, "", 1),
                         ErrorCategory::kInvalidArgument);
  }
}

// --- GatherND ---

OpTest GatherNDTest(const Tensor& data, const Tensor& indices, int64_t batch_dims, int threads) {
  return {.op = "GatherND",
          .opset = 13,
          .inputs = {In("data", data), In("indices", indices)},
          .attributes = {Int("batch_dims", batch_dims)},
          .threads = threads};
}

TEST(CpuGatherND, RandomConfigurationsMatchRef) {
  std::mt19937 rng(881);
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    const Shape shape = RandomShape(rng, rank, 1, rank <= 2 ? 10 : 5);
    const int64_t b = Pick(rng, 0, rank - 1);
    const int64_t k = Pick(rng, 1, rank - b);
    Shape ishape(shape.begin(), shape.begin() + b);
    const Shape mid = RandomShape(rng, Pick(rng, 0, 2), it % 13 == 0 ? 0 : 1, 4);
    ishape.insert(ishape.end(), mid.begin(), mid.end());
    ishape.push_back(k);
    Tensor idx(it % 2 ? DataType::kInt64 : DataType::kInt32, ishape);
    for (int64_t i = 0; i < idx.size(); ++i) {
      const int64_t dim = shape[static_cast<size_t>(b + i % k)];
      const int64_t v = Pick(rng, -dim, dim - 1);
      if (it % 2) {
        idx.data<int64_t>()[i] = v;
      } else {
        idx.data<int32_t>()[i] = static_cast<int32_t>(v);
      }
    }
    const DataType dt = TypeAt(it);
    const OpTest t = GatherNDTest(RandomBits(dt, shape, rng), idx, b, static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_gather_nd__memcpy.11"))
        << DataTypeName(dt) << ShapeToString(shape) << " batch_dims " << b << " indices " << ShapeToString(ishape);
  }
  const Shape big = {4000, 256};
  EXPECT_TRUE(BitExactOnCpu(GatherNDTest(RandomBits(DataType::kFloat, big, rng), RandomTuples(big, {3000}, 1, rng), 0,
                                         2)));
}

TEST(CpuGatherND, OutOfRangeIndicesAreInvalidArguments) {
  std::mt19937 rng(882);
  const Tensor data = RandomBits(DataType::kFloat, {3, 4}, rng);
  for (int64_t bad : {4, -5}) {
    const Tensor idx = Tensor::FromVector<int64_t>(DataType::kInt64, {1, 2}, std::vector<int64_t>{0, bad});
    ExpectSameErrorAsRef(GatherNDTest(data, idx, 0, 1), ErrorCategory::kInvalidArgument);
  }
}

// --- OneHot ---

OpTest OneHotTest(const Tensor& indices, int64_t depth, const Tensor& values, int64_t axis, bool const_depth,
                  int threads) {
  const Tensor d = Tensor::FromVector<int64_t>(DataType::kInt64, {}, std::vector<int64_t>{depth});
  return {.op = "OneHot",
          .opset = 11,
          .inputs = {In("indices", indices), const_depth ? Const("depth", d) : In("depth", d), In("values", values)},
          .attributes = {Int("axis", axis)},
          .threads = threads};
}

TEST(CpuOneHot, RandomConfigurationsMatchRef) {
  std::mt19937 rng(891);
  for (int it = 0; it < 40; ++it) {
    const int64_t rank = Pick(rng, 0, 3);
    const Shape ishape = RandomShape(rng, rank, it % 11 == 0 ? 0 : 1, 6);
    const int64_t depth = Pick(rng, 1, 9);
    const int64_t axis = Pick(rng, -rank - 1, rank);
    const DataType it_types[] = {DataType::kInt64, DataType::kInt32, DataType::kFloat};
    const DataType idt = it_types[it % 3];
    Tensor idx = RandomTensor(idt, ishape, rng, -depth - 2, depth + 2);  // some out of range: all-off rows
    const OpTest t = OneHotTest(idx, depth, RandomBits(TypeAt(it), {2}, rng), axis, it % 2 == 0,
                                static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_one_hot__fill.9"))
        << DataTypeName(idt) << ShapeToString(ishape) << " depth " << depth << " axis " << axis;
  }
}

TEST(CpuOneHot, NonPositiveDepthIsAnInvalidArgument) {
  std::mt19937 rng(892);
  ExpectSameErrorAsRef(OneHotTest(Int64s({0, 1}), 0, RandomBits(DataType::kFloat, {2}, rng), -1, false, 1),
                       ErrorCategory::kInvalidArgument);
}

// --- EyeLike ---

TEST(CpuEyeLike, DiagonalsAndTypesMatchRef) {
  std::mt19937 rng(895);
  for (int it = 0; it < 30; ++it) {
    const Shape shape = RandomShape(rng, 2, it % 10 == 0 ? 0 : 1, 9);
    OpTest t{.op = "EyeLike",
             .opset = 9,
             .inputs = {In("x", RandomBits(TypeAt(it), shape, rng))},
             .attributes = {Int("k", Pick(rng, -10, 10))}};
    if (it % 3 == 0) t.attributes.push_back(Int("dtype", static_cast<int64_t>(TypeAt(it + 1))));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.num_eye_like__diagonal.9")) << ShapeToString(shape);
  }
}

}  // namespace
}  // namespace ferry::testing::glue
