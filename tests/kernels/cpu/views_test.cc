// cpu Reshape, Flatten, Squeeze, Unsqueeze, Identity (views of the input buffer) against ref: random shapes and
// attributes, every type including strings, shape/axes inputs both constant and fed, errors of the same category.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

Tensor StringTensor(const Shape& shape, std::mt19937& rng) {
  Tensor t(DataType::kString, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.strings()[i] = "s" + std::to_string(Pick(rng, 0, 999));
  return t;
}

Tensor RandomAny(const Shape& shape, std::mt19937& rng) {
  if (Pick(rng, 0, 7) == 0) return StringTensor(shape, rng);
  return RandomBits(CopyTypes()[static_cast<size_t>(Pick(rng, 0, static_cast<int64_t>(CopyTypes().size()) - 1))],
                    shape, rng);
}

OpInput ShapeInput(const std::string& name, Tensor t, std::mt19937& rng) {
  return Pick(rng, 0, 1) ? Const(name, std::move(t)) : In(name, std::move(t));
}

// A random regrouping of `in`'s elements: merge neighbours, split dims, insert 1s.
Shape RegroupedShape(const Shape& in, std::mt19937& rng) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t d = in[i];
    if (!out.empty() && Pick(rng, 0, 3) == 0) {
      out.back() *= d;
      continue;
    }
    if (d >= 4 && d % 2 == 0 && Pick(rng, 0, 2) == 0) {
      out.push_back(2);
      d /= 2;
    }
    if (Pick(rng, 0, 5) == 0) out.push_back(1);
    out.push_back(d);
  }
  return out;
}

TEST(CpuReshape, RandomShapesMatchRef) {
  std::mt19937 rng(101);
  for (int it = 0; it < 60; ++it) {
    const Shape in = RandomShape(rng, Pick(rng, 0, 4), it % 10 == 0 ? 0 : 1, 6);
    const Tensor x = RandomAny(in, rng);
    Shape target = RegroupedShape(in, rng);
    std::vector<int64_t> spec(target.begin(), target.end());
    const int64_t opset = std::vector<int64_t>{5, 13, 14, 19, 21}[static_cast<size_t>(Pick(rng, 0, 4))];
    const bool allowzero = opset >= 14 && Pick(rng, 0, 3) == 0;
    int64_t known = 1;
    for (int64_t d : target) known *= d;
    if (!spec.empty() && known != 0 && Pick(rng, 0, 1)) spec[static_cast<size_t>(Pick(rng, 0, spec.size() - 1))] = -1;
    for (size_t i = 0; i < spec.size() && i < in.size(); ++i) {
      if (!allowzero && spec[i] == in[i] && Pick(rng, 0, 2) == 0) spec[i] = 0;  // 0 copies the input dim
    }
    OpTest t{.op = "Reshape", .opset = opset, .inputs = {In("x", x), ShapeInput("shape", Int64s(spec), rng)},
             .threads = static_cast<int>(Pick(rng, 1, 2))};
    if (allowzero) t.attributes.push_back(Int("allowzero", 1));
    EXPECT_TRUE(BitExactOnCpu(t)) << "in " << ShapeToString(in) << " spec " << ShapeToString(spec);
  }
}

TEST(CpuReshape, ShapeAttributeBeforeOpset5) {
  std::mt19937 rng(102);
  OpTest t{.op = "Reshape", .opset = 4, .inputs = {In("x", RandomBits(DataType::kFloat, {2, 3, 4}, rng))},
           .attributes = {Ints("shape", {0, -1})}};
  EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_reshape__view.1"));
}

TEST(CpuReshape, OutputSharesTheInputBuffer) {
  std::mt19937 rng(103);
  const Tensor x = RandomBits(DataType::kFloat, {4, 6}, rng);
  OpTest t{.op = "Reshape", .opset = 14, .inputs = {In("x", x), Const("shape", Int64s({3, 8}))}};
  auto out = DataMovementSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.shape(), (Shape{3, 8}));
  EXPECT_EQ(out[0].second.raw_data(), x.raw_data());
}

TEST(CpuReshape, BadShapesAreInvalidArguments) {
  std::mt19937 rng(104);
  const Tensor x = RandomBits(DataType::kFloat, {2, 3}, rng);
  for (const std::vector<int64_t>& spec : std::vector<std::vector<int64_t>>{{4, 2}, {-1, -1}, {-2, 3}, {0, 0, 0}}) {
    OpTest t{.op = "Reshape", .opset = 14, .inputs = {In("x", x), In("shape", Int64s(spec))}};
    ExpectSameErrorAsRef(t, ErrorCategory::kInvalidArgument);
  }
}

TEST(CpuReshape, FlattenRandomAxes) {
  std::mt19937 rng(105);
  for (int it = 0; it < 40; ++it) {
    const int64_t rank = Pick(rng, 0, 4);
    const Shape in = RandomShape(rng, rank, it % 8 == 0 ? 0 : 1, 5);
    const int64_t opset = std::vector<int64_t>{1, 9, 11, 13, 21}[static_cast<size_t>(Pick(rng, 0, 4))];
    const int64_t axis = opset >= 11 ? Pick(rng, -rank, rank) : Pick(rng, 0, rank);
    OpTest t{.op = "Flatten", .opset = opset, .inputs = {In("x", RandomAny(in, rng))},
             .attributes = {Int("axis", axis)}};
    EXPECT_TRUE(BitExactOnCpu(t)) << ShapeToString(in) << " axis " << axis;
  }
}

TEST(CpuReshape, SqueezeRandomAxes) {
  std::mt19937 rng(106);
  for (int it = 0; it < 40; ++it) {
    const int64_t rank = Pick(rng, 0, 5);
    Shape in = RandomShape(rng, rank, 1, 4);
    if (it % 9 == 0 && rank > 0) in[0] = 0;
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d) {
      if (in[static_cast<size_t>(d)] == 1 && Pick(rng, 0, 1)) axes.push_back(Pick(rng, 0, 1) ? d : d - rank);
    }
    const bool with_axes = !axes.empty() || Pick(rng, 0, 1);
    const int64_t opset = Pick(rng, 0, 1) ? 11 : 13;
    OpTest t{.op = "Squeeze", .opset = opset, .inputs = {In("x", RandomAny(in, rng))}};
    if (with_axes && opset == 11) t.attributes.push_back(Ints("axes", axes));
    if (with_axes && opset == 13) t.inputs.push_back(ShapeInput("axes", Int64s(axes), rng));
    EXPECT_TRUE(BitExactOnCpu(t)) << ShapeToString(in) << " axes " << ShapeToString(axes);
  }
}

TEST(CpuReshape, UnsqueezeRandomAxes) {
  std::mt19937 rng(107);
  for (int it = 0; it < 40; ++it) {
    const int64_t rank = Pick(rng, 0, 3);
    const Shape in = RandomShape(rng, rank, it % 9 == 0 ? 0 : 1, 4);
    const int64_t added = Pick(rng, 1, 3), out_rank = rank + added;
    std::vector<int64_t> all(static_cast<size_t>(out_rank));
    for (int64_t i = 0; i < out_rank; ++i) all[static_cast<size_t>(i)] = i;
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int64_t> axes(all.begin(), all.begin() + added);
    for (auto& a : axes) {
      if (Pick(rng, 0, 1)) a -= out_rank;
    }
    const int64_t opset = Pick(rng, 0, 1) ? 11 : 13;
    OpTest t{.op = "Unsqueeze", .opset = opset, .inputs = {In("x", RandomAny(in, rng))},
             .threads = static_cast<int>(Pick(rng, 1, 2))};
    if (opset == 11) t.attributes.push_back(Ints("axes", axes));
    if (opset == 13) t.inputs.push_back(ShapeInput("axes", Int32s(axes), rng));
    EXPECT_TRUE(BitExactOnCpu(t)) << ShapeToString(in) << " axes " << ShapeToString(axes);
  }
}

TEST(CpuReshape, SqueezeAndUnsqueezeErrorsMatchRef) {
  std::mt19937 rng(108);
  const Tensor x = RandomBits(DataType::kFloat, {2, 1, 3}, rng);
  ExpectSameErrorAsRef({.op = "Squeeze", .opset = 13, .inputs = {In("x", x), In("axes", Int64s({0}))}},
                       ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef({.op = "Squeeze", .opset = 13, .inputs = {In("x", x), In("axes", Int64s({1, -2}))}},
                       ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef({.op = "Unsqueeze", .opset = 13, .inputs = {In("x", x), In("axes", Int64s({1, 1}))}},
                       ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef({.op = "Unsqueeze", .opset = 13, .inputs = {In("x", x), In("axes", Int64s({7}))}},
                       ErrorCategory::kInvalidArgument);
}

TEST(CpuReshape, IdentityPassesEveryTypeThrough) {
  std::mt19937 rng(109);
  for (int it = 0; it < 30; ++it) {
    const Shape in = RandomShape(rng, Pick(rng, 0, 3), it % 7 == 0 ? 0 : 1, 5);
    OpTest t{.op = "Identity", .opset = std::vector<int64_t>{1, 13, 16, 21}[static_cast<size_t>(Pick(rng, 0, 3))],
             .inputs = {In("x", RandomAny(in, rng))}};
    EXPECT_TRUE(BitExactOnCpu(t, "", "cpu.any_identity__view.1"));
  }
}

TEST(CpuViews, InferenceDropoutRunsOnCpuTrainingFallsBack) {
  std::mt19937 rng(2404);
  const Tensor x = RandomBits(DataType::kFloat, {2, 3, 5}, rng);
  Tensor off(DataType::kBool, {});
  off.data<bool>()[0] = false;
  // Opset 7 (ratio attribute), opset 13 without training_mode, and with a constant false: Y is X, the mask all true.
  EXPECT_TRUE(MatchesRef({.op = "Dropout", .opset = 7, .inputs = {In("x", x)}, .attributes = {Float("ratio", 0.3f)}},
                         "cpu"));
  EXPECT_TRUE(MatchesRef({.op = "Dropout", .opset = 13, .inputs = {In("x", x)}}, "cpu"));
  OpTest with_mask{.op = "Dropout", .opset = 13,
                   .inputs = {In("x", x), Const("ratio", Tensor(DataType::kFloat, {})), Const("training_mode", off)},
                   .num_outputs = 2};
  EXPECT_TRUE(MatchesRef(with_mask, "cpu"));
  // A training_mode fed at run time may be true: ref draws the mask.
  Tensor on(DataType::kBool, {});
  on.data<bool>()[0] = true;
  OpTest training{.op = "Dropout", .opset = 13, .inputs = {In("x", x), Omitted(), In("training_mode", on)},
                  .attributes = {Int("seed", 3)}, .num_outputs = 2};
  ExpectRefusedAndFallsBack(training, "Dropout: training mode");
}

}  // namespace
}  // namespace ferry::testing::glue
