// Reshape, Flatten, Squeeze, Unsqueeze, Identity: ops that only change the shape. The output is a view that
// shares the input's buffer (Tensor::Reshaped), so they copy nothing and serve every data type, strings
// included. Shape and axes inputs are read on the host. Semantics and errors follow the ref kernels.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using ref::DescribeTensor;
using ref::NormalizeAxis;
using ref::ReadInt64s;

// Resolves a Reshape target: 0 copies the input dimension (unless allowzero), one -1 is inferred.
Shape ResolveShape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero, const std::string& what) {
  Shape out(spec.size());
  int64_t infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (v == -1) {
      if (infer >= 0) throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (v < -1) throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " has a negative dimension");
    if (v == 0 && !allowzero) {
      if (i >= in.size()) {
        throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " copies dimension " + std::to_string(i) +
                                   " (0) but the input " + ShapeToString(in) + " has rank " +
                                   std::to_string(in.size()));
      }
      v = in[i];
    }
    out[i] = v;
    if (__builtin_mul_overflow(known, v, &known)) {
      throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " overflows int64");
    }
  }
  const int64_t total = ShapeElementCount(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      throw InvalidArgumentError(what + ": cannot reshape " + ShapeToString(in) + " to " + ShapeToString(spec));
    }
    out[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    throw InvalidArgumentError(what + ": cannot reshape " + ShapeToString(in) + " (" + std::to_string(total) +
                               " elements) to " + ShapeToString(out));
  }
  return out;
}

class Reshape : public OpKernel {
 public:
  explicit Reshape(const ir::Node& node) : allowzero_(node.GetInt("allowzero", 0) != 0), from_attr_(node.opset() < 5) {
    if (from_attr_) attr_shape_ = node.GetInts("shape");
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<int64_t> spec;
    if (from_attr_) {
      spec = attr_shape_;
    } else {
      const Tensor& s = ctx.required_input(1);
      if (s.rank() != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'shape' must be 1-D, got " + DescribeTensor(s));
      }
      spec = ReadInt64s(s, ctx.Describe() + ": input 'shape'");
    }
    ctx.SetOutput(0, Value(x.Reshaped(ResolveShape(x.shape(), spec, allowzero_, ctx.Describe()))));
  }

 private:
  bool allowzero_;
  bool from_attr_;
  std::vector<int64_t> attr_shape_;
};

class Flatten : public OpKernel {
 public:
  explicit Flatten(const ir::Node& node) : axis_(node.GetInt("axis", 1)) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank) {
      throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(axis_) + " is out of range for rank " +
                                 std::to_string(rank));
    }
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.dim(i);
    ctx.SetOutput(0, Value(x.Reshaped({outer, inner})));
  }

 private:
  int64_t axis_;
};

// Axes from the attribute (before opset 13) or from input 1 (opset 13+; optional for Squeeze).
std::vector<int64_t> ReadAxes(KernelContext& ctx, bool from_input, bool required, const std::vector<int64_t>& attr) {
  if (!from_input) return attr;
  const Tensor* a = required ? &ctx.required_input(1) : ctx.input(1);
  if (!a) return {};
  if (a->rank() > 1) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'axes' must be 1-D, got " + DescribeTensor(*a));
  }
  return ReadInt64s(*a, ctx.Describe() + ": input 'axes'");
}

class Squeeze : public OpKernel {
 public:
  explicit Squeeze(const ir::Node& node) : axes_from_input_(node.opset() >= 13) {
    if (!axes_from_input_ && node.has_attr("axes")) axes_ = node.GetInts("axes");
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::vector<int64_t> axes = ReadAxes(ctx, axes_from_input_, false, axes_);
    const int64_t rank = x.rank();
    std::vector<bool> drop(static_cast<size_t>(rank), false);
    if (axes.empty()) {
      for (int64_t i = 0; i < rank; ++i) drop[static_cast<size_t>(i)] = x.dim(i) == 1;
    }
    for (int64_t a : axes) {
      const int64_t n = NormalizeAxis(a, rank, ctx.Describe() + ": input 'axes'");
      if (x.dim(n) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": cannot squeeze axis " + std::to_string(a) + " of shape " +
                                   ShapeToString(x.shape()) + ": its size is not 1");
      }
      if (drop[static_cast<size_t>(n)]) {
        throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(a) + " is listed more than once");
      }
      drop[static_cast<size_t>(n)] = true;
    }
    Shape out;
    for (int64_t i = 0; i < rank; ++i) {
      if (!drop[static_cast<size_t>(i)]) out.push_back(x.dim(i));
    }
    ctx.SetOutput(0, Value(x.Reshaped(std::move(out))));
  }

 private:
  bool axes_from_input_;
  std::vector<int64_t> axes_;
};

class Unsqueeze : public OpKernel {
 public:
  explicit Unsqueeze(const ir::Node& node) : axes_from_input_(node.opset() >= 13) {
    if (!axes_from_input_) axes_ = node.GetInts("axes");
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::vector<int64_t> axes = ReadAxes(ctx, axes_from_input_, true, axes_);
    const int64_t out_rank = x.rank() + static_cast<int64_t>(axes.size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : axes) {
      const int64_t n = NormalizeAxis(a, out_rank, ctx.Describe() + ": input 'axes'");
      if (inserted[static_cast<size_t>(n)]) {
        throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(a) + " is listed more than once");
      }
      inserted[static_cast<size_t>(n)] = true;
    }
    Shape out(static_cast<size_t>(out_rank), 1);
    int64_t k = 0;
    for (int64_t i = 0; i < out_rank; ++i) {
      if (!inserted[static_cast<size_t>(i)]) out[static_cast<size_t>(i)] = x.dim(k++);
    }
    ctx.SetOutput(0, Value(x.Reshaped(std::move(out))));
  }

 private:
  bool axes_from_input_;
  std::vector<int64_t> axes_;
};

// Passes the input value (tensor, sequence or optional) through, sharing buffers.
class Identity : public OpKernel {
 public:
  explicit Identity(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    ctx.SetOutput(0, v ? *v : Value());
  }
};

}  // namespace

void RegisterViewKernels(KernelRegistry& r) {
  const std::vector<DataType> all = dtypes::All();
  r.Add({.op = "Reshape", .since = 1, .until = 4, .types = {{"T", all}}, .create = MakeKernel<Reshape>,
         .name = "cpu.any_reshape__view.1"});
  r.Add({.op = "Reshape", .since = 5, .types = {{"T", all}}, .create = MakeKernel<Reshape>, .host_inputs = {1},
         .name = "cpu.any_reshape__view.5"});
  r.Add({.op = "Flatten", .since = 1, .types = {{"T", all}}, .create = MakeKernel<Flatten>,
         .name = "cpu.any_flatten__view.1"});
  r.Add({.op = "Squeeze", .since = 1, .until = 12, .types = {{"T", all}}, .create = MakeKernel<Squeeze>,
         .name = "cpu.any_squeeze__view.1"});
  r.Add({.op = "Squeeze", .since = 13, .types = {{"T", all}}, .create = MakeKernel<Squeeze>, .host_inputs = {1},
         .name = "cpu.any_squeeze__view.13"});
  r.Add({.op = "Unsqueeze", .since = 1, .until = 12, .types = {{"T", all}}, .create = MakeKernel<Unsqueeze>,
         .name = "cpu.any_unsqueeze__view.1"});
  r.Add({.op = "Unsqueeze", .since = 13, .types = {{"T", all}}, .create = MakeKernel<Unsqueeze>,
         .host_inputs = {1}, .name = "cpu.any_unsqueeze__view.13"});
  r.Add({.op = "Identity", .since = 1, .types = {{"T", all}, {"V", all}}, .create = MakeKernel<Identity>,
         .name = "cpu.any_identity__view.1"});
}

}  // namespace ferry::cpu
