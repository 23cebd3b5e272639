// MaxUnpool: scatters X into a zero tensor at the flat indices I (as produced by MaxPool) of the inferred shape
// [N, C, (in-1)·stride + kernel - pad_begin - pad_end, ...]. With the optional output_shape input, that block is
// placed at the origin of an output of that shape (the ONNX reference semantics). Prepare resolves the inferred shape
// and, when output_shape is absent or known before the run, Y's; otherwise Y is dynamic and Compute reads it.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Y's shape from the output_shape input (its data); throws InvalidArgumentError naming `what` for a shape of
// another rank than X's or with a negative dim.
Shape ResolveOutputShape(const Tensor& shape_t, size_t rank, const std::string& what) {
  Shape y_shape = ReadInt64s(shape_t, what + " input output_shape");
  if (y_shape.size() != rank) {
    throw InvalidArgumentError(what + ": output_shape " + ShapeToString(y_shape) + " must have rank " +
                               std::to_string(rank));
  }
  for (int64_t d : y_shape) {
    if (d < 0) throw InvalidArgumentError(what + ": output_shape " + ShapeToString(y_shape) + " is negative");
  }
  return y_shape;
}

// The shape the indices address, and Y's shape when it is known before the run (no output_shape input, or a
// constant one).
struct UnpoolPlan {
  Shape inferred;
  Shape y_shape;
  bool y_known = false;
};

class MaxUnpool : public OpKernel {
 public:
  explicit MaxUnpool(const ir::Node& node) : attrs_(WindowAttrs::FromNode(node)) {
    if (attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& ind = ctx.tensor_input(1);
    if (x.shape.size() < 3) {
      throw InvalidArgumentError(ctx.Describe() + ": input X must have rank >= 3, got shape " +
                                 ShapeToString(x.shape) + " (" + ctx.InputString(0) + ")");
    }
    if (ind.shape != x.shape || ind.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": indices I must be int64 with X's shape " +
                                 ShapeToString(x.shape) + ", got " + ShapeToString(ind.shape) + " (" +
                                 ctx.InputString(1) + ")");
    }
    const std::string what = ctx.Describe();
    const size_t rank = x.shape.size() - 2;
    // The inferred shape [N, C, (in-1)*stride + kernel - pads]: the indices address this shape.
    const std::vector<int64_t> kernel = SpatialAttr(attrs_.kernel_shape, rank, 1, "kernel_shape", what);
    const std::vector<int64_t> strides = SpatialAttr(attrs_.strides, rank, 1, "strides", what);
    const std::vector<int64_t> pads = attrs_.pads.empty() ? std::vector<int64_t>(2 * rank, 0) : attrs_.pads;
    if (pads.size() != 2 * rank) {
      throw InvalidArgumentError(what + ": pads " + IntsToString(pads) + " must have " + std::to_string(2 * rank) +
                                 " values");
    }
    UnpoolPlan p;
    p.inferred = {x.shape[0], x.shape[1]};
    for (size_t d = 0; d < rank; ++d) {
      const std::optional<int64_t> v =
          semantics::MaxUnpoolOutputDim(x.shape[d + 2], kernel[d], strides[d], pads[d], pads[d + rank]);
      if (!v || *v < 0) {
        throw InvalidArgumentError(what + ": the output extent of spatial dim " + std::to_string(d) +
                                   " would be negative");
      }
      p.inferred.push_back(*v);
    }
    if (!ctx.has_input(2)) {
      p.y_shape = p.inferred;
      p.y_known = true;
    } else {
      const InputSpec& shape = ctx.tensor_input(2);
      if (shape.dtype != DataType::kInt64 && shape.dtype != DataType::kInt32) {
        throw InvalidArgumentError(what + " input output_shape: expected an int32 or int64 tensor, got " +
                                   std::string(DataTypeName(shape.dtype)));
      }
      if (const Tensor* known = ctx.constant(2)) {
        p.y_shape = ResolveOutputShape(*known, x.shape.size(), what);
        p.y_known = true;
      }
    }
    const UnpoolPlan& plan = ctx.EmplaceState(std::move(p));
    if (plan.y_known) {
      ctx.SetOutput(0, x.dtype, plan.y_shape);
    } else {
      ctx.SetOutputDynamic(0);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& ind = ctx.required_input(1);
    const UnpoolPlan& plan = ctx.state<UnpoolPlan>();
    const Shape& inferred = plan.inferred;
    // An output_shape read from the run's data: its errors are the data's (they name the node).
    const Shape y_shape =
        plan.y_known ? plan.y_shape : ResolveOutputShape(ctx.required_input(2), x.shape().size(), ctx.Describe());
    Tensor& y = plan.y_known ? ctx.Output(0) : ctx.Output(0, x.dtype(), y_shape);
    const int64_t* ip = ind.data<int64_t>();
    const int64_t inferred_size = ShapeElementCount(inferred);
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.data<T>();
      // Scatter into the inferred shape, then (as the ONNX reference does) place that block at the origin of a
      // differently sized output_shape, cropping what does not fit.
      const bool direct = y_shape == inferred;
      std::vector<T> tmp(direct ? 0 : static_cast<size_t>(inferred_size));
      T* dst = direct ? y.data<T>() : tmp.data();
      for (int64_t i = 0; i < x.size(); ++i) {
        if (ip[i] < 0 || ip[i] >= inferred_size) {
          throw InvalidArgumentError(ctx.Describe() + ": index " + std::to_string(ip[i]) +
                                     " in I is out of range for shape " + ShapeToString(inferred));
        }
        dst[ip[i]] = xp[i];
      }
      if (direct || y.size() == 0) return;
      const size_t r = inferred.size();
      const int64_t inner = std::min(inferred[r - 1], y_shape[r - 1]);
      int64_t outer = 1;
      for (size_t d = 0; d + 1 < r; ++d) outer *= std::min(inferred[d], y_shape[d]);
      T* yp = y.data<T>();
      for (int64_t q = 0; q < outer; ++q) {
        int64_t rem = q, src = 0, out = 0, src_mul = inferred[r - 1], out_mul = y_shape[r - 1];
        for (size_t d = r - 1; d-- > 0;) {
          const int64_t ext = std::min(inferred[d], y_shape[d]);
          const int64_t c = rem % ext;
          rem /= ext;
          src += c * src_mul;
          out += c * out_mul;
          src_mul *= inferred[d];
          out_mul *= y_shape[d];
        }
        std::copy_n(tmp.data() + src, inner, yp + out);
      }
    });
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

void RegisterMaxUnpoolKernels(KernelRegistry& r) {
  r.Add({.op = "MaxUnpool",
         .since = 9,
         .types = {{"T1", dtypes::Floats()}, {"T2", {DataType::kInt64}}},
         .create = MakeKernel<MaxUnpool>,
         .host_inputs = {2}});
}

}  // namespace ferry::ref
