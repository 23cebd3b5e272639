// AffineGrid (opset 20): the sampling grid of an affine transform, for GridSample. theta [N, 2, 3] with size
// (N, C, H, W) gives grid [N, H, W, 2]; theta [N, 3, 4] with size (N, C, D, H, W) gives [N, D, H, W, 3]. Each
// point is theta @ (x, y, [z,] 1) over the normalized base coordinates of W, H (and D): with align_corners,
// -1 + 2i/(s-1) (just -1 when s = 1); without, -1 + (2i+1)/s.
#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class AffineGrid : public OpKernel {
 public:
  explicit AffineGrid(const ir::Node& node) : align_corners_(node.GetInt("align_corners", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& theta = ctx.required_input(0);
    const std::vector<int64_t> size = ReadInt64s(ctx.required_input(1), what + ": input 'size'");
    if (size.size() != 4 && size.size() != 5) {
      throw InvalidArgumentError(what + ": input 'size' must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got " +
                                 std::to_string(size.size()));
    }
    const int64_t r = static_cast<int64_t>(size.size()) - 2;  // spatial rank: 2 or 3
    const int64_t n = size[0];
    if (theta.rank() != 3 || theta.dim(0) != n || theta.dim(1) != r || theta.dim(2) != r + 1) {
      throw InvalidArgumentError(what + ": input 'theta' must have shape [" + std::to_string(n) + ", " +
                                 std::to_string(r) + ", " + std::to_string(r + 1) + "] for size " +
                                 ShapeToString(size) + ", got " + ShapeToString(theta.shape()));
    }
    Shape out_shape = {n};
    int64_t points = 1;
    for (int64_t i = 2; i < 2 + r; ++i) {
      if (size[static_cast<size_t>(i)] < 0) throw InvalidArgumentError(what + ": input 'size' has a negative value");
      out_shape.push_back(size[static_cast<size_t>(i)]);
      points *= size[static_cast<size_t>(i)];
    }
    out_shape.push_back(r);
    Tensor& grid = ctx.Output(0, theta.dtype(), out_shape);
    if (grid.size() == 0) return;

    // Base coordinates per spatial dim, outermost (D or H) first.
    std::vector<std::vector<double>> base(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) {
      const int64_t s = size[static_cast<size_t>(2 + i)];
      for (int64_t k = 0; k < s; ++k) {
        const double sd = static_cast<double>(s), kd = static_cast<double>(k);
        base[static_cast<size_t>(i)].push_back(align_corners_ ? (s > 1 ? -1 + 2 * kd / (sd - 1) : -1.0)
                                                              : -1 + (2 * kd + 1) / sd);
      }
    }
    Dispatch(FloatTypes{}, theta.dtype(), what, [&](auto tag) {
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

void RegisterAffineGridKernels(KernelRegistry& r) {
  r.Add({.op = "AffineGrid",
         .since = 20,
         .types = {{"T1", dtypes::Floats()}, {"T2", {DataType::kInt64}}},
         .create = MakeKernel<AffineGrid>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
