// The value queries (src/ir/value_query.h): rank, dims, element type and constant contents of a value, from its
// declared type (Type*) or its initializer first (Known*); symbolic dims, unknown ranks, non-tensor types,
// initializers that are graph inputs, Constant nodes by each value* attribute.
#include "ir/value_query.h"

#include <gtest/gtest.h>

#include <memory>

#include "ferry/float16.h"
#include "ir/builder.h"

namespace ferry::ir {
namespace {

std::shared_ptr<const Tensor> Floats(Shape shape, std::vector<float> v) {
  return std::make_shared<const Tensor>(Tensor::FromVector(DataType::kFloat, std::move(shape), v));
}

// A Constant node of domain `domain` with attribute `a`, producing `name`.
Value* ConstantNode(Graph& g, const std::string& name, Attribute a, const std::string& domain = "") {
  Value* v = g.AddValue(name);
  g.AddNode(name + "_node", "Constant", domain, {}, {v}, {std::move(a)});
  return v;
}

Attribute TensorAttr(const std::string& name, Tensor t) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kTensor;
  a.t = std::move(t);
  return a;
}

TEST(IrValueQuery, RankFromTheTypeOrTheInitializer) {
  Graph g;
  Value* fixed = g.AddValue("fixed", TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{Dim::Static(2)}));
  Value* sym = g.AddValue("sym", TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{Dim::Symbolic("N"), Dim{}}));
  Value* unranked = g.AddValue("unranked", TypeInfo::Tensor(DataType::kFloat));
  TypeInfo seq;
  seq.kind = TypeInfo::Kind::kSequence;
  seq.elem = std::make_shared<TypeInfo>(TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{}));
  Value* sequence = g.AddValue("sequence", seq);
  // An initializer whose declared type leaves the rank unknown: only the Known* queries see its tensor's.
  g.AddValue("w", TypeInfo::Tensor(DataType::kFloat));
  Value* w = g.AddInitializer("w", Floats({2, 3}, {1, 2, 3, 4, 5, 6}));

  EXPECT_EQ(TypeRank(fixed), 1);
  EXPECT_EQ(TypeRank(sym), 2);  // symbolic and unknown dims still count
  EXPECT_EQ(TypeRank(unranked), std::nullopt);
  EXPECT_EQ(TypeRank(sequence), std::nullopt);
  EXPECT_EQ(TypeRank(nullptr), std::nullopt);
  EXPECT_EQ(TypeRank(w), std::nullopt);
  EXPECT_EQ(KnownRank(w), 2);
  EXPECT_EQ(KnownRank(sym), 2);
  EXPECT_EQ(KnownRank(unranked), std::nullopt);
  EXPECT_EQ(KnownRank(nullptr), std::nullopt);
  EXPECT_EQ(RankOrMinusOne(w), 2);
  EXPECT_EQ(RankOrMinusOne(unranked), -1);
  EXPECT_EQ(RankOrMinusOne(sequence), -1);
  EXPECT_EQ(RankOrMinusOne(nullptr), -1);
}

TEST(IrValueQuery, SymbolicDimsAreKeptOrCountAsUnknown) {
  Graph g;
  const std::vector<Dim> dims{Dim::Static(4), Dim::Symbolic("N"), Dim{}};
  Value* sym = g.AddValue("sym", TypeInfo::Tensor(DataType::kFloat, dims));
  Value* fixed = g.AddValue("fixed", TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{Dim::Static(2)}));
  Value* scalar = g.AddValue("scalar", TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{}));
  Value* unranked = g.AddValue("unranked", TypeInfo::Tensor(DataType::kFloat));
  g.AddValue("w", TypeInfo::Tensor(DataType::kFloat));
  Value* w = g.AddInitializer("w", Floats({3, 1}, {1, 2, 3}));

  EXPECT_EQ(TypeDims(sym), dims);
  EXPECT_EQ(KnownDims(sym), dims);
  EXPECT_EQ(TypeStaticShape(sym), std::nullopt);
  EXPECT_EQ(KnownStaticShape(sym), std::nullopt);
  EXPECT_EQ(TypeStaticShape(fixed), (Shape{2}));
  EXPECT_EQ(KnownStaticShape(fixed), (Shape{2}));
  EXPECT_EQ(TypeStaticShape(scalar), Shape{});
  EXPECT_EQ(TypeDims(unranked), std::nullopt);
  EXPECT_EQ(KnownDims(unranked), std::nullopt);
  EXPECT_EQ(TypeDims(nullptr), std::nullopt);
  EXPECT_EQ(KnownStaticShape(nullptr), std::nullopt);
  // The initializer: its tensor's shape, every dim static; its declared type has none.
  EXPECT_EQ(TypeDims(w), std::nullopt);
  EXPECT_EQ(TypeStaticShape(w), std::nullopt);
  EXPECT_EQ(KnownDims(w), (std::vector<Dim>{Dim::Static(3), Dim::Static(1)}));
  EXPECT_EQ(KnownStaticShape(w), (Shape{3, 1}));

  EXPECT_EQ(DimOrMinusOne(sym, 0), 4);
  EXPECT_EQ(DimOrMinusOne(sym, 1), -1);   // symbolic
  EXPECT_EQ(DimOrMinusOne(sym, 2), -1);   // unknown
  EXPECT_EQ(DimOrMinusOne(sym, -3), 4);   // from the end
  EXPECT_EQ(DimOrMinusOne(sym, 3), -1);   // out of range
  EXPECT_EQ(DimOrMinusOne(sym, -4), -1);  // out of range
  EXPECT_EQ(DimOrMinusOne(unranked, 0), -1);
  EXPECT_EQ(DimOrMinusOne(nullptr, 0), -1);
  EXPECT_EQ(DimOrMinusOne(w, 0), 3);
  EXPECT_EQ(DimOrMinusOne(w, -1), 1);
}

TEST(IrValueQuery, ElementTypeOfTheTypeOrTheInitializer) {
  Graph g;
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat16));
  TypeInfo sparse = TypeInfo::Tensor(DataType::kFloat);
  sparse.kind = TypeInfo::Kind::kSparseTensor;
  Value* s = g.AddValue("s", sparse);
  Value* unknown = g.AddValue("unknown");
  g.AddValue("w", TypeInfo::Tensor(DataType::kUndefined));
  Value* w = g.AddInitializer("w", Floats({1}, {1}));

  EXPECT_EQ(TensorElementType(x), DataType::kFloat16);
  EXPECT_EQ(DeclaredElementType(x), DataType::kFloat16);
  EXPECT_EQ(TensorElementType(s), DataType::kUndefined);  // a sparse tensor is no tensor here
  EXPECT_EQ(DeclaredElementType(s), DataType::kFloat);
  EXPECT_EQ(TensorElementType(unknown), DataType::kUndefined);
  EXPECT_EQ(DeclaredElementType(nullptr), DataType::kUndefined);
  EXPECT_EQ(TensorElementType(nullptr), DataType::kUndefined);
  // ElementType (ir/builder.h) reads the initializer first.
  EXPECT_EQ(TensorElementType(w), DataType::kUndefined);
  EXPECT_EQ(ElementType(w), DataType::kFloat);
}

TEST(IrValueQuery, AnInitializerThatIsAGraphInputIsNoConstant) {
  Graph g;
  Value* w = g.AddInitializer("w", Floats({2}, {1, 2}));
  Value* fed = g.AddInitializer("fed", Floats({2}, {3, 4}));
  g.mutable_inputs().push_back(fed);
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat));

  EXPECT_TRUE(IsConstantInitializer(g, w));
  EXPECT_FALSE(IsConstantInitializer(g, fed));
  EXPECT_FALSE(IsConstantInitializer(g, x));
  EXPECT_FALSE(IsConstantInitializer(g, nullptr));
  EXPECT_EQ(ConstantTensor(g, w), w->initializer());
  EXPECT_EQ(ConstantTensor(g, fed), nullptr);
  EXPECT_EQ(ConstantTensor(g, x), nullptr);
  EXPECT_EQ(ConstantFloats(w), (std::vector<double>{1, 2}));
  EXPECT_EQ(ConstantValue(fed), std::nullopt);
  EXPECT_EQ(ConstantValue(x), std::nullopt);
  EXPECT_EQ(ConstantValue(nullptr), std::nullopt);

  // ConstantTensor asks the graph it is given; ConstantValue the value's own.
  Graph inner(&g);
  EXPECT_EQ(ConstantTensor(inner, fed), fed->initializer());
  EXPECT_EQ(ConstantValue(fed), std::nullopt);
}

TEST(IrValueQuery, ConstantNodesByEachAttribute) {
  Graph g;
  Value* t = ConstantNode(
      g, "t", TensorAttr("value", Tensor::FromVector(DataType::kInt32, Shape{3}, std::vector<int32_t>{1, -2, 3})));
  Value* ints = ConstantNode(g, "ints", IntsAttr("value_ints", {4, 5}));
  Value* one_int = ConstantNode(g, "one_int", IntAttr("value_int", 6));
  Value* floats = ConstantNode(g, "floats", FloatsAttr("value_floats", {0.5f, 1.5f}));
  Value* one_float = ConstantNode(g, "one_float", FloatAttr("value_float", 2.5f));
  Value* text = ConstantNode(g, "text", StringAttr("value_string", "s"));
  Value* other = ConstantNode(g, "other", IntAttr("value_int", 7), "com.example");
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat));
  Value* y = g.AddValue("y", TypeInfo::Tensor(DataType::kFloat));
  g.AddNode("relu", "Relu", "", {x}, {y});

  // ConstantTensor: the `value` tensor only, in place.
  const Tensor* in_place = ConstantTensor(g, t);
  ASSERT_NE(in_place, nullptr);
  EXPECT_EQ(in_place, &t->producer()->attr("value")->t);
  EXPECT_EQ(ConstantTensor(g, ints), nullptr);
  EXPECT_EQ(ConstantTensor(g, one_float), nullptr);
  EXPECT_EQ(ConstantTensor(g, other), nullptr);
  EXPECT_EQ(ConstantTensor(g, y), nullptr);

  // ConstantValue: any numeric value* attribute, as a copy; ints as int64, floats as double.
  EXPECT_EQ(ConstantInts(t), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(ConstantInts(ints), (std::vector<int64_t>{4, 5}));
  ASSERT_TRUE(ConstantValue(one_int));
  EXPECT_EQ(ConstantValue(one_int)->rank(), 0);
  EXPECT_EQ(ConstantInts(one_int), (std::vector<int64_t>{6}));
  EXPECT_EQ(ConstantFloats(floats), (std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(ConstantFloats(one_float), (std::vector<double>{2.5}));
  EXPECT_EQ(ConstantInts(floats), std::nullopt);  // not an integer tensor
  EXPECT_EQ(ConstantFloats(ints), std::nullopt);  // not a float tensor
  EXPECT_EQ(ConstantValue(text), std::nullopt);
  EXPECT_EQ(ConstantValue(other), std::nullopt);
  EXPECT_EQ(ConstantValue(y), std::nullopt);
}

TEST(IrValueQuery, HalfPrecisionConstantFloats) {
  Graph g;
  Value* h = g.AddInitializer(
      "h", std::make_shared<const Tensor>(
               Tensor::FromVector(DataType::kFloat16, Shape{2}, std::vector<Float16>{Float16(0.5f), Float16(-2.0f)})));
  Value* bf = g.AddInitializer("bf", std::make_shared<const Tensor>(Tensor::FromVector(
                                         DataType::kBFloat16, Shape{1}, std::vector<BFloat16>{BFloat16(3.0f)})));
  EXPECT_EQ(ConstantFloats(h), (std::vector<double>{0.5, -2.0}));
  EXPECT_EQ(ConstantFloats(bf), (std::vector<double>{3.0}));
}

TEST(IrValueQuery, ScalarsOfOneElementFloatOrNumber) {
  Graph g;
  Value* f = g.AddInitializer("f", Floats({}, {0.25f}));
  Value* f1 = g.AddInitializer("f1", Floats({1, 1}, {1.5f}));  // one element of rank 2 counts
  Value* two = g.AddInitializer("two", Floats({2}, {1, 2}));
  Value* d = g.AddInitializer(
      "d", std::make_shared<const Tensor>(Tensor::FromVector(DataType::kDouble, Shape{}, std::vector<double>{-3})));
  Value* i64 = ConstantNode(
      g, "i64", TensorAttr("value", Tensor::FromVector(DataType::kInt64, Shape{}, std::vector<int64_t>{7})));
  Value* i32 = g.AddInitializer(
      "i32", std::make_shared<const Tensor>(Tensor::FromVector(DataType::kInt32, Shape{1}, std::vector<int32_t>{-4})));
  Value* by_int_attr = ConstantNode(g, "by_int_attr", IntAttr("value_int", 1));

  EXPECT_EQ(ConstantFloatScalar(g, f), 0.25);
  EXPECT_EQ(ConstantFloatScalar(g, f1), 1.5);
  EXPECT_EQ(ConstantFloatScalar(g, d), -3.0);
  EXPECT_EQ(ConstantFloatScalar(g, two), std::nullopt);
  EXPECT_EQ(ConstantFloatScalar(g, i64), std::nullopt);  // integers are no float scalar
  EXPECT_EQ(ConstantFloatScalar(g, i32), std::nullopt);
  EXPECT_EQ(ConstantNumberScalar(g, f), 0.25);
  EXPECT_EQ(ConstantNumberScalar(g, i64), 7.0);
  EXPECT_EQ(ConstantNumberScalar(g, i32), -4.0);
  EXPECT_EQ(ConstantNumberScalar(g, two), std::nullopt);
  EXPECT_EQ(ConstantNumberScalar(g, by_int_attr), std::nullopt);  // through ConstantTensor: `value` only
  EXPECT_EQ(ConstantNumberScalar(g, nullptr), std::nullopt);
}

}  // namespace
}  // namespace ferry::ir
