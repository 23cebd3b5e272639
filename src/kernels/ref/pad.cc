// Pad: grows (or, with negative pads, crops) each dimension by pads[begin] / pads[end]. Modes: constant (the
// value), edge (repeat the border), reflect (mirror without repeating the border), wrap (periodic, opset 19+).
// Opset 1 reads `paddings`/`value` attributes, opsets 2-10 `pads`/`value`; opset 11+ inputs pads,
// constant_value and (opset 18+) axes.
#include <algorithm>
#include <cmath>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::ref {

PadMode ReadPadMode(const ir::Node& node) {
  const std::string mode = node.GetString("mode", "constant");
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "wrap") return PadMode::kWrap;
  throw InvalidModelError(node.Describe() + ": unknown mode '" + mode + "'");
}

int64_t PadSourceIndex(PadMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kEdge:
      return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kWrap:
      return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = ((i % period) + period) % period;
      return m >= n ? period - m : m;
    }
    case PadMode::kConstant:
      break;
  }
  return -1;
}

PadShape ResolvePad(const Tensor& x, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                    const std::string& what) {
  const int64_t rank = x.rank();
  const size_t m = axes.size();
  if (pads.size() != 2 * m) {
    throw InvalidArgumentError(what + ": pads " + ShapeToString(pads) + " must have 2 entries per padded axis (" +
                               std::to_string(m) + " axes of input " + DescribeTensor(x) + ")");
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < m; ++i) {
    const auto a = static_cast<size_t>(NormalizeAxis(axes[i], rank, what + ": input 'axes'"));
    if (seen[a]) throw InvalidArgumentError(what + ": axis " + std::to_string(axes[i]) + " is listed twice");
    seen[a] = true;
    begin[a] = pads[i];
    end[a] = pads[i + m];
  }
  Shape out_shape(static_cast<size_t>(rank));
  for (size_t d = 0; d < out_shape.size(); ++d) {
    int64_t v = 0;
    if (__builtin_add_overflow(x.shape()[d], begin[d], &v) || __builtin_add_overflow(v, end[d], &v) || v < 0) {
      throw InvalidArgumentError(what + ": pads " + ShapeToString(pads) + " give a negative or overflowing size " +
                                 "for dimension " + std::to_string(d) + " of input " + DescribeTensor(x));
    }
    out_shape[d] = v;
  }
  return {std::move(begin), std::move(out_shape)};
}

namespace {

class Pad : public OpKernel {
 public:
  explicit Pad(const ir::Node& node) : opset_(node.opset()), mode_(ReadPadMode(node)) {
    if (opset_ < 11) {
      const char* name = opset_ < 2 ? "paddings" : "pads";
      node.RequireAttr(name);
      attr_pads_ = node.GetInts(name);
      attr_value_ = node.GetFloat("value", 0.0f);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    const int64_t rank = x.rank();
    std::vector<int64_t> pads = attr_pads_;
    std::vector<int64_t> axes;
    if (opset_ >= 11) {
      pads = ReadInt64s(ctx.required_input(1), what + ": input 'pads'");
      if (const Tensor* a = ctx.input(3)) axes = ReadInt64s(*a, what + ": input 'axes'");
    }
    if (axes.empty() && !(opset_ >= 11 && ctx.input(3))) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const PadShape ps = ResolvePad(x, pads, axes, what);
    const std::vector<int64_t>& begin = ps.begin;
    const Shape& out_shape = ps.out_shape;
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    if (mode_ == PadMode::kConstant) {
      Tensor value = ConstantValue(ctx, x.dtype());
      CopyShifted(x, y, begin, value.defined() ? &value : nullptr, ctx.threads());
      return;
    }
    if (y.size() == 0) return;
    for (int64_t d = 0; d < rank; ++d) {
      if (x.dim(d) == 0) {
        throw InvalidArgumentError(what + ": cannot pad empty dimension " + std::to_string(d) + " of input " +
                                   DescribeTensor(x) + " in a non-constant mode");
      }
    }
    // Per dimension, the source offset of every output index.
    const std::vector<int64_t> in_strides = Strides(x.shape());
    std::vector<std::vector<int64_t>> offs(static_cast<size_t>(rank));
    for (size_t d = 0; d < offs.size(); ++d) {
      offs[d].resize(static_cast<size_t>(out_shape[d]));
      for (int64_t o = 0; o < out_shape[d]; ++o) {
        offs[d][static_cast<size_t>(o)] = PadSourceIndex(mode_, o - begin[d], x.shape()[d]) * in_strides[d];
      }
    }
    DispatchElements(x.dtype(), what, [&](auto acc) {
      using A = decltype(acc);
      if (rank == 0) {
        A::Set(y.raw_data(), 0, A::Get(x.raw_data(), 0));
        return;
      }
      const size_t last = static_cast<size_t>(rank - 1);
      const int64_t inner = out_shape[last];
      std::vector<int64_t> cnt(last, 0);
      const int64_t rows = y.size() / inner;
      for (int64_t row = 0; row < rows; ++row) {
        int64_t base = 0;
        for (size_t d = 0; d < last; ++d) base += offs[d][static_cast<size_t>(cnt[d])];
        for (int64_t o = 0; o < inner; ++o) {
          A::Set(y.raw_data(), row * inner + o, A::Get(x.raw_data(), base + offs[last][static_cast<size_t>(o)]));
        }
        for (size_t d = last; d-- > 0;) {
          if (++cnt[d] < out_shape[d]) break;
          cnt[d] = 0;
        }
      }
    });
  }

 private:
  // The constant fill value as a one-element tensor of `dtype` (undefined: leave the zero-initialised output).
  Tensor ConstantValue(KernelContext& ctx, DataType dtype) const {
    if (opset_ >= 11) {
      const Tensor* v = ctx.input(2);
      if (!v || v->size() == 0) return {};
      if (v->dtype() != dtype) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'constant_value' " + DescribeTensor(*v) +
                                   " must have the data type of input 'data' (" + std::string(DataTypeName(dtype)) +
                                   ")");
      }
      return *v;
    }
    if (attr_value_ == 0.0f && !std::signbit(attr_value_)) return {};
    Tensor t(dtype, {1});
    Dispatch(NumericTypes{}, dtype, ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      t.data<T>()[0] = static_cast<T>(static_cast<Acc<T>>(attr_value_));
    });
    return t;
  }

  int64_t opset_;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> attr_pads_;
  float attr_value_ = 0.0f;
};

}  // namespace

void RegisterPadKernels(KernelRegistry& r) {
  r.Add({.op = "Pad", .since = 1, .until = 10, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Pad>});
  r.Add({.op = "Pad", .since = 11, .types = {{"T", dtypes::All()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Pad>, .host_inputs = {1, 2, 3}});
}

}  // namespace ferry::ref
