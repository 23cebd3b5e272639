// The basic tensor-sequence ops: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
// SequenceLength. Tensors entering or leaving a sequence are deep-copied, so sequence elements never share a
// buffer with an executor-owned tensor.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

const TensorSequence& RequireSequence(const KernelContext& ctx, int i) {
  const Value* v = ctx.input_value(i);
  if (!v) throw InvalidModelError(ctx.Describe() + ": required input " + std::to_string(i) + " is missing");
  if (!v->is_sequence()) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + std::to_string(i) + " must be a sequence, got " +
                               ValueKindName(*v));
  }
  return v->sequence();
}

// Reads the scalar position input `i`; returns `def` when it is omitted.
int64_t ReadPosition(const KernelContext& ctx, int i, int64_t def) {
  const Tensor* t = ctx.input(i);
  if (!t) return def;
  const std::vector<int64_t> v = ReadInt64s(*t, ctx.Describe() + ": input 'position'");
  if (v.size() != 1) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'position' must be a scalar, got shape " +
                               ShapeToString(t->shape()));
  }
  return v[0];
}

// Normalises `pos` into [0, n) (or [0, n] when `allow_end`); throws InvalidArgumentError otherwise.
int64_t NormalizePosition(const KernelContext& ctx, int64_t pos, int64_t n, bool allow_end) {
  const int64_t p = pos < 0 ? pos + n : pos;
  if (p < 0 || p > n || (p == n && !allow_end)) {
    throw InvalidArgumentError(ctx.Describe() + ": position " + std::to_string(pos) +
                               " is out of range for a sequence of " + std::to_string(n) + " tensors (allowed [" +
                               std::to_string(-n) + ", " + std::to_string(allow_end ? n : n - 1) + "])");
  }
  return p;
}

void CheckElemType(const KernelContext& ctx, const TensorSequence& seq, const Tensor& t) {
  if (seq.elem_type != DataType::kUndefined && t.dtype() != seq.elem_type) {
    throw InvalidArgumentError(ctx.Describe() + ": tensor of type " + std::string(DataTypeName(t.dtype())) +
                               " cannot join a sequence of " + std::string(DataTypeName(seq.elem_type)));
  }
}

class SequenceEmpty : public OpKernel {
 public:
  explicit SequenceEmpty(const ir::Node& node) {
    const int64_t dt = node.GetInt("dtype", static_cast<int64_t>(DataType::kFloat));
    if (dt <= 0 || dt > kMaxDataTypeValue || !IsKnownDataType(static_cast<int32_t>(dt))) {
      throw InvalidModelError(node.Describe() + ": attribute 'dtype' " + std::to_string(dt) + " is not a data type");
    }
    dtype_ = static_cast<DataType>(dt);
  }
  void Compute(KernelContext& ctx) const override {
    TensorSequence s;
    s.elem_type = dtype_;
    ctx.SetOutput(0, Value(std::move(s)));
  }

 private:
  DataType dtype_;
};

class SequenceConstruct : public OpKernel {
 public:
  explicit SequenceConstruct(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    TensorSequence s;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const Tensor& t = ctx.required_input(i);
      if (i == 0) s.elem_type = t.dtype();
      CheckElemType(ctx, s, t);
      s.tensors.push_back(t.Clone());
    }
    ctx.SetOutput(0, Value(std::move(s)));
  }
};

class SequenceInsert : public OpKernel {
 public:
  explicit SequenceInsert(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const TensorSequence& in = RequireSequence(ctx, 0);
    const Tensor& t = ctx.required_input(1);
    CheckElemType(ctx, in, t);
    const auto n = static_cast<int64_t>(in.tensors.size());
    const int64_t pos = NormalizePosition(ctx, ReadPosition(ctx, 2, n), n, true);
    TensorSequence out;
    out.elem_type = in.elem_type == DataType::kUndefined ? t.dtype() : in.elem_type;
    out.tensors.reserve(in.tensors.size() + 1);
    out.tensors.insert(out.tensors.end(), in.tensors.begin(), in.tensors.begin() + pos);
    out.tensors.push_back(t.Clone());
    out.tensors.insert(out.tensors.end(), in.tensors.begin() + pos, in.tensors.end());
    ctx.SetOutput(0, Value(std::move(out)));
  }
};

class SequenceAt : public OpKernel {
 public:
  explicit SequenceAt(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const TensorSequence& in = RequireSequence(ctx, 0);
    if (!ctx.input(1)) throw InvalidModelError(ctx.Describe() + ": required input 'position' is missing");
    const auto n = static_cast<int64_t>(in.tensors.size());
    const int64_t pos = NormalizePosition(ctx, ReadPosition(ctx, 1, 0), n, false);
    ctx.SetOutput(0, Value(in.tensors[static_cast<size_t>(pos)].Clone()));
  }
};

class SequenceErase : public OpKernel {
 public:
  explicit SequenceErase(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const TensorSequence& in = RequireSequence(ctx, 0);
    const auto n = static_cast<int64_t>(in.tensors.size());
    const int64_t pos = NormalizePosition(ctx, ReadPosition(ctx, 1, -1), n, false);
    TensorSequence out;
    out.elem_type = in.elem_type;
    out.tensors = in.tensors;
    out.tensors.erase(out.tensors.begin() + pos);
    ctx.SetOutput(0, Value(std::move(out)));
  }
};

class SequenceLength : public OpKernel {
 public:
  explicit SequenceLength(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const TensorSequence& in = RequireSequence(ctx, 0);
    ctx.Output(0, DataType::kInt64, {}).data<int64_t>()[0] = static_cast<int64_t>(in.tensors.size());
  }
};

}  // namespace

void RegisterSequenceKernels(KernelRegistry& r) {
  // All introduced in opset 11; later opsets only widened the element types.
  const std::vector<DataType> all = dtypes::All();
  const std::vector<DataType> index = {DataType::kInt32, DataType::kInt64};
  r.Add({.op = "SequenceEmpty", .since = 11, .types = {{"S", all}}, .create = MakeKernel<SequenceEmpty>});
  r.Add({.op = "SequenceConstruct",
         .since = 11,
         .types = {{"T", all}, {"S", all}},
         .create = MakeKernel<SequenceConstruct>});
  r.Add({.op = "SequenceInsert",
         .since = 11,
         .types = {{"S", all}, {"T", all}, {"I", index}},
         .create = MakeKernel<SequenceInsert>});
  r.Add({.op = "SequenceAt",
         .since = 11,
         .types = {{"S", all}, {"T", all}, {"I", index}},
         .create = MakeKernel<SequenceAt>});
  r.Add({.op = "SequenceErase", .since = 11, .types = {{"S", all}, {"I", index}}, .create = MakeKernel<SequenceErase>});
  r.Add({.op = "SequenceLength",
         .since = 11,
         .types = {{"S", all}, {"I", {DataType::kInt64}}},
         .create = MakeKernel<SequenceLength>});
}

}  // namespace ferry::ref
