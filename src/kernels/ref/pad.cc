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
  // com.microsoft::Pad reads its inputs as ONNX Pad-11 does (pads [2 * rank] or [1, 2 * rank], value).
  explicit Pad(const ir::Node& node)
      : opset_(node.domain() == "com.microsoft" ? 11 : node.opset()), mode_(ReadPadMode(node)) {
    if (opset_ < 11) {
      const char* name = opset_ < 2 ? "paddings" : "pads";
      node.RequireAttr(name);
      attr_pads_ = node.GetInts(name);
      attr_value_ = node.GetFloat("value", 0.0f);
    }
  }

  // The output shape and source offsets when the pads (and axes) are known: attributes before opset 11, constant
  // inputs after; dynamic otherwise (Compute resolves them from the data).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (mode_ == PadMode::kConstant && opset_ >= 11 && ctx.has_input(2)) {
      const InputSpec& v = ctx.tensor_input(2);
      if (ShapeElementCount(v.shape) > 0 && v.dtype != x.dtype) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'constant_value' " + std::string(DataTypeName(v.dtype)) +
                                   ShapeToString(v.shape) + " must have the data type of input 'data' (" +
                                   std::string(DataTypeName(x.dtype)) + ")");
      }
    }
    const Tensor shape_only = Tensor::Wrap(x.dtype, x.shape, nullptr, nullptr);
    const std::string what = ctx.Describe();
    if (opset_ < 11) {
      Plan& p = ctx.EmplaceState(MakePlan(shape_only, attr_pads_, nullptr, what));
      if (mode_ == PadMode::kConstant) p.value = AttrValue(x.dtype, what);
      return ctx.SetOutput(0, x.dtype, p.out_shape);
    }
    const Tensor* pads = ctx.constant(1);
    const Tensor* axes = ctx.constant(3);
    if (!pads || (ctx.has_input(3) && !axes)) return ctx.SetOutputDynamic(0);
    const std::vector<int64_t> pad_values = ReadInt64s(*pads, what + ": input 'pads'");
    ctx.SetOutput(0, x.dtype, ctx.EmplaceState(MakePlan(shape_only, pad_values, axes, what)).out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan* prepared = ctx.state_if_any<Plan>();
    Plan read;  // pads (and axes) read from this run's data: their errors are the data's, naming the node
    if (!prepared) {
      const std::string what = ctx.Describe();
      read = MakePlan(x, ReadInt64s(ctx.required_input(1), what + ": input 'pads'"), ctx.input(3), what);
    }
    const Plan& p = prepared ? *prepared : read;
    const int64_t rank = x.rank();
    const Shape& out_shape = p.out_shape;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), out_shape);
    if (mode_ == PadMode::kConstant) {
      const Tensor* value = &p.value;
      if (opset_ >= 11) {
        const Tensor* v = ctx.input(2);
        value = v && v->size() > 0 ? v : nullptr;
      } else if (!p.value.defined()) {
        value = nullptr;
      }
      CopyShifted(x, y, p.begin, value, ctx.threads());
      return;
    }
    if (y.size() == 0) return;
    const std::vector<std::vector<int64_t>>& offs = p.offs;
    DispatchElements(x.dtype(), "Pad", [&](auto acc) {
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
  struct Plan {
    std::vector<int64_t> begin;  // per dimension: the pad before (negative: a crop)
    Shape out_shape;
    std::vector<std::vector<int64_t>> offs;  // non-constant modes: per dimension, each output index's source offset
    Tensor value;                            // opsets < 11: the fill value (undefined: the zeroed output)
  };

  // The geometry for x's shape (x may have no data) and these pads; `axes_t` (opset 18+) lists the padded axes,
  // all of them when null. Throws InvalidArgumentError naming `what` for pads or axes that do not fit x, or an
  // empty dimension to pad in a non-constant mode.
  Plan MakePlan(const Tensor& x, const std::vector<int64_t>& pads, const Tensor* axes_t,
                const std::string& what) const {
    const int64_t rank = x.rank();
    std::vector<int64_t> axes;
    if (axes_t) {
      axes = ReadInt64s(*axes_t, what + ": input 'axes'");
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    PadShape ps = ResolvePad(x, pads, axes, what);
    Plan p{std::move(ps.begin), std::move(ps.out_shape), {}, {}};
    if (mode_ == PadMode::kConstant || ShapeElementCount(p.out_shape) == 0) return p;
    for (int64_t d = 0; d < rank; ++d) {
      if (x.dim(d) == 0) {
        throw InvalidArgumentError(what + ": cannot pad empty dimension " + std::to_string(d) + " of input " +
                                   DescribeTensor(x) + " in a non-constant mode");
      }
    }
    const std::vector<int64_t> in_strides = Strides(x.shape());
    p.offs.resize(static_cast<size_t>(rank));
    for (size_t d = 0; d < p.offs.size(); ++d) {
      p.offs[d].resize(static_cast<size_t>(p.out_shape[d]));
      for (int64_t o = 0; o < p.out_shape[d]; ++o) {
        p.offs[d][static_cast<size_t>(o)] = PadSourceIndex(mode_, o - p.begin[d], x.shape()[d]) * in_strides[d];
      }
    }
    return p;
  }

  // Opsets < 11: the `value` attribute as a one-element tensor of `dtype` (undefined: leave the zeroed output).
  Tensor AttrValue(DataType dtype, const std::string& what) const {
    if (attr_value_ == 0.0f && !std::signbit(attr_value_)) return {};
    Tensor t(dtype, {1});
    Dispatch(NumericTypes{}, dtype, what, [&](auto tag) {
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

// com.microsoft::Pad's modes: ONNX Pad-11's (no wrap).
std::string MsPadModePredicate(const ir::Node& node) {
  const std::string mode = node.GetString("mode", "constant");
  return mode == "constant" || mode == "edge" || mode == "reflect"
             ? ""
             : "com.microsoft::Pad: mode '" + mode + "' is not one of constant, edge, reflect";
}

}  // namespace

void RegisterPadKernels(KernelRegistry& r) {
  r.Add({.op = "Pad", .since = 1, .until = 10, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Pad>});
  r.Add({.op = "Pad", .since = 11, .types = {{"T", dtypes::All()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Pad>, .host_inputs = {1, 2, 3}});
  // com.microsoft::Pad (ONNX Runtime's Pad with pads and value as inputs, from before ONNX Pad-11): the same
  // kernel, modes constant, edge and reflect.
  r.Add({.op = "Pad",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = MakeKernel<Pad>,
         .predicate = MsPadModePredicate,
         .host_inputs = {1, 2},
         .constraints = "mode=wrap is not a com.microsoft::Pad mode"});
}

}  // namespace ferry::ref
