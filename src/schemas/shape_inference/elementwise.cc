// Shape inference for elementwise ops: unary ops keep their input's shape; binary, variadic and Where broadcast
// multidirectionally (numpy rules, symbolic dims: equal symbols or a 1 broadcast, unknown otherwise); the
// opset < 7 binary ops with the `broadcast` attribute give A's shape. Integer arithmetic and comparisons also
// propagate partial values (shape computations: Mul(Gather(Shape(x)), 2), Equal(shape, -1), Where(...)).
#include <algorithm>
#include <array>
#include <climits>

#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {
namespace {

void SameShape(InferenceContext& ctx) { ctx.PropagateShape(0, 0); }

// Output i of these ops all have the input's shape (Dropout's mask, ...).
void SameShapeAllOutputs(InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.PropagateShape(0, i);
}

// --- partial values ---

enum class ArithOp { kAdd, kSub, kMul, kDiv, kMod, kEqual, kMax, kMin };

std::optional<SymInt> Apply(ArithOp op, const SymInt& a, const SymInt& b) {
  if (a.value && b.value) {
    const int64_t x = *a.value, y = *b.value;
    int64_t r = 0;
    switch (op) {
      case ArithOp::kAdd:
        if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
        break;
      case ArithOp::kSub:
        if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
        break;
      case ArithOp::kMul:
        if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
        break;
      case ArithOp::kDiv:
        if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt;
        r = x / y;
        break;
      case ArithOp::kMod:  // fmod=0: the result has the divisor's sign
        if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt;
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        break;
      case ArithOp::kEqual: r = x == y ? 1 : 0; break;
      case ArithOp::kMax: r = std::max(x, y); break;
      case ArithOp::kMin: r = std::min(x, y); break;
    }
    return SymInt::Known(r);
  }
  // Identities that keep a symbol.
  if ((op == ArithOp::kAdd || op == ArithOp::kSub) && b.value && *b.value == 0) return a;
  if (op == ArithOp::kAdd && a.value && *a.value == 0) return b;
  if ((op == ArithOp::kMul || op == ArithOp::kDiv) && b.value && *b.value == 1) return a;
  if (op == ArithOp::kMul && a.value && *a.value == 1) return b;
  if (op == ArithOp::kEqual && !a.value && !b.value && !a.symbol.empty() && a.symbol == b.symbol) {
    return SymInt::Known(1);
  }
  // A dim is never negative: it differs from a negative constant (Equal(shape, -1) in Expand patterns).
  if (op == ArithOp::kEqual && ((!a.symbol.empty() && b.value && *b.value < 0) ||
                                (!b.symbol.empty() && a.value && *a.value < 0))) {
    return SymInt::Known(0);
  }
  return SymInt{};
}

void PropagateBinaryValue(InferenceContext& ctx, ArithOp op) {
  const PartialValue* a = ctx.input_value(0);
  const PartialValue* b = ctx.input_value(1);
  if (!a || !b) return;
  const size_t na = a->elems.size(), nb = b->elems.size();
  if (na != nb && na != 1 && nb != 1) return;
  PartialValue out;
  out.scalar = a->scalar && b->scalar;
  const size_t n = std::max(na, nb);
  out.elems.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    auto r = Apply(op, a->elems[na == 1 ? 0 : k], b->elems[nb == 1 ? 0 : k]);
    out.elems.push_back(r ? *r : SymInt{});
  }
  ctx.SetOutputValue(0, std::move(out));
}

// --- shapes ---

void BroadcastAll(InferenceContext& ctx) {
  std::vector<size_t> idx(ctx.num_inputs());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  if (auto s = BroadcastInputs(ctx, idx)) ctx.SetOutputShape(0, std::move(*s));
}

template <ArithOp kOp>
void BroadcastArith(InferenceContext& ctx) {
  BroadcastAll(ctx);
  PropagateBinaryValue(ctx, kOp);
}

template <ArithOp kOp>
void VariadicArith(InferenceContext& ctx) {
  BroadcastAll(ctx);
  if (ctx.num_inputs() == 2) PropagateBinaryValue(ctx, kOp);
  if (ctx.num_inputs() == 1 && ctx.input_value(0)) ctx.SetOutputValue(0, *ctx.input_value(0));
}

// Opset < 7: B is broadcast to A (attribute `broadcast`), or has A's shape.
void LegacyBinary(InferenceContext& ctx) { ctx.PropagateShape(0, 0); }

void Where(InferenceContext& ctx) {
  static constexpr std::array<size_t, 3> kAll{0, 1, 2};
  if (auto s = BroadcastInputs(ctx, kAll)) ctx.SetOutputShape(0, std::move(*s));
  const PartialValue* c = ctx.input_value(0);
  const PartialValue* x = ctx.input_value(1);
  const PartialValue* y = ctx.input_value(2);
  if (!c || !x || !y) return;
  const size_t n = std::max({c->elems.size(), x->elems.size(), y->elems.size()});
  for (const PartialValue* v : {c, x, y}) {
    if (v->elems.size() != n && v->elems.size() != 1) return;
  }
  PartialValue out;
  out.scalar = c->scalar && x->scalar && y->scalar;
  for (size_t k = 0; k < n; ++k) {
    const SymInt& ck = c->elems[c->elems.size() == 1 ? 0 : k];
    if (!ck.value) {
      out.elems.emplace_back();
      continue;
    }
    const PartialValue* pick = *ck.value != 0 ? x : y;
    out.elems.push_back(pick->elems[pick->elems.size() == 1 ? 0 : k]);
  }
  ctx.SetOutputValue(0, std::move(out));
}

void Neg(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  const PartialValue* a = ctx.input_value(0);
  if (!a) return;
  PartialValue out{a->scalar, {}};
  for (const SymInt& e : a->elems) {
    out.elems.push_back(e.value && *e.value != INT64_MIN ? SymInt::Known(-*e.value) : SymInt{});
  }
  ctx.SetOutputValue(0, std::move(out));
}

void Abs(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  const PartialValue* a = ctx.input_value(0);
  if (!a) return;
  PartialValue out{a->scalar, {}};
  for (const SymInt& e : a->elems) {
    if (e.value) {
      out.elems.push_back(*e.value != INT64_MIN ? SymInt::Known(*e.value < 0 ? -*e.value : *e.value) : SymInt{});
    } else {
      out.elems.push_back(e);  // a dim is non-negative
    }
  }
  ctx.SetOutputValue(0, std::move(out));
}

// DynamicQuantizeLinear: y has x's shape, scale and zero point are scalars.
void DynamicQuantizeLinear(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  ctx.SetOutputShape(1, {});
  ctx.SetOutputShape(2, {});
}

}  // namespace

void RegisterElementwiseShapeInference(SchemaRegistry& r) {
  for (const char* op :
       {"Abs",      "Acos",       "Acosh",           "Asin",          "Asinh",       "Atan",
        "Atanh",    "Ceil",       "Celu",            "Cos",           "Cosh",        "Elu",
        "Erf",      "Exp",        "Floor",           "Gelu",          "HardSigmoid", "HardSwish",
        "IsInf",    "IsNaN",      "LeakyRelu",       "Log",           "Mish",        "Neg",
        "Not",      "Reciprocal", "Relu",            "Round",         "Selu",        "Shrink",
        "Sigmoid",  "Sign",       "Sin",             "Sinh",          "Softplus",    "Softsign",
        "Sqrt",     "Tan",        "Tanh",            "ThresholdedRelu", "BitwiseNot", "Swish",
        "Clip",     "PRelu",      "CastLike",        "QuantizeLinear", "DequantizeLinear", "CumSum",
        "CumProd",  "Trilu",      "ReverseSequence"}) {
    r.SetInference("", op, 1, SameShape);
  }
  for (const char* op : {"Binarizer", "Imputer", "LabelEncoder", "Normalizer", "Scaler"}) {
    r.SetInference("ai.onnx.ml", op, 1, SameShape);
  }
  // ONNX Runtime's contrib activations and elementwise fusions: Y like the first input.
  for (const char* op :
       {"Gelu", "BiasGelu", "FastGelu", "QuickGelu", "BiasAdd", "Trilu", "Inverse", "RotaryEmbedding"}) {
    r.SetInference(kMsDomain, op, 1, SameShape);
  }
  r.SetInference("", "Neg", 1, Neg);
  r.SetInference("", "Abs", 1, Abs);
  r.SetInference("", "Dropout", 1, SameShapeAllOutputs);
  r.SetInference("", "DynamicQuantizeLinear", 1, DynamicQuantizeLinear);

  r.SetInference("", "Add", 7, BroadcastArith<ArithOp::kAdd>);
  r.SetInference("", "Sub", 7, BroadcastArith<ArithOp::kSub>);
  r.SetInference("", "Mul", 7, BroadcastArith<ArithOp::kMul>);
  r.SetInference("", "Div", 7, BroadcastArith<ArithOp::kDiv>);
  r.SetInference("", "Mod", 10, BroadcastArith<ArithOp::kMod>);
  r.SetInference("", "Equal", 7, BroadcastArith<ArithOp::kEqual>);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Equal", "Pow", "And", "Or", "Xor", "Greater", "Less"}) {
    r.SetInference("", op, 1, LegacyBinary, 6);
  }
  for (const char* op : {"Pow", "And", "Or", "Xor", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "BitShift",
                         "BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    r.SetInference("", op, 7, BroadcastAll);
  }
  r.SetInference("", "Max", 1, VariadicArith<ArithOp::kMax>);
  r.SetInference("", "Min", 1, VariadicArith<ArithOp::kMin>);
  r.SetInference("", "Sum", 1, VariadicArith<ArithOp::kAdd>);
  r.SetInference("", "Mean", 1, BroadcastAll);
  r.SetInference("", "Where", 1, Where);
}

}  // namespace ferry::schemas
