// What the graph alone tells of a value before any run: its rank, its dims, its element type, its constant
// contents. The one set of value queries the passes, legalization and the opset converter ask.
//
// Two sources answer: the value's declared type (TypeInfo, what import and type inference left on it) and, for an
// initializer, its tensor. The names say which a query reads: Type* reads the declared type only; Known* reads the
// initializer's tensor first, else the declared type. Where callers need different answers there is one function
// per meaning, named apart: a symbolic dim kept (KnownDims) or counted unknown (KnownStaticShape, DimOrMinusOne);
// unknown as nullopt (KnownRank) or as -1 (RankOrMinusOne); a Constant node's `value` tensor only, in place
// (ConstantTensor), or any of its value* attributes, as a copy (ConstantValue). The element type of a value, its
// initializer's else its tensor type's, is ElementType (ir/builder.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ferry/dtype.h"
#include "ferry/tensor.h"
#include "ir/graph.h"
#include "ir/type.h"

namespace ferry::ir {

// ---- rank ---------------------------------------------------------------------------------------------------

// The rank the value's type declares: nullopt for nullptr, a value that is no tensor, or an unknown rank. An
// initializer's tensor is not consulted.
std::optional<int64_t> TypeRank(const Value* v);
// The rank the graph tells: the initializer's, else TypeRank.
std::optional<int64_t> KnownRank(const Value* v);
// KnownRank, or -1 when it is unknown.
int64_t RankOrMinusOne(const Value* v);

// ---- dims ---------------------------------------------------------------------------------------------------

// The dims the value's type declares (static, symbolic or unknown, as they are) when it is a tensor of known
// rank; nullopt otherwise (nullptr too). An initializer's tensor is not consulted.
std::optional<std::vector<Dim>> TypeDims(const Value* v);
// The dims the graph tells: the initializer's shape (every dim static), else TypeDims.
std::optional<std::vector<Dim>> KnownDims(const Value* v);
// The type's dims when it is a tensor whose every dim is static (a symbolic dim counts as unknown); nullopt
// otherwise. An initializer's tensor is not consulted.
std::optional<Shape> TypeStaticShape(const Value* v);
// The initializer's shape, else TypeStaticShape.
std::optional<Shape> KnownStaticShape(const Value* v);
// Dim `i` of KnownDims (negative `i` counts from the end) when it is static; -1 when the rank is unknown, `i` is
// out of range, or the dim is symbolic or unknown.
int64_t DimOrMinusOne(const Value* v, int64_t i);

// ---- element type -------------------------------------------------------------------------------------------

// The element type of the value's type when it is a tensor; kUndefined otherwise (nullptr, unknown, a sparse
// tensor, a sequence, ...). An initializer's tensor is not consulted.
DataType TensorElementType(const Value* v);
// The element type field of the value's type whatever its kind: a tensor's or a sparse tensor's element type, a
// map's key type; kUndefined for nullptr and the kinds that leave it unset.
DataType DeclaredElementType(const Value* v);

// ---- constants ----------------------------------------------------------------------------------------------

// An initializer that is no input of `graph` (a feed could override one that is).
bool IsConstantInitializer(const Graph& graph, const Value* v);
// The constant behind a value, in place: the `value` tensor attribute of the ai.onnx Constant node producing it
// (nullptr for a Constant given by another attribute), else the initializer when IsConstantInitializer(graph, v).
const Tensor* ConstantTensor(const Graph& graph, const Value* v);
// ConstantTensor when it holds one element (rank 0 or not) of type float or double, as double.
std::optional<double> ConstantFloatScalar(const Graph& graph, const Value* v);
// ConstantTensor when it holds one element of type float, double, int32 or int64, as double.
std::optional<double> ConstantNumberScalar(const Graph& graph, const Value* v);

// The constant behind a value, as a copy: the ai.onnx Constant node producing it, by any of its attributes value
// (a tensor), value_float, value_floats, value_int or value_ints (not value_string(s), not a sparse value); else
// the initializer when IsConstantInitializer(*v->owner(), v). nullopt otherwise, also for a value some other node
// produces.
std::optional<Tensor> ConstantValue(const Value* v);
// ConstantValue's values when it is an int32 or int64 tensor, as int64; nullopt otherwise.
std::optional<std::vector<int64_t>> ConstantInts(const Value* v);
// ConstantValue's values when it is a float, double, float16 or bfloat16 tensor, as double; nullopt otherwise.
std::optional<std::vector<double>> ConstantFloats(const Value* v);

}  // namespace ferry::ir
