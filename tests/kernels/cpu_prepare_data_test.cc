// The cpu elementwise, data-movement and view kernels' Prepare (Add, Clip, Cast, Concat, Gather, Slice, Pad,
// Transpose, Where, Reshape, Flatten, Squeeze, Unsqueeze, Identity): every dtype and shape check is raised by
// Prepare, naming the model, the node and the input; Prepare declares Y's dtype and exact shape when the inputs it
// depends on are known before the run (a view of input 0 for the view ops and a same-type Cast), and a dynamic Y
// when they are run-time data, which Compute then resolves (raising the data's errors); and runs on the prepared
// state match ref.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
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
using testing::ErrorOf;
using testing::RefRegistry;
using OneNode = testing::CpuNode;

Tensor Floats(const Shape& shape) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = 0.5f * static_cast<float>(i % 17) - 3.0f;
  return t;
}

Tensor Int64s(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

template <typename E>
std::string PrepareError(const OneNode& n, const std::string& name) {
  return ErrorOf<E>([&] { n.Prepare(name); });
}

::testing::AssertionResult SameTensor(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return ::testing::AssertionFailure() << "got " << DataTypeName(got.dtype()) << ShapeToString(got.shape())
                                         << ", want " << DataTypeName(want.dtype()) << ShapeToString(want.shape());
  }
  if (got.nbytes() > 0 && std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()) != 0) {
    return ::testing::AssertionFailure() << "data differs";
  }
  return ::testing::AssertionSuccess();
}

// Output 0 is a tensor of this dtype and shape, neither a view nor in place.
::testing::AssertionResult Declares(const PreparedKernel& p, DataType dtype, const Shape& shape, int view_of = -1) {
  if (p.outputs.empty() || !p.outputs[0].is_tensor()) return ::testing::AssertionFailure() << "Y is not declared";
  const OutputSpec& o = p.outputs[0];
  if (o.dtype != dtype || o.shape != shape) {
    return ::testing::AssertionFailure() << "Y is " << DataTypeName(o.dtype) << ShapeToString(o.shape) << ", want "
                                         << DataTypeName(dtype) << ShapeToString(shape);
  }
  if (o.view_of != view_of) return ::testing::AssertionFailure() << "view_of " << o.view_of << ", want " << view_of;
  if (o.in_place_of != -1) return ::testing::AssertionFailure() << "in_place_of " << o.in_place_of;
  return ::testing::AssertionSuccess();
}

constexpr const char* kAdd = "cpu.f32_add__scalar.7";
constexpr const char* kAddI64 = "cpu.i64_add__scalar.7";
constexpr const char* kClip = "cpu.f32_clip__scalar.11";
constexpr const char* kCast = "cpu.any_cast__scalar.1";
constexpr const char* kConcat = "cpu.any_concat__memcpy.1";
constexpr const char* kGather = "cpu.any_gather__memcpy.1";
constexpr const char* kSlice = "cpu.any_slice__strided.10";
constexpr const char* kPad = "cpu.any_pad__strided.11";
constexpr const char* kTranspose = "cpu.any_transpose__scalar.1";
constexpr const char* kWhere = "cpu.any_where__scalar.9";
constexpr const char* kReshape = "cpu.any_reshape__view.5";
constexpr const char* kFlatten = "cpu.any_flatten__view.1";
constexpr const char* kSqueeze = "cpu.any_squeeze__view.13";
constexpr const char* kUnsqueeze = "cpu.any_unsqueeze__view.13";
constexpr const char* kIdentity = "cpu.any_identity__view.1";

TEST(CpuPrepareData, BinaryBroadcastErrorsAreRaisedByPrepare) {
  OneNode n("Add", 14, {{"a", Floats({2, 3})}, {"b", Floats({4})}});
  std::string e = PrepareError<InvalidArgumentError>(n, kAdd);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Add)")) << e;
  EXPECT_TRUE(Contains(e, "input 0 'a' float32[2,3]")) << e;
  EXPECT_TRUE(Contains(e, "input 1 'b' float32[4]")) << e;
  EXPECT_TRUE(Contains(e, "do not broadcast")) << e;

  OneNode types("Add", 14, {{"a", Floats({2})}, {"b", Int64s({1, 2})}});
  e = PrepareError<InvalidArgumentError>(types, kAdd);
  EXPECT_TRUE(Contains(e, "input 1 'b' int64[2]")) << e;
  EXPECT_TRUE(Contains(e, "expected float32")) << e;
}

TEST(CpuPrepareData, BinaryDeclaresTheBroadcastAndRunsItsPlan) {
  struct Case {
    Shape a, b, y;
  };
  // Every path: equal shapes, vector-scalar, scalar-vector, rows, both tile directions, an empty output.
  const std::vector<Case> cases = {{{2, 3}, {2, 3}, {2, 3}},           {{5, 4}, {1}, {5, 4}},
                                   {{}, {3, 2}, {3, 2}},               {{2, 1, 4}, {3, 1}, {2, 3, 4}},
                                   {{2, 3, 5, 16}, {2, 3, 1, 16}, {2, 3, 5, 16}},
                                   {{2, 3, 1, 16}, {2, 3, 5, 16}, {2, 3, 5, 16}},
                                   {{0, 3}, {1, 3}, {0, 3}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(ShapeToString(c.a) + " + " + ShapeToString(c.b));
    OneNode n("Add", 14, {{"a", Floats(c.a)}, {"b", Floats(c.b)}});
    const PreparedKernel p = n.Prepare(kAdd);
    EXPECT_TRUE(Declares(p, DataType::kFloat, c.y));
    EXPECT_NE(p.state, nullptr);
    EXPECT_TRUE(SameTensor(n.Run(kAdd).tensor(), n.Evaluate(RefRegistry())));
  }
  Tensor ai(DataType::kInt64, {3, 1});
  for (int64_t i = 0; i < 3; ++i) ai.data<int64_t>()[i] = i * 7 - 4;
  OneNode ints("Add", 14, {{"a", ai}, {"b", Int64s({1, 2, 3, 4})}});
  EXPECT_TRUE(Declares(ints.Prepare(kAddI64), DataType::kInt64, {3, 4}));
  EXPECT_TRUE(SameTensor(ints.Run(kAddI64).tensor(), ints.Evaluate(RefRegistry())));
}

TEST(CpuPrepareData, ClipBoundsAreCheckedByPrepare) {
  OneNode n("Clip", 13, {{"x", Floats({5})}, {"min", Floats({2})}});
  std::string e = PrepareError<InvalidArgumentError>(n, kClip);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Clip)")) << e;
  EXPECT_TRUE(Contains(e, "must be a scalar")) << e;
  EXPECT_TRUE(Contains(e, "input 1 'min' float32[2]")) << e;

  OneNode types("Clip", 13, {{"x", Floats({5})}, {"", Tensor()}, {"max", Int64s({1})}});
  e = PrepareError<InvalidArgumentError>(types, kClip);
  EXPECT_TRUE(Contains(e, "input 2 'max' int64[1]")) << e;

  // Fed bounds: Y is declared, and the run reads them.
  Tensor lo(DataType::kFloat, {});
  lo.data<float>()[0] = -1.0f;
  OneNode ok("Clip", 13, {{"x", Floats({3, 4})}, {"min", lo}, {"", Tensor()}});
  EXPECT_TRUE(Declares(ok.Prepare(kClip), DataType::kFloat, {3, 4}));
  EXPECT_TRUE(SameTensor(ok.Run(kClip).tensor(), ok.Evaluate(RefRegistry())));
}

TEST(CpuPrepareData, CastToItsOwnTypeIsAView) {
  OneNode same("Cast", 19, {{"x", Floats({2, 3})}}, {ir::IntAttr("to", static_cast<int64_t>(DataType::kFloat))});
  EXPECT_TRUE(Declares(same.Prepare(kCast), DataType::kFloat, {2, 3}, /*view_of=*/0));
  const Tensor x = same.inputs[0].value;
  OneNode other("Cast", 19, {{"x", x}}, {ir::IntAttr("to", static_cast<int64_t>(DataType::kInt32))});
  const PreparedKernel p = other.Prepare(kCast);
  EXPECT_TRUE(Declares(p, DataType::kInt32, {2, 3}));
  EXPECT_NE(p.state, nullptr);
  EXPECT_TRUE(SameTensor(other.Run(kCast).tensor(), other.Evaluate(RefRegistry())));
}

TEST(CpuPrepareData, ConcatShapesAreCheckedByPrepare) {
  OneNode n("Concat", 13, {{"a", Floats({2, 3})}, {"b", Floats({3, 3})}}, {ir::IntAttr("axis", 1)});
  const std::string e = PrepareError<InvalidArgumentError>(n, kConcat);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Concat)")) << e;
  EXPECT_TRUE(Contains(e, "input 1 'b' float32[3,3]")) << e;
  EXPECT_TRUE(Contains(e, "input 0 'a' float32[2,3]")) << e;

  OneNode ok("Concat", 13, {{"a", Floats({2, 3})}, {"b", Floats({2, 0})}, {"c", Floats({2, 4}), true}},
             {ir::IntAttr("axis", -1)});
  EXPECT_TRUE(Declares(ok.Prepare(kConcat), DataType::kFloat, {2, 7}));
  EXPECT_TRUE(SameTensor(ok.Run(kConcat).tensor(), ok.Evaluate(RefRegistry())));
}

TEST(CpuPrepareData, GatherDeclaresYAndLeavesFedIndicesToTheRun) {
  // Fed indices: Y's shape is known from theirs; an index out of range is the run's error, naming the node.
  OneNode fed("Gather", 13, {{"data", Floats({4, 5})}, {"indices", Int64s({0, 5})}}, {ir::IntAttr("axis", 1)});
  EXPECT_TRUE(Declares(fed.Prepare(kGather), DataType::kFloat, {4, 2}));
  const std::string e = ErrorOf<InvalidArgumentError>([&] { fed.Run(kGather); });
  EXPECT_TRUE(Contains(e, "node 'n' (Gather)")) << e;
  EXPECT_TRUE(Contains(e, "index 5 is out of range")) << e;

  // Constant indices are normalized (and checked) by Prepare.
  OneNode bad("Gather", 13, {{"data", Floats({4, 5})}, {"indices", Int64s({-6}), true}}, {ir::IntAttr("axis", 1)});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(bad, kGather), "index -6 is out of range"));
  OneNode ok("Gather", 13, {{"data", Floats({4, 5})}, {"indices", Int64s({-1, 0, 3}), true}});
  EXPECT_TRUE(Declares(ok.Prepare(kGather), DataType::kFloat, {3, 5}));
  EXPECT_TRUE(SameTensor(ok.Run(kGather).tensor(), ok.Evaluate(RefRegistry())));

  OneNode types("Gather", 13, {{"data", Floats({4, 5})}, {"indices", Floats({2})}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(types, kGather), "input 1 'indices' float32[2]"));
  OneNode scalar("Gather", 13, {{"data", Floats({})}, {"indices", Int64s({0})}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(scalar, kGather), "input 0 'data' float32[]"));
}

TEST(CpuPrepareData, SliceResolvesConstantWindowsInPrepare) {
  const Tensor x = Floats({4, 6});
  OneNode known("Slice", 13,
                {{"x", x}, {"starts", Int64s({1, -1}), true}, {"ends", Int64s({3, 0}), true},
                 {"axes", Int64s({0, 1}), true}, {"steps", Int64s({1, -2}), true}});
  const PreparedKernel p = known.Prepare(kSlice);
  EXPECT_TRUE(Declares(p, DataType::kFloat, {2, 3}));
  EXPECT_NE(p.state, nullptr);
  EXPECT_TRUE(SameTensor(known.Run(kSlice).tensor(), known.Evaluate(RefRegistry())));

  // A window error from constants is Prepare's.
  OneNode bad("Slice", 13, {{"x", x}, {"starts", Int64s({0}), true}, {"ends", Int64s({2}), true},
                            {"axes", Int64s({2}), true}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(bad, kSlice), "node 'n' (Slice)"));

  // Fed ends: Y is dynamic; the run resolves it (and raises the data's errors).
  OneNode fed("Slice", 13, {{"x", x}, {"starts", Int64s({1}), true}, {"ends", Int64s({3})}});
  const PreparedKernel q = fed.Prepare(kSlice);
  ASSERT_EQ(q.outputs.size(), 1u);
  EXPECT_FALSE(q.outputs[0].is_tensor());
  EXPECT_TRUE(SameTensor(fed.Run(kSlice).tensor(), fed.Evaluate(RefRegistry())));
  OneNode fed_bad("Slice", 13, {{"x", x}, {"starts", Int64s({0})}, {"ends", Int64s({2})}, {"axes", Int64s({5})}});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { fed_bad.Run(kSlice); }), "node 'n' (Slice)"));

  OneNode types("Slice", 13, {{"x", x}, {"starts", Floats({1})}, {"ends", Int64s({3})}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(types, kSlice), "input 1 'starts' float32[1]"));
}

TEST(CpuPrepareData, PadResolvesConstantPadsInPrepare) {
  const Tensor x = Floats({2, 3});
  OneNode known("Pad", 18, {{"x", x}, {"pads", Int64s({1, 0, 0, 2}), true}}, {ir::StringAttr("mode", "reflect")});
  EXPECT_TRUE(Declares(known.Prepare(kPad), DataType::kFloat, {3, 5}));
  EXPECT_TRUE(SameTensor(known.Run(kPad).tensor(), known.Evaluate(RefRegistry())));

  OneNode bad("Pad", 18, {{"x", x}, {"pads", Int64s({1, 1, 1}), true}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(bad, kPad), "model 'm.onnx': node 'n' (Pad)"));

  // Fed pads: Y is dynamic and the run resolves them; the constant value's type is still Prepare's to check.
  Tensor value(DataType::kFloat, {});
  value.data<float>()[0] = 2.5f;
  OneNode fed("Pad", 18, {{"x", x}, {"pads", Int64s({0, 1, 1, 0})}, {"value", value, true}});
  EXPECT_FALSE(fed.Prepare(kPad).outputs[0].is_tensor());
  EXPECT_TRUE(SameTensor(fed.Run(kPad).tensor(), fed.Evaluate(RefRegistry())));
  OneNode typed("Pad", 18, {{"x", x}, {"pads", Int64s({0, 1, 1, 0})}, {"value", Int64s({1})}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(typed, kPad), "input 2 'value' int64[1]"));
  // Fed axes keep Y dynamic even with constant pads.
  OneNode axes("Pad", 18, {{"x", x}, {"pads", Int64s({1, 1}), true}, {"", Tensor()}, {"axes", Int64s({1})}});
  EXPECT_FALSE(axes.Prepare(kPad).outputs[0].is_tensor());
  EXPECT_TRUE(SameTensor(axes.Run(kPad).tensor(), axes.Evaluate(RefRegistry())));
}

TEST(CpuPrepareData, TransposeAndWhereAreCheckedByPrepare) {
  OneNode t("Transpose", 13, {{"x", Floats({2, 3, 4})}}, {ir::IntsAttr("perm", {1, 0})});
  const std::string e = PrepareError<InvalidArgumentError>(t, kTranspose);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Transpose)")) << e;
  EXPECT_TRUE(Contains(e, "perm")) << e;
  OneNode ok("Transpose", 13, {{"x", Floats({2, 3, 4})}}, {ir::IntsAttr("perm", {2, 0, 1})});
  EXPECT_TRUE(Declares(ok.Prepare(kTranspose), DataType::kFloat, {4, 2, 3}));
  EXPECT_TRUE(SameTensor(ok.Run(kTranspose).tensor(), ok.Evaluate(RefRegistry())));

  Tensor c(DataType::kBool, {3, 1});
  c.data<bool>()[1] = true;
  OneNode w("Where", 16, {{"c", c}, {"x", Floats({2, 4})}, {"y", Floats({4})}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(w, kWhere), "node 'n' (Where)"));
  OneNode wt("Where", 16, {{"c", Floats({3, 1})}, {"x", Floats({4})}, {"y", Floats({4})}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(wt, kWhere), "input 0 'c' float32[3,1]"));
  OneNode wok("Where", 16, {{"c", c}, {"x", Floats({1, 4})}, {"y", Floats({4})}});
  EXPECT_TRUE(Declares(wok.Prepare(kWhere), DataType::kFloat, {3, 4}));
  EXPECT_TRUE(SameTensor(wok.Run(kWhere).tensor(), wok.Evaluate(RefRegistry())));
}

TEST(CpuPrepareData, ViewOpsDeclareAViewOfTheirInput) {
  const Tensor x = Floats({2, 1, 6});
  OneNode reshape("Reshape", 14, {{"x", x}, {"shape", Int64s({3, -1}), true}});
  EXPECT_TRUE(Declares(reshape.Prepare(kReshape), DataType::kFloat, {3, 4}, 0));
  const Value y = reshape.Run(kReshape);
  EXPECT_EQ(y.tensor().shape(), (Shape{3, 4}));
  EXPECT_EQ(y.tensor().raw_data(), reshape.inputs[0].value.raw_data());  // Run wraps the same buffer

  OneNode flatten("Flatten", 13, {{"x", x}}, {ir::IntAttr("axis", 2)});
  EXPECT_TRUE(Declares(flatten.Prepare(kFlatten), DataType::kFloat, {2, 6}, 0));
  EXPECT_EQ(flatten.Run(kFlatten).tensor().shape(), (Shape{2, 6}));
  OneNode squeeze("Squeeze", 13, {{"x", x}, {"axes", Int64s({1}), true}});
  EXPECT_TRUE(Declares(squeeze.Prepare(kSqueeze), DataType::kFloat, {2, 6}, 0));
  OneNode squeeze_all("Squeeze", 13, {{"x", x}});
  EXPECT_TRUE(Declares(squeeze_all.Prepare(kSqueeze), DataType::kFloat, {2, 6}, 0));
  OneNode unsqueeze("Unsqueeze", 13, {{"x", x}, {"axes", Int64s({0, -1}), true}});
  EXPECT_TRUE(Declares(unsqueeze.Prepare(kUnsqueeze), DataType::kFloat, {1, 2, 1, 6, 1}, 0));
  EXPECT_EQ(unsqueeze.Run(kUnsqueeze).tensor().shape(), (Shape{1, 2, 1, 6, 1}));
  OneNode identity("Identity", 16, {{"x", x}});
  EXPECT_TRUE(Declares(identity.Prepare(kIdentity), DataType::kFloat, {2, 1, 6}, 0));
}

TEST(CpuPrepareData, ViewOpsWithFedShapesAreDynamicAndResolvedByTheRun) {
  const Tensor x = Floats({2, 1, 6});
  OneNode reshape("Reshape", 14, {{"x", x}, {"shape", Int64s({3, 0, -1})}});  // 0 copies x's dim 1
  EXPECT_FALSE(reshape.Prepare(kReshape).outputs[0].is_tensor());
  EXPECT_EQ(reshape.Run(kReshape).tensor().shape(), (Shape{3, 1, 4}));
  OneNode reshape_bad("Reshape", 14, {{"x", x}, {"shape", Int64s({5, -1})}});
  const std::string e = ErrorOf<InvalidArgumentError>([&] { reshape_bad.Run(kReshape); });
  EXPECT_TRUE(Contains(e, "node 'n' (Reshape)")) << e;
  OneNode squeeze("Squeeze", 13, {{"x", x}, {"axes", Int64s({-2})}});
  EXPECT_FALSE(squeeze.Prepare(kSqueeze).outputs[0].is_tensor());
  EXPECT_EQ(squeeze.Run(kSqueeze).tensor().shape(), (Shape{2, 6}));
  OneNode unsqueeze("Unsqueeze", 13, {{"x", x}, {"axes", Int64s({1})}});
  EXPECT_FALSE(unsqueeze.Prepare(kUnsqueeze).outputs[0].is_tensor());
  EXPECT_EQ(unsqueeze.Run(kUnsqueeze).tensor().shape(), (Shape{2, 1, 1, 6}));
}

TEST(CpuPrepareData, ViewOpShapeErrorsAreRaisedByPrepare) {
  const Tensor x = Floats({2, 1, 6});
  OneNode reshape("Reshape", 14, {{"x", x}, {"shape", Int64s({5, -1}), true}});
  std::string e = PrepareError<InvalidArgumentError>(reshape, kReshape);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Reshape)")) << e;
  EXPECT_TRUE(Contains(e, "cannot reshape [2,1,6]")) << e;
  // A shape input that is not 1-D is Prepare's to refuse even when fed.
  Tensor s2(DataType::kInt64, {1, 2});
  OneNode rank("Reshape", 14, {{"x", x}, {"shape", s2}});
  e = PrepareError<InvalidArgumentError>(rank, kReshape);
  EXPECT_TRUE(Contains(e, "input 1 'shape' int64[1,2]")) << e;

  OneNode flatten("Flatten", 13, {{"x", x}}, {ir::IntAttr("axis", 4)});
  e = PrepareError<InvalidArgumentError>(flatten, kFlatten);
  EXPECT_TRUE(Contains(e, "model 'm.onnx': node 'n' (Flatten)")) << e;
  EXPECT_TRUE(Contains(e, "input 0 'x' float32[2,1,6]")) << e;
  OneNode squeeze("Squeeze", 13, {{"x", x}, {"axes", Int64s({0}), true}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(squeeze, kSqueeze), "its size is not 1"));
  OneNode unsqueeze("Unsqueeze", 13, {{"x", x}, {"axes", Int64s({1, 1}), true}});
  EXPECT_TRUE(Contains(PrepareError<InvalidArgumentError>(unsqueeze, kUnsqueeze), "listed more than once"));
}

}  // namespace
}  // namespace ferry
