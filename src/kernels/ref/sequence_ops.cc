// The basic tensor-sequence ops: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
// SequenceLength. Tensors entering or leaving a sequence are deep-copied, so sequence elements never share a
// buffer with an executor-owned tensor. Prepare checks the tensor inputs (the element tensor, a position's dtype
// and size) and that a sequence input is not a tensor; a sequence's contents (and the positions' values) are the
// run's data, checked by Compute. Outputs that are sequences, and SequenceAt's element, are dynamic.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Prepare's check of sequence input i: given, and not a tensor (what else it holds is the run's data).
void CheckSequenceInput(const PrepareContext& ctx, int i) {
  const InputSpec& s = ctx.input(i);
  if (!ctx.node().input(static_cast<size_t>(i))) {
    throw InvalidModelError(ctx.Describe() + ": required input " + std::to_string(i) + " is missing");
  }
  if (s.is_tensor()) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + std::to_string(i) + " must be a sequence, got a tensor (" +
                               ctx.InputString(i) + ")");
  }
}

// Sequence input i (Prepare checked that it is given).
const TensorSequence& RequireSequence(const KernelContext& ctx, int i) {
  const Value* v = ctx.input_value(i);
  if (!v->is_sequence()) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + std::to_string(i) + " must be a sequence, got " +
                               ValueKindName(*v));
  }
  return v->sequence();
}

// Prepare's check of the position input `i`, when given: an int32 or int64 tensor of one element.
void CheckPosition(const PrepareContext& ctx, int i) {
  if (!ctx.has_input(i)) return;
  const InputSpec& t = ctx.tensor_input(i);
  if (t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'position': expected an int32 or int64 tensor, got " +
                               ctx.InputString(i));
  }
  if (ShapeElementCount(t.shape) != 1) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'position' must be a scalar, got shape " +
                               ShapeToString(t.shape) + " (" + ctx.InputString(i) + ")");
  }
}

// Reads the scalar position input `i` (checked by CheckPosition); returns `def` when it is omitted.
int64_t ReadPosition(const KernelContext& ctx, int i, int64_t def) {
  const Tensor* t = ctx.input(i);
  if (!t) return def;
  return t->dtype() == DataType::kInt64 ? t->data<int64_t>()[0] : static_cast<int64_t>(t->data<int32_t>()[0]);
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

// A tensor of type `t` joining a sequence of `elem_type` (kUndefined: any).
template <typename Ctx>
void CheckElemType(const Ctx& ctx, DataType elem_type, DataType t) {
  if (elem_type != DataType::kUndefined && t != elem_type) {
    throw InvalidArgumentError(ctx.Describe() + ": tensor of type " + std::string(DataTypeName(t)) +
                               " cannot join a sequence of " + std::string(DataTypeName(elem_type)));
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
  void Prepare(PrepareContext& ctx) const override { ctx.SetOutputDynamic(0); }
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
  // Every input a tensor of input 0's type.
  void Prepare(PrepareContext& ctx) const override {
    for (int i = 0; i < ctx.input_count(); ++i) {
      const InputSpec& t = ctx.tensor_input(i);
      CheckElemType(ctx, ctx.tensor_input(0).dtype, t.dtype);
    }
    ctx.SetOutputDynamic(0);
  }
  void Compute(KernelContext& ctx) const override {
    TensorSequence s;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const Tensor& t = ctx.required_input(i);
      if (i == 0) s.elem_type = t.dtype();
      s.tensors.push_back(t.Clone());
    }
    ctx.SetOutput(0, Value(std::move(s)));
  }
};

class SequenceInsert : public OpKernel {
 public:
  explicit SequenceInsert(const ir::Node&) {}
  void Prepare(PrepareContext& ctx) const override {
    CheckSequenceInput(ctx, 0);
    ctx.tensor_input(1);
    CheckPosition(ctx, 2);
    ctx.SetOutputDynamic(0);
  }
  void Compute(KernelContext& ctx) const override {
    const TensorSequence& in = RequireSequence(ctx, 0);
    const Tensor& t = ctx.required_input(1);
    CheckElemType(ctx, in.elem_type, t.dtype());  // the sequence's type is the run's data
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
  // The element's type and shape are the sequence's data: dynamic.
  void Prepare(PrepareContext& ctx) const override {
    CheckSequenceInput(ctx, 0);
    if (!ctx.has_input(1)) throw InvalidModelError(ctx.Describe() + ": required input 'position' is missing");
    CheckPosition(ctx, 1);
    ctx.SetOutputDynamic(0);
  }
  void Compute(KernelContext& ctx) const override {
    const TensorSequence& in = RequireSequence(ctx, 0);
    const auto n = static_cast<int64_t>(in.tensors.size());
    const int64_t pos = NormalizePosition(ctx, ReadPosition(ctx, 1, 0), n, false);
    ctx.SetOutput(0, Value(in.tensors[static_cast<size_t>(pos)].Clone()));
  }
};

class SequenceErase : public OpKernel {
 public:
  explicit SequenceErase(const ir::Node&) {}
  void Prepare(PrepareContext& ctx) const override {
    CheckSequenceInput(ctx, 0);
    CheckPosition(ctx, 1);
    ctx.SetOutputDynamic(0);
  }
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
  void Prepare(PrepareContext& ctx) const override {
    CheckSequenceInput(ctx, 0);
    ctx.SetOutput(0, DataType::kInt64, {});
  }
  void Compute(KernelContext& ctx) const override {
    const TensorSequence& in = RequireSequence(ctx, 0);
    ctx.Output(0).data<int64_t>()[0] = static_cast<int64_t>(in.tensors.size());
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
