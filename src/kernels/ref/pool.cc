// MaxPool, AveragePool, LpPool: N-D sliding-window reductions sharing one window geometry (auto_pad, pads,
// strides, dilations, ceil_mode) and one window list (PoolWindows, built by Prepare for the input shape), reduced
// per (image, channel) plane in parallel. MaxPool can also return the flat argmax indices (row- or column-major,
// storage_order); AveragePool divides by the taps inside the input, or with count_include_pad by the taps inside the
// padded input.
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/pool.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// Reads LpPool's / GlobalLpPool's p: a float in opset 1, an int from opset 2.
double ReadP(const ir::Node& node) {
  const ir::Attribute* a = node.attr("p");
  if (!a) return 2.0;
  const double p = a->type == ir::AttrType::kFloat ? static_cast<double>(a->f) : static_cast<double>(a->i);
  if (!(p > 0)) throw InvalidModelError(node.Describe() + ": p must be positive");
  return p;
}

// What a pool computes over each window, besides the window itself.
struct PoolOptions {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;  // AveragePool: divide by the taps inside the padded input
  int64_t storage_order = 0;       // MaxPool indices: 0 row-major, 1 column-major
  double p = 2.0;                  // LpPool
};

// Pools `planes` planes of g.in_size() elements (xp) into planes of g.out_size() elements (yp) over g's window
// list; for MaxPool also the flat argmax into ip when it is not null. Planes are split over up to `max_threads`
// threads when the work is large enough.
template <typename T>
void PoolPlanes(const PoolOptions& opt, const T* xp, int64_t planes, const WindowGeometry& g,
                const PoolWindows& windows, T* yp, int64_t* ip, int max_threads) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t in_size = g.in_size(), out_size = g.out_size();
  const int64_t work = planes * out_size * g.kernel_size();
  const int threads = work < (1 << 15) ? 1 : max_threads;
  // Column-major index of a row-major in-plane offset (storage_order = 1).
  auto col_major = [&](int64_t off) {
    int64_t idx = 0, mul = 1;
    std::vector<int64_t> coord(g.rank());
    for (size_t d = g.rank(); d-- > 0;) {
      coord[d] = off % g.in[d];
      off /= g.in[d];
    }
    for (size_t d = 0; d < g.rank(); ++d) {
      idx += coord[d] * mul;
      mul *= g.in[d];
    }
    return idx;
  };
  ParallelFor(threads, planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t pl = begin; pl < end; ++pl) {
      const T* plane = xp + pl * in_size;
      T* out = yp + pl * out_size;
      for (int64_t o = 0; o < out_size; ++o) {
        const std::span<const int64_t> taps = windows.taps(o);
        if (opt.kind == PoolKind::kMax) {
          // NaN never wins a comparison, so NaNs are skipped as in the ONNX reference.
          using M = std::conditional_t<kIsHalf<T>, float, T>;
          M best = std::numeric_limits<M>::lowest();
          if constexpr (std::is_floating_point_v<M>) best = -std::numeric_limits<M>::infinity();
          int64_t arg = taps.empty() ? 0 : taps[0];
          for (int64_t off : taps) {
            const M v = static_cast<M>(plane[off]);
            if (v > best) {
              best = v;
              arg = off;
            }
          }
          out[o] = T(best);
          if (ip) ip[pl * out_size + o] = pl * in_size + (opt.storage_order == 1 ? col_major(arg) : arg);
        } else if (opt.kind == PoolKind::kAverage) {
          A sum = 0;
          for (int64_t off : taps) sum += static_cast<A>(plane[off]);
          const int64_t count = opt.count_include_pad ? windows.padded_count(o) : static_cast<int64_t>(taps.size());
          out[o] = T(sum / static_cast<A>(count));
        } else {
          double sum = 0;
          for (int64_t off : taps) sum += std::pow(std::fabs(static_cast<double>(plane[off])), opt.p);
          out[o] = T(static_cast<A>(std::pow(sum, 1.0 / opt.p)));
        }
      }
    }
  });
}

class Pool : public OpKernel {
 public:
  Pool(const ir::Node& node, PoolKind kind)
      : kind_(kind),
        attrs_(WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        count_include_pad_(node.GetInt("count_include_pad", 0) != 0),
        storage_order_(node.GetInt("storage_order", 0)),
        p_(kind == PoolKind::kLp ? ReadP(node) : 2.0) {
    if (attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
    if (storage_order_ != 0 && storage_order_ != 1) {
      throw InvalidModelError(node.Describe() + ": storage_order must be 0 or 1");
    }
  }

  // The window geometry and window list for these spatial dims, and the output shapes.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() < 3) {
      throw InvalidArgumentError(ctx.Describe() + ": input X must have rank >= 3 (N, C, spatial...), got shape " +
                                 ShapeToString(x.shape) + " (" + ctx.InputString(0) + ")");
    }
    std::span<const int64_t> in_spatial(x.shape.data() + 2, x.shape.size() - 2);
    WindowGeometry g = ResolveWindow(attrs_, in_spatial, attrs_.kernel_shape, ceil_mode_, ctx.Describe());
    Shape y_shape{x.shape[0], x.shape[1]};
    y_shape.insert(y_shape.end(), g.out.begin(), g.out.end());
    PoolWindows windows(g);
    ctx.EmplaceState(Plan{std::move(g), std::move(windows), x.shape[0] * x.shape[1]});
    ctx.SetOutput(0, x.dtype, y_shape);
    if (kind_ == PoolKind::kMax && ctx.output_requested(1)) ctx.SetOutput(1, DataType::kInt64, y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan& p = ctx.state<Plan>();
    Tensor& y = ctx.Output(0);
    const bool want_indices = kind_ == PoolKind::kMax && ctx.output_count() > 1 && ctx.output_requested(1);
    Tensor* indices = want_indices ? &ctx.Output(1) : nullptr;
    if (y.size() == 0) return;
    const PoolOptions opt{kind_, count_include_pad_, storage_order_, p_};
    int64_t* ip = indices ? indices->data<int64_t>() : nullptr;
    auto run = [&](auto tag) {
      using T = decltype(tag);
      PoolPlanes(opt, x.data<T>(), p.planes, p.g, p.windows, y.data<T>(), ip, ctx.threads());
    };
    if (kind_ == PoolKind::kMax) {
      Dispatch(TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>{}, x.dtype(), ctx, run);
    } else {
      Dispatch(FloatTypes{}, x.dtype(), ctx, run);
    }
  }

 private:
  struct Plan {
    WindowGeometry g;
    PoolWindows windows;  // g's taps per output position
    int64_t planes;       // N * C
  };

  PoolKind kind_;
  WindowAttrs attrs_;
  bool ceil_mode_, count_include_pad_;
  int64_t storage_order_;
  double p_;
};

std::unique_ptr<OpKernel> MakeMaxPool(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<Pool>(node, PoolKind::kMax);
}
std::unique_ptr<OpKernel> MakeAveragePool(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<Pool>(node, PoolKind::kAverage);
}
std::unique_ptr<OpKernel> MakeLpPool(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<Pool>(node, PoolKind::kLp);
}

}  // namespace

void MaxPoolF32(const float* x, int64_t planes, const WindowGeometry& g, float* y, int threads) {
  PoolPlanes(PoolOptions{.kind = PoolKind::kMax}, x, planes, g, PoolWindows(g), y, nullptr, threads);
}

void AveragePoolF32(const float* x, int64_t planes, const WindowGeometry& g, bool count_include_pad, float* y,
                    int threads) {
  PoolPlanes(PoolOptions{.kind = PoolKind::kAverage, .count_include_pad = count_include_pad}, x, planes, g,
             PoolWindows(g), y, nullptr, threads);
}

void RegisterPoolKernels(KernelRegistry& r) {
  using D = DataType;
  r.Add({.op = "MaxPool",
         .since = 1,
         .types = {{"T", dtypes::Concat(dtypes::Floats(), {D::kInt8, D::kUint8})}, {"I", {D::kInt64}}},
         .create = MakeMaxPool});
  r.Add({.op = "AveragePool", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeAveragePool});
  r.Add({.op = "LpPool", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeLpPool});
}

}  // namespace ferry::ref
