// AffineGrid (opset 20): the sampling grid of an affine transform, for GridSample. theta [N, 2, 3] with size
// (N, C, H, W) gives grid [N, H, W, 2]; theta [N, 3, 4] with size (N, C, D, H, W) gives [N, D, H, W, 3]. Each
// point is theta @ (x, y, [z,] 1) over the normalized base coordinates of W, H (and D): with align_corners,
// -1 + 2i/(s-1) (just -1 when s = 1); without, -1 + (2i+1)/s.
#include "kernels/ref/affine_grid.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// What the size values give: the grid's shape and the base coordinates per spatial dim.
struct GridPlan {
  int64_t n = 0, r = 0, points = 1;  // r: spatial rank, 2 or 3
  Shape out_shape;
  std::vector<std::vector<double>> base;  // per spatial dim, outermost (D or H) first
};

// Checks size (its values) against theta's shape and plans the grid; throws InvalidArgumentError naming what().
template <typename What>
GridPlan PlanGrid(const std::vector<int64_t>& size, const Shape& theta, bool align_corners, const What& what) {
  if (size.size() != 4 && size.size() != 5) {
    throw InvalidArgumentError(what() + ": input 'size' must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got " +
                               std::to_string(size.size()));
  }
  GridPlan p;
  p.r = static_cast<int64_t>(size.size()) - 2;
  p.n = size[0];
  const int64_t r = p.r;
  if (theta.size() != 3 || theta[0] != p.n || theta[1] != r || theta[2] != r + 1) {
    throw InvalidArgumentError(what() + ": input 'theta' must have shape [" + std::to_string(p.n) + ", " +
                               std::to_string(r) + ", " + std::to_string(r + 1) + "] for size " + ShapeToString(size) +
                               ", got " + ShapeToString(theta));
  }
  p.out_shape = {p.n};
  for (int64_t i = 2; i < 2 + r; ++i) {
    if (size[static_cast<size_t>(i)] < 0) throw InvalidArgumentError(what() + ": input 'size' has a negative value");
    p.out_shape.push_back(size[static_cast<size_t>(i)]);
    p.points *= size[static_cast<size_t>(i)];
  }
  p.out_shape.push_back(r);
  if (ShapeElementCount(p.out_shape) == 0) return p;
  p.base.resize(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) {
    const int64_t s = size[static_cast<size_t>(2 + i)];
    for (int64_t k = 0; k < s; ++k) {
      const double sd = static_cast<double>(s), kd = static_cast<double>(k);
      p.base[static_cast<size_t>(i)].push_back(align_corners ? (s > 1 ? -1 + 2 * kd / (sd - 1) : -1.0)
                                                             : -1 + (2 * kd + 1) / sd);
    }
  }
  return p;
}

class AffineGrid : public OpKernel {
 public:
  explicit AffineGrid(const ir::Node& node) : align_corners_(node.GetInt("align_corners", 0) != 0) {}

  // With a known size the grid is planned here (every check of size and theta); otherwise the output is dynamic
  // and Compute plans it from the size values.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& theta = ctx.tensor_input(0);
    const InputSpec& size_spec = ctx.tensor_input(1);
    if (size_spec.dtype != DataType::kInt64 && size_spec.dtype != DataType::kInt32) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'size': expected an int32 or int64 tensor, got " +
                                 std::string(DataTypeName(size_spec.dtype)));
    }
    const int64_t count = ShapeElementCount(size_spec.shape);
    if (count != 4 && count != 5) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'size' must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) " +
                                 "values, got " + std::to_string(count));
    }
    const Tensor* size = ctx.constant(1);
    if (!size) {
      ctx.SetOutputDynamic(0);
      return;
    }
    const GridPlan& p = ctx.EmplaceState(
        PlanGrid(ReadInt64s(*size, {}), theta.shape, align_corners_, [&] { return ctx.Describe(); }));
    ctx.SetOutput(0, theta.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& theta = ctx.required_input(0);
    GridPlan planned;
    const GridPlan* pp = ctx.state_if_any<GridPlan>();
    if (!pp) {
      // The size is run-time data: its errors name the node.
      planned = PlanGrid(ReadInt64s(ctx.required_input(1), {}), theta.shape(), align_corners_,
                         [&] { return ctx.Describe(); });
      pp = &planned;
    }
    const int64_t r = pp->r, n = pp->n, points = pp->points;
    Tensor& grid = ctx.Output(0, theta.dtype(), pp->out_shape);
    if (grid.size() == 0) return;
    const auto& base = pp->base;
    Dispatch(FloatTypes{}, theta.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* th = theta.data<T>();
      T* out = grid.data<T>();
      ParallelFor(ctx.threads(), n * points, 4096, [&](int64_t begin, int64_t end) {
        double coord[4];
        for (int64_t p = begin; p < end; ++p) {
          const int64_t b = p / points;
          // Homogeneous point (x, y, [z,] 1): x indexes the innermost dim.
          int64_t rem = p % points;
          for (int64_t i = r; i-- > 0;) {
            const auto& axis = base[static_cast<size_t>(i)];
            const int64_t len = static_cast<int64_t>(axis.size());
            coord[r - 1 - i] = axis[static_cast<size_t>(rem % len)];
            rem /= len;
          }
          coord[r] = 1.0;
          const T* m = th + b * r * (r + 1);
          for (int64_t row = 0; row < r; ++row) {
            double v = 0;
            for (int64_t col = 0; col <= r; ++col)
              v += static_cast<double>(static_cast<Acc<T>>(m[row * (r + 1) + col])) * coord[col];
            out[p * r + row] = T(static_cast<Acc<T>>(v));
          }
        }
      });
    });
  }

 private:
  bool align_corners_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateAffineGridKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<AffineGrid>(node, options);
}

void RegisterAffineGridKernels(KernelRegistry& r) {
  r.Add({.op = "AffineGrid",
         .since = 20,
         .types = {{"T1", dtypes::Floats()}, {"T2", {DataType::kInt64}}},
         .create = CreateAffineGridKernel,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
