// cpu Slice against ref, bit for bit: random starts/ends (negative, out of range, INT64 extremes), steps (positive,
// negative, larger than the dim), omitted or given axes and steps, int32/int64, constant and fed, every byte-sized
// type, attribute-based opsets 1-9, large slices on 2 threads, empty results, errors.
#include <limits>

#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

int64_t RandomBound(int64_t dim, std::mt19937& rng) {
  switch (Pick(rng, 0, 9)) {
    case 0: return std::numeric_limits<int64_t>::max();
    case 1: return std::numeric_limits<int64_t>::min();
    case 2: return Pick(rng, -dim - 3, -1);
    default: return Pick(rng, 0, dim + 2);
  }
}

TEST(CpuSlice, RandomConfigurationsMatchRef) {
  std::mt19937 rng(501);
  for (int it = 0; it < 80; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    const Shape shape = RandomShape(rng, rank, it % 17 == 0 ? 0 : 1, rank <= 2 ? 40 : 9);
    std::vector<int64_t> axes, starts, ends, steps;
    for (int64_t d = 0; d < rank; ++d) {
      if (Pick(rng, 0, 2) == 0) continue;
      axes.push_back(Pick(rng, 0, 1) ? d : d - rank);
      const int64_t dim = shape[static_cast<size_t>(d)];
      starts.push_back(RandomBound(dim, rng));
      ends.push_back(RandomBound(dim, rng));
      const int64_t st = std::vector<int64_t>{1, 1, 1, 2, 3, -1, -1, -2, 7, -100}[static_cast<size_t>(Pick(rng, 0, 9))];
      steps.push_back(st);
    }
    std::shuffle(axes.begin(), axes.end(), rng);  // any order; the random bounds then land on other axes
    if (axes.empty()) {
      axes.push_back(0);
      starts.push_back(1);
      ends.push_back(-1);
      steps.push_back(1);
    }
    const bool all_unit = std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; });
    const bool identity_axes = [&] {
      for (size_t i = 0; i < axes.size(); ++i) {
        if (axes[i] != static_cast<int64_t>(i)) return false;
      }
      return true;
    }();
    const bool int64 = Pick(rng, 0, 1);
    auto idx = [&](const std::vector<int64_t>& v) {
      if (int64) return Int64s(v);
      std::vector<int64_t> c = v;
      for (auto& x : c) {
        x = std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
      }
      return Int32s(c);
    };
    auto input = [&](const std::string& name, const std::vector<int64_t>& v) {
      return Pick(rng, 0, 1) ? Const(name, idx(v)) : In(name, idx(v));
    };
    const DataType dt = CopyTypes()[static_cast<size_t>(it) % CopyTypes().size()];
    OpTest t{.op = "Slice", .opset = std::vector<int64_t>{10, 11, 13}[static_cast<size_t>(Pick(rng, 0, 2))],
             .inputs = {In("x", RandomBits(dt, shape, rng)), input("starts", starts), input("ends", ends)},
             .threads = static_cast<int>(Pick(rng, 1, 2))};
    const bool omit_axes = identity_axes && Pick(rng, 0, 1);
    const bool omit_steps = all_unit && Pick(rng, 0, 1);
    if (!omit_axes || !omit_steps) t.inputs.push_back(omit_axes ? Omitted() : input("axes", axes));
    if (!omit_steps) t.inputs.push_back(input("steps", steps));
    EXPECT_TRUE(BitExactOnCpu(t)) << DataTypeName(dt) << ShapeToString(shape) << " starts " << ShapeToString(starts)
                                  << " ends " << ShapeToString(ends) << " axes " << ShapeToString(axes)
                                  << " steps " << ShapeToString(steps);
  }
}

TEST(CpuSlice, AttributeOpsets) {
  std::mt19937 rng(502);
  for (int64_t opset : {1, 9}) {
    OpTest t{.op = "Slice", .opset = opset, .inputs = {In("x", RandomBits(DataType::kFloat, {5, 6, 7}, rng))},
             .attributes = {Ints("starts", {1, -3}), Ints("ends", {100, -1}), Ints("axes", {0, 2})}};
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_slice__strided.1"));
  }
}

TEST(CpuSlice, LargeSlicesOnTwoThreads) {
  std::mt19937 rng(503);
  const Tensor x = RandomBits(DataType::kFloat, {64, 100, 100}, rng);
  const std::vector<std::vector<std::vector<int64_t>>> cases = {
      {{0, 10}, {64, 90}, {0, 2}, {1, 1}},    // memcpy rows
      {{5}, {95}, {2}, {2}},                  // strided inner dim
      {{-1}, {std::numeric_limits<int64_t>::min()}, {2}, {-1}},  // reversed inner dim
      {{0}, {1}, {0}, {1}},                   // one contiguous block
      {{63, 99}, {-100, -200}, {0, 1}, {-1, -3}}};
  for (const auto& c : cases) {
    OpTest t{.op = "Slice", .opset = 13,
             .inputs = {In("x", x), Const("starts", Int64s(c[0])), Const("ends", Int64s(c[1])),
                        Const("axes", Int64s(c[2])), Const("steps", Int64s(c[3]))},
             .threads = 2};
    EXPECT_TRUE(BitExactOnCpu(t)) << ShapeToString(c[0]) << ShapeToString(c[1]);
  }
}

TEST(CpuSlice, BadArgumentsAreInvalidArguments) {
  std::mt19937 rng(504);
  const Tensor x = RandomBits(DataType::kFloat, {4, 5}, rng);
  auto slice = [&](std::vector<int64_t> s, std::vector<int64_t> e, std::vector<int64_t> a, std::vector<int64_t> st) {
    return OpTest{.op = "Slice", .opset = 13,
                  .inputs = {In("x", x), In("starts", Int64s(s)), In("ends", Int64s(e)), In("axes", Int64s(a)),
                             In("steps", Int64s(st))}};
  };
  ExpectSameErrorAsRef(slice({0}, {2}, {0}, {0}), ErrorCategory::kInvalidArgument);          // zero step
  ExpectSameErrorAsRef(slice({0, 0}, {2, 2}, {1, -1}, {1, 1}), ErrorCategory::kInvalidArgument);  // axis twice
  ExpectSameErrorAsRef(slice({0}, {2}, {2}, {1}), ErrorCategory::kInvalidArgument);          // axis out of range
  ExpectSameErrorAsRef(slice({0, 1}, {2}, {0}, {1}), ErrorCategory::kInvalidArgument);       // length mismatch
}

TEST(CpuSlice, StringsFallBackToRef) {
  Tensor s(DataType::kString, {3});
  for (int64_t i = 0; i < 3; ++i) s.strings()[i] = std::to_string(i);
  OpTest t{.op = "Slice", .opset = 13,
           .inputs = {In("x", s), Const("starts", Int64s({1})), Const("ends", Int64s({3}))}};
  ExpectRefusedAndFallsBack(t, "string");
}

}  // namespace
}  // namespace ferry::testing::glue
