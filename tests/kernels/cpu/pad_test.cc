// cpu Pad against ref, bit for bit: constant, edge, reflect and wrap modes, random ranks and pads (negative pads
// crop), omitted / zero / non-zero / -0.0 constant values, axes (opset 18+), every byte-sized type, large outputs
// on 2 threads, empty tensors, errors; opsets before 11 fall back to ref.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

Tensor Scalar(DataType dt, double v) {
  Tensor t(dt, {});
  switch (dt) {
    case DataType::kFloat: t.data<float>()[0] = static_cast<float>(v); break;
    case DataType::kDouble: t.data<double>()[0] = v; break;
    case DataType::kFloat16: t.data<Float16>()[0] = Float16(static_cast<float>(v)); break;
    case DataType::kInt32: t.data<int32_t>()[0] = static_cast<int32_t>(v); break;
    case DataType::kInt64: t.data<int64_t>()[0] = static_cast<int64_t>(v); break;
    case DataType::kUint8: t.data<uint8_t>()[0] = static_cast<uint8_t>(v); break;
    case DataType::kBool: t.data<bool>()[0] = v != 0; break;
    default: throw std::runtime_error("no scalar");
  }
  return t;
}

const DataType kTypes[] = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32,
                           DataType::kInt64, DataType::kUint8,  DataType::kBool};
const char* kModes[] = {"constant", "edge", "reflect", "wrap"};

TEST(CpuPad, RandomConfigurationsMatchRef) {
  std::mt19937 rng(901);
  for (int it = 0; it < 80; ++it) {
    const std::string mode = kModes[it % 4];
    const int64_t rank = Pick(rng, 1, 4);
    const Shape shape = RandomShape(rng, rank, mode == "constant" && it % 9 == 0 ? 0 : 1, rank <= 2 ? 12 : 6);
    const DataType dt = kTypes[static_cast<size_t>(it) % std::size(kTypes)];
    int64_t opset = std::vector<int64_t>{11, 13, 18, 19}[static_cast<size_t>(Pick(rng, 0, 3))];
    if (mode == "wrap") opset = Pick(rng, 19, 21);
    if (dt == DataType::kBool && opset == 11) opset = 13;  // bool from Pad-13
    // Axes: all (no input) or, from opset 18, a random subset (negative too).
    std::vector<int64_t> axes;
    const bool with_axes = opset >= 18 && Pick(rng, 0, 1);
    for (int64_t d = 0; d < rank; ++d) {
      if (!with_axes || Pick(rng, 0, 1)) axes.push_back(with_axes && Pick(rng, 0, 1) ? d - rank : d);
    }
    if (axes.empty()) axes.push_back(rank - 1);  // (shape inference reads an empty axes input as "all axes")
    std::vector<int64_t> begins, ends;
    for (int64_t a : axes) {
      const int64_t dim = shape[static_cast<size_t>(a < 0 ? a + rank : a)];
      const int64_t lo = mode == "constant" ? -dim : -(dim - 1) / 2;  // keep at least one element when indexing
      const int64_t b = Pick(rng, lo, 4);
      begins.push_back(b);
      ends.push_back(Pick(rng, std::max<int64_t>(lo, -dim - b + (mode == "constant" ? 0 : 1)), 4));
    }
    std::vector<int64_t> pads = begins;
    pads.insert(pads.end(), ends.begin(), ends.end());
    OpTest t{.op = "Pad", .opset = opset,
             .inputs = {In("x", RandomBits(dt, shape, rng)), Pick(rng, 0, 1) ? Const("pads", Int64s(pads))
                                                                             : In("pads", Int64s(pads))},
             .attributes = {Str("mode", mode)},
             .threads = static_cast<int>(Pick(rng, 1, 2))};
    const int64_t value_kind = Pick(rng, 0, 3);  // omitted, zero, non-zero, -0.0
    if (value_kind > 0 || with_axes) {
      if (value_kind == 0) {
        t.inputs.push_back(Omitted());
      } else {
        const double v = value_kind == 1 ? 0.0 : value_kind == 2 ? 3.0 : -0.0;
        t.inputs.push_back(Const("value", Scalar(dt, v)));
      }
    }
    if (with_axes) t.inputs.push_back(Pick(rng, 0, 1) ? Const("axes", Int64s(axes)) : In("axes", Int64s(axes)));
    EXPECT_TRUE(BitExactOnCpu(t)) << mode << " " << DataTypeName(dt) << ShapeToString(shape) << " pads "
                                  << ShapeToString(pads) << " axes " << ShapeToString(axes);
  }
}

TEST(CpuPad, LargeOutputsOnTwoThreads) {
  std::mt19937 rng(902);
  const Tensor x = RandomBits(DataType::kFloat, {8, 32, 56, 56}, rng);
  for (const char* mode : kModes) {
    OpTest t{.op = "Pad", .opset = 19,
             .inputs = {In("x", x), Const("pads", Int64s({0, 0, 1, 2, 0, 0, 3, 1}))},
             .attributes = {Str("mode", mode)},
             .threads = 2};
    if (std::string(mode) == "constant") t.inputs.push_back(Const("value", Scalar(DataType::kFloat, 1.5)));
    EXPECT_TRUE(BitExactOnCpu(t)) << mode;
  }
}

TEST(CpuPad, EmptyTensorsAndScalars) {
  std::mt19937 rng(903);
  OpTest t{.op = "Pad", .opset = 13,
           .inputs = {In("x", RandomBits(DataType::kFloat, {0, 3}, rng)), Const("pads", Int64s({1, 0, 2, 1})),
                      Const("value", Scalar(DataType::kFloat, 7))}};
  EXPECT_TRUE(BitExactOnCpu(t));
  t.inputs[1] = Const("pads", Int64s({0, -1, 0, -2}));
  EXPECT_TRUE(BitExactOnCpu(t));
  OpTest s{.op = "Pad", .opset = 13,
           .inputs = {In("x", RandomBits(DataType::kFloat, {}, rng)), Const("pads", Int64s({}))},
           .attributes = {Str("mode", "edge")}};
  EXPECT_TRUE(BitExactOnCpu(s));
}

TEST(CpuPad, BadArgumentsMatchRef) {
  std::mt19937 rng(904);
  const Tensor x = RandomBits(DataType::kFloat, {3, 4}, rng);
  ExpectSameErrorAsRef({.op = "Pad", .opset = 13, .inputs = {In("x", x), In("pads", Int64s({1, 1, 1}))}},
                       ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef({.op = "Pad", .opset = 13, .inputs = {In("x", x), In("pads", Int64s({-2, 0, -2, 0}))}},
                       ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef({.op = "Pad", .opset = 13,
                        .inputs = {In("x", RandomBits(DataType::kFloat, {0, 4}, rng)),
                                   In("pads", Int64s({1, 0, 1, 0}))},
                        .attributes = {Str("mode", "reflect")}},
                       ErrorCategory::kInvalidArgument);
}

TEST(CpuPad, AttributeOpsetsFallBackToRef) {
  std::mt19937 rng(905);
  OpTest t{.op = "Pad", .opset = 2, .inputs = {In("x", RandomBits(DataType::kFloat, {2, 3}, rng))},
           .attributes = {Ints("pads", {1, 0, 0, 1}), Float("value", 2.0f)}};
  ExpectRefusedAndFallsBack(t, "implements Pad for opsets 11-");
}

}  // namespace
}  // namespace ferry::testing::glue
