#include "kernels/kernel.h"

namespace ferry {

bool KernelContext::has_input(int i) const {
  const Value* v = input_value(i);
  return v && !v->is_none();
}

const Tensor* KernelContext::input(int i) const {
  const Value* v = input_value(i);
  if (!v || v->is_none()) return nullptr;
  if (!v->is_tensor()) {
    throw InvalidArgumentError(Describe() + ": input " + std::to_string(i) + " must be a tensor, got a sequence");
  }
  return &v->tensor();
}

const Tensor& KernelContext::required_input(int i) const {
  const Tensor* t = input(i);
  if (!t) throw InvalidModelError(Describe() + ": required input " + std::to_string(i) + " is missing");
  return *t;
}

Tensor& KernelContext::Output(int i, DataType dtype, Shape shape) {
  if (i >= output_count()) {
    throw InternalError(Describe() + ": kernel wrote output " + std::to_string(i) + " which is not requested");
  }
  auto& slot = outputs_[static_cast<size_t>(i)];
  Tensor t;
  if (allocator_ && dtype != DataType::kString && allocator_->Allocate(i, dtype, shape, /*zero=*/true, &t)) {
    slot = Value(std::move(t));
  } else {
    slot = Value(Tensor(dtype, std::move(shape)));
  }
  return slot.tensor();
}

Tensor& KernelContext::OutputUninitialized(int i, DataType dtype, Shape shape) {
  if (i >= output_count()) {
    throw InternalError(Describe() + ": kernel wrote output " + std::to_string(i) + " which is not requested");
  }
  auto& slot = outputs_[static_cast<size_t>(i)];
  Tensor t;
  if (allocator_ && dtype != DataType::kString && allocator_->Allocate(i, dtype, shape, /*zero=*/false, &t)) {
    slot = Value(std::move(t));
  } else {
    slot = Value(Tensor::Uninitialized(dtype, std::move(shape)));
  }
  return slot.tensor();
}

Tensor* KernelContext::ReuseInput(int k, int i, DataType dtype, const Shape& shape) {
  if (k < 0 || static_cast<size_t>(k) >= reusable_.size() || !reusable_[static_cast<size_t>(k)] || i >= output_count()) {
    return nullptr;
  }
  const Value* in = input_value(k);
  if (!in || !in->is_tensor()) return nullptr;
  const Tensor& t = in->tensor();
  if (t.dtype() != dtype || t.size() != ShapeElementCount(shape) || !t.buffer_unique()) return nullptr;
  auto& slot = outputs_[static_cast<size_t>(i)];
  slot = Value(t.Reshaped(shape));
  return &slot.tensor();
}

void KernelContext::MissingState() const {
  throw InternalError(Describe() + ": the kernel ran without the state its Prepare makes (was it prepared?)");
}

const OutputSpec& KernelContext::PreparedTensor(int i) const {
  const OutputSpec* o = prepared_output(i);
  if (!o || !o->is_tensor()) {
    throw InternalError(Describe() + ": output " + std::to_string(i) + " was not prepared with a dtype and shape");
  }
  return *o;
}

Tensor& KernelContext::Output(int i) {
  const OutputSpec& o = PreparedTensor(i);
  return Output(i, o.dtype, o.shape);
}

Tensor& KernelContext::OutputUninitialized(int i) {
  const OutputSpec& o = PreparedTensor(i);
  return OutputUninitialized(i, o.dtype, o.shape);
}

void KernelContext::SetOutput(int i, Value v) {
  if (i >= output_count()) {
    throw InternalError(Describe() + ": kernel set output " + std::to_string(i) + " which is not requested");
  }
  outputs_[static_cast<size_t>(i)] = std::move(v);
}

}  // namespace ferry
