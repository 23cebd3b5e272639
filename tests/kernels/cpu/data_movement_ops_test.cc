// cpu Tile, Split, GatherElements, Trilu, ConstantOfShape against ref, bit for bit: random shapes and attributes,
// byte-sized types (float32, int64, uint8, bool and the rest), negative axes and indices, inputs known before the
// run and fed at run time (the dynamic-output paths), empty tensors, 1 and 2 threads, large copies on 2 threads,
// and the data errors (out-of-range indices, bad repeats or splits) with ref's error category.
#include "ir/tensor_proto.h"
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

const DataType kTypes[] = {DataType::kFloat, DataType::kInt64, DataType::kUint8, DataType::kBool,
                           DataType::kFloat16, DataType::kInt32, DataType::kDouble, DataType::kInt8};

DataType TypeAt(int it) { return kTypes[static_cast<size_t>(it) % std::size(kTypes)]; }

Tensor Scalar64(int64_t v) { return Tensor::FromVector<int64_t>(DataType::kInt64, {}, std::vector<int64_t>{v}); }

// --- Tile ---

OpTest TileTest(const Tensor& x, const std::vector<int64_t>& repeats, bool const_repeats, int threads) {
  return {.op = "Tile",
          .opset = 13,
          .inputs = {In("x", x), const_repeats ? Const("repeats", Int64s(repeats)) : In("repeats", Int64s(repeats))},
          .threads = threads};
}

TEST(CpuTile, RandomConfigurationsMatchRef) {
  std::mt19937 rng(801);
  for (int it = 0; it < 50; ++it) {
    const int64_t rank = Pick(rng, 0, 4);
    const Shape shape = RandomShape(rng, rank, it % 13 == 0 ? 0 : 1, rank <= 2 ? 9 : 4);
    std::vector<int64_t> repeats(static_cast<size_t>(rank));
    for (auto& r : repeats) r = Pick(rng, it % 11 == 0 ? 0 : 1, 3);
    const DataType dt = TypeAt(it);
    const OpTest t = TileTest(RandomBits(dt, shape, rng), repeats, it % 2 == 0, static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_tile__strided_copy.6"))
        << DataTypeName(dt) << ShapeToString(shape) << " repeats " << ShapeToString(repeats);
  }
}

TEST(CpuTile, LargeTilesOnTwoThreads) {
  std::mt19937 rng(802);
  EXPECT_TRUE(BitExactOnCpu(TileTest(RandomBits(DataType::kFloat, {64, 512}, rng), {8, 2}, true, 2)));
  EXPECT_TRUE(BitExactOnCpu(TileTest(RandomBits(DataType::kUint8, {3, 1, 7}, rng), {100, 500, 3}, false, 2)));
}

TEST(CpuTile, NegativeRepeatsAreInvalidArguments) {
  std::mt19937 rng(803);
  ExpectSameErrorAsRef(TileTest(RandomBits(DataType::kFloat, {2, 3}, rng), {2, -1}, false, 1),
                       ErrorCategory::kInvalidArgument);
}

TEST(CpuTile, StringsFallBackToRef) {
  Tensor s(DataType::kString, {2});
  s.strings()[0] = "a";
  s.strings()[1] = "bc";
  ExpectRefusedAndFallsBack(TileTest(s, {3}, true, 1), "string");
}

// --- Split ---

OpTest SplitTest(const Tensor& x, int64_t axis, int outputs, int64_t opset, const std::vector<int64_t>& split,
                 bool const_split, int threads) {
  OpTest t{.op = "Split", .opset = opset, .inputs = {In("x", x)}, .num_outputs = outputs, .threads = threads};
  t.attributes.push_back(Int("axis", axis));
  if (!split.empty() && opset < 13) t.attributes.push_back(Ints("split", split));
  if (!split.empty() && opset >= 13) {
    t.inputs.push_back(const_split ? Const("split", Int64s(split)) : In("split", Int64s(split)));
  }
  if (split.empty() && opset >= 18) t.attributes.push_back(Int("num_outputs", outputs));
  return t;
}

TEST(CpuSplit, RandomConfigurationsMatchRef) {
  std::mt19937 rng(811);
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    Shape shape = RandomShape(rng, rank, 1, rank <= 2 ? 12 : 5);
    const int64_t axis = Pick(rng, -rank, rank - 1);
    int64_t& dim = shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
    const int outputs = static_cast<int>(Pick(rng, 1, 4));
    const int64_t opsets[] = {11, 13, 18};
    const int64_t opset = opsets[it % 3];
    std::vector<int64_t> split;
    if (Pick(rng, 0, 1) == 0) {  // explicit sizes, zero-sized pieces included
      for (int k = 0; k < outputs; ++k) split.push_back(Pick(rng, 0, 4));
      dim = 0;
      for (int64_t s : split) dim += s;
    } else if (opset < 18) {
      dim = outputs * Pick(rng, 1, 3);
    }
    // num_outputs pieces of ceil(dim / n): the last one must not come out empty or negative.
    while (opset >= 18 && split.empty() && (outputs - 1) * ((dim + outputs - 1) / outputs) >= dim) ++dim;
    const DataType dt = TypeAt(it);
    const OpTest t = SplitTest(RandomBits(dt, shape, rng), axis, outputs, opset, split, Pick(rng, 0, 1),
                               static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t)) << DataTypeName(dt) << ShapeToString(shape) << " axis " << axis << " opset "
                                  << opset << " split " << ShapeToString(split) << " outputs " << outputs;
  }
}

TEST(CpuSplit, LargeSplitsOnTwoThreads) {
  std::mt19937 rng(812);
  EXPECT_TRUE(BitExactOnCpu(SplitTest(RandomBits(DataType::kFloat, {256, 768}, rng), 1, 3, 13, {}, true, 2)));
  EXPECT_TRUE(BitExactOnCpu(SplitTest(RandomBits(DataType::kInt64, {300, 600}, rng), 0, 2, 13, {100, 200}, false, 2)));
  EXPECT_TRUE(BitExactOnCpu(SplitTest(RandomBits(DataType::kFloat, {5, 1001}, rng), -1, 4, 18, {}, true, 2)));
}

TEST(CpuSplit, BadSplitsAreInvalidArguments) {
  std::mt19937 rng(813);
  const Tensor x = RandomBits(DataType::kFloat, {4, 6}, rng);
  ExpectSameErrorAsRef(SplitTest(x, 1, 2, 13, {2, 3}, false, 1), ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef(SplitTest(x, 1, 2, 13, {7, -1}, false, 1), ErrorCategory::kInvalidArgument);
}

// --- GatherElements ---

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

OpTest GatherElementsTest(const Tensor& data, const Tensor& indices, int64_t axis, int threads) {
  return {.op = "GatherElements",
          .opset = 13,
          .inputs = {In("data", data), In("indices", indices)},
          .attributes = {Int("axis", axis)},
          .threads = threads};
}

TEST(CpuGatherElements, RandomConfigurationsMatchRef) {
  std::mt19937 rng(821);
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    const Shape shape = RandomShape(rng, rank, 1, rank <= 2 ? 20 : 6);
    const int64_t axis = Pick(rng, -rank, rank - 1);
    const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    Shape ishape = shape;
    for (size_t d = 0; d < ishape.size(); ++d) ishape[d] = d == a ? Pick(rng, 1, 8) : Pick(rng, 1, shape[d]);
    if (it % 17 == 0) ishape[0] = 0;
    const DataType dt = TypeAt(it);
    const OpTest t = GatherElementsTest(RandomBits(dt, shape, rng), RandomIndices(ishape, shape[a], it % 2, rng),
                                        axis, static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_gather_elements__rows.11"))
        << DataTypeName(dt) << ShapeToString(shape) << " axis " << axis << " indices " << ShapeToString(ishape);
  }
}

TEST(CpuGatherElements, LargeGathersOnTwoThreads) {
  std::mt19937 rng(822);
  const Tensor data = RandomBits(DataType::kFloat, {512, 300}, rng);
  EXPECT_TRUE(BitExactOnCpu(GatherElementsTest(data, RandomIndices({512, 300}, 300, true, rng), 1, 2)));
  EXPECT_TRUE(BitExactOnCpu(GatherElementsTest(data, RandomIndices({600, 200}, 512, false, rng), 0, 2)));
}

TEST(CpuGatherElements, OutOfRangeIndicesAreInvalidArguments) {
  std::mt19937 rng(823);
  const Tensor data = RandomBits(DataType::kFloat, {3, 4}, rng);
  for (int64_t bad : {4, -5, 1000}) {
    Tensor idx = Tensor::FromVector<int64_t>(DataType::kInt64, {1, 2}, std::vector<int64_t>{0, bad});
    ExpectSameErrorAsRef(GatherElementsTest(data, idx, 1, 1), ErrorCategory::kInvalidArgument);
    Tensor idx32 = Tensor::FromVector<int32_t>(DataType::kInt32, {2, 1},
                                               std::vector<int32_t>{static_cast<int32_t>(bad - 1), 0});
    ExpectSameErrorAsRef(GatherElementsTest(data, idx32, 0, 2), ErrorCategory::kInvalidArgument);
  }
}

// --- Trilu ---

OpTest TriluTest(const Tensor& x, bool upper, const Tensor* k, bool const_k, int threads) {
  OpTest t{.op = "Trilu", .opset = 14, .inputs = {In("x", x)}, .attributes = {Int("upper", upper)}, .threads = threads};
  if (k) t.inputs.push_back(const_k ? Const("k", *k) : In("k", *k));
  return t;
}

TEST(CpuTrilu, RandomConfigurationsMatchRef) {
  std::mt19937 rng(831);
  for (int it = 0; it < 50; ++it) {
    const int64_t rank = Pick(rng, 2, 4);
    const Shape shape = RandomShape(rng, rank, it % 13 == 0 ? 0 : 1, 9);
    const Tensor k = Scalar64(Pick(rng, -12, 12));
    const DataType dt = TypeAt(it);
    const bool with_k = it % 5 != 0;
    const OpTest t = TriluTest(RandomBits(dt, shape, rng), it % 2 == 0, with_k ? &k : nullptr, Pick(rng, 0, 1),
                               static_cast<int>(Pick(rng, 1, 2)));
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_trilu__memcpy.14"))
        << DataTypeName(dt) << ShapeToString(shape) << " k " << k.data<int64_t>()[0];
  }
  std::mt19937 big(832);
  const Tensor k = Scalar64(-3);
  EXPECT_TRUE(BitExactOnCpu(TriluTest(RandomBits(DataType::kFloat, {4, 300, 257}, big), false, &k, false, 2)));
}

// --- ConstantOfShape ---

onnx::AttributeProto ValueAttr(const Tensor& v) {
  onnx::AttributeProto a;
  a.set_name("value");
  a.set_type(onnx::AttributeProto::TENSOR);
  ir::TensorToProto(v, "value", a.mutable_t());
  return a;
}

OpTest ConstantOfShapeTest(const std::vector<int64_t>& shape, const Tensor* value, bool const_shape, int threads) {
  OpTest t{.op = "ConstantOfShape",
           .opset = 20,
           .inputs = {const_shape ? Const("shape", Int64s(shape)) : In("shape", Int64s(shape))},
           .threads = threads};
  if (value) t.attributes.push_back(ValueAttr(*value));
  return t;
}

TEST(CpuConstantOfShape, ValuesShapesAndTypesMatchRef) {
  std::mt19937 rng(841);
  for (int it = 0; it < 30; ++it) {
    std::vector<int64_t> shape(static_cast<size_t>(Pick(rng, 0, 4)));
    for (auto& d : shape) d = Pick(rng, it % 9 == 0 ? 0 : 1, 7);
    const Tensor value = RandomBits(TypeAt(it), {1}, rng);
    const OpTest t = ConstantOfShapeTest(shape, it % 6 == 0 ? nullptr : &value, it % 2 == 0,
                                         static_cast<int>(Pick(rng, 1, 2)));
    // A constant shape folds the node away at session creation: the kernel is named only when the shape is fed.
    EXPECT_TRUE(BitExactOnCpu(t, "", it % 2 == 0 ? "" : "cpu.any_constant_of_shape__fill.9")) << ShapeToString(shape);
  }
  const Tensor value = RandomBits(DataType::kInt64, {1}, rng);
  EXPECT_TRUE(BitExactOnCpu(ConstantOfShapeTest({300, 1000}, &value, true, 2)));
}

TEST(CpuConstantOfShape, NegativeDimensionsAreInvalidArguments) {
  ExpectSameErrorAsRef(ConstantOfShapeTest({2, -1}, nullptr, false, 1), ErrorCategory::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::testing::glue
