// com.microsoft::MaxpoolWithMask (float, 1-3 spatial dims): MaxPool over X [N, C, spatial...] (kernel_shape,
// strides, pads, auto_pad as ONNX MaxPool; no dilations, no ceil_mode; storage_order is read and ignored) that
// stops reading a window where the int32 mask M is 0, exactly as ONNX Runtime's kernel does:
//  - every plane p = n * C + c reads the mask at M's flat offset (p * spatial_size) mod (M's N * M's C), plus
//    the position within the plane (M's N and C may differ from X's; M's spatial dims equal X's);
//  - the taps of a window are read row by row (the last dim innermost); a tap whose mask is 0 ends the innermost
//    run it is in (1-D: the whole window; 2-D: the rest of its row; 3-D: the rest of its depth run) and is not
//    read; in 2-D and 3-D a tap at plane position 0 is read whatever its mask;
//  - a window with nothing read gives the lowest float (-FLT_MAX).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class MaxpoolWithMask : public OpKernel {
 public:
  explicit MaxpoolWithMask(const ir::Node& node) : attrs_(WindowAttrs::FromNode(node)) {
    if (attrs_.kernel_shape.empty() || attrs_.kernel_shape.size() > 3) {
      throw InvalidModelError(node.Describe() + ": attribute kernel_shape must have 1 to 3 values, got " +
                              ShapeToString(attrs_.kernel_shape));
    }
    for (int64_t d : attrs_.dilations) {
      if (d != 1) throw InvalidModelError(node.Describe() + ": dilations are not supported (ONNX Runtime's neither)");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& m = ctx.tensor_input(1);
    const std::string what = ctx.Describe();
    const size_t rank = attrs_.kernel_shape.size();
    if (x.shape.size() != rank + 2) {
      throw InvalidArgumentError(what + ": input 'X' must have " + std::to_string(rank + 2) +
                                 " dims (N, C and one per kernel_shape value), got " + ctx.InputString(0));
    }
    bool ok = m.shape.size() == x.shape.size() &&
              (ShapeElementCount(x.shape) == 0 || (m.shape[0] > 0 && m.shape[1] > 0));
    for (size_t d = 2; ok && d < x.shape.size(); ++d) ok = m.shape[d] == x.shape[d];
    if (!ok) {
      throw InvalidArgumentError(what + ": mask 'M' " + ctx.InputString(1) + " must have X's spatial dims " +
                                 ShapeToString(x.shape) + " and N, C > 0");
    }
    const std::span<const int64_t> spatial(x.shape.data() + 2, rank);
    WindowGeometry g = ResolveWindow(attrs_, spatial, attrs_.kernel_shape, false, what);
    Shape y{x.shape[0], x.shape[1]};
    y.insert(y.end(), g.out.begin(), g.out.end());
    ctx.SetOutput(0, DataType::kFloat, y);
    ctx.EmplaceState(Plan{std::move(g), m.shape[0] * m.shape[1]});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& mask = ctx.required_input(1);
    Tensor& y = ctx.OutputUninitialized(0);
    const Plan& p = ctx.state<Plan>();
    const WindowGeometry& g = p.g;
    const size_t rank = g.rank();
    // Dims padded to 3 (h, w, d) as ONNX Runtime's loops see them.
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
    for (size_t d = 0; d < rank; ++d) {
      in[d] = g.in[d];
      out[d] = g.out[d];
      k[d] = g.kernel[d];
      s[d] = g.strides[d];
      pad[d] = g.pad_begin[d];
    }
    const int64_t plane = g.in_size(), out_plane = g.out_size();
    const int64_t planes = x.dim(0) * x.dim(1);
    const float* xp = x.data<float>();
    const int32_t* mp = mask.data<int32_t>();
    float* yp = y.data<float>();
    for (int64_t c = 0; c < planes; ++c) {
      const float* xd = xp + c * plane;
      const int32_t* md = mp + (c * plane) % p.mask_planes;
      float* yd = yp + c * out_plane;
      for (int64_t ph = 0; ph < out[0]; ++ph) {
        const int64_t h0 = std::max<int64_t>(ph * s[0] - pad[0], 0), h1 = std::min(ph * s[0] - pad[0] + k[0], in[0]);
        for (int64_t pw = 0; pw < out[1]; ++pw) {
          const int64_t w0 = std::max<int64_t>(pw * s[1] - pad[1], 0);
          const int64_t w1 = std::min(pw * s[1] - pad[1] + k[1], in[1]);
          for (int64_t pd = 0; pd < out[2]; ++pd) {
            const int64_t d0 = std::max<int64_t>(pd * s[2] - pad[2], 0);
            const int64_t d1 = std::min(pd * s[2] - pad[2] + k[2], in[2]);
            float v = std::numeric_limits<float>::lowest();
            for (int64_t h = h0; h < h1; ++h) {
              if (rank == 1) {
                if (md[h] == 0) break;
                v = std::max(v, xd[h]);
                continue;
              }
              for (int64_t w = w0; w < w1; ++w) {
                bool stop_row = false;
                for (int64_t d = d0; d < d1; ++d) {
                  const int64_t i = (h * in[1] + w) * in[2] + d;
                  if (i > 0 && md[i] == 0) {
                    stop_row = rank == 2;  // 2-D: the rest of the row; 3-D: the rest of this depth run
                    break;
                  }
                  if (xd[i] > v) v = xd[i];
                }
                if (stop_row) break;
              }
            }
            yd[(ph * out[1] + pw) * out[2] + pd] = v;
          }
        }
      }
    }
  }

 private:
  struct Plan {
    WindowGeometry g;
    int64_t mask_planes = 1;  // M's N * C
  };

  WindowAttrs attrs_;
};

}  // namespace

void RegisterMaxpoolWithMaskKernels(KernelRegistry& r) {
  r.Add({.op = "MaxpoolWithMask",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<MaxpoolWithMask>});
}

}  // namespace ferry::ref
