// DepthToSpace and SpaceToDepth on the cpu backend, any data type with a byte-sized element: each is one strided
// copy (strided_copy.h) over a 6-D view, which merges what stays contiguous, copies runs with memcpy and moves the
// blocks in cache-blocked transposed tiles, split over threads when large. Prepare checks X's shape (ref's checks)
// and keeps Y's shape and the copy's strides.
//   DepthToSpace: [N, C, H, W] -> [N, C/b^2, H*b, W*b]; output (n, c, h*b + b1, w*b + b2) takes input channel
//     (b1*b + b2)*C' + c in DCR mode (the default), c*b^2 + b1*b + b2 in CRD mode (opset 11+); the view is
//     [N, C', H, b, W, b] of the output.
//   SpaceToDepth: [N, C, H, W] -> [N, C*b^2, H/b, W/b]; output channel (b1*b + b2)*C + c holds input
//     (n, c, h*b + b1, w*b + b2); the view is [N, b, b, C, H/b, W/b] of the output.
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The prepared copy: box[k] elements along view dim k, dst and src strides in elements.
struct BlockCopyPlan {
  std::array<int64_t, 6> box{}, dst{}, src{};
  int elem_bytes = 0;
};

void RunCopy(KernelContext& ctx) {
  const BlockCopyPlan& p = ctx.state<BlockCopyPlan>();
  const Tensor& x = ctx.required_input(0);
  Tensor& y = ctx.OutputUninitialized(0);
  if (x.size() == 0) return;
  StridedCopy(p.elem_bytes, y.raw_data(), p.dst, x.raw_data(), p.src, p.box, ctx.threads());
}

// Bytes per element of X; throws InvalidArgumentError for a type the copy does not move (strings, packed sub-byte
// types), which the KernelDef's type list keeps away.
int ElementBytesOf(PrepareContext& ctx) {
  const int bytes = ElementBytes(ctx.tensor_input(0).dtype);
  if (bytes == 0) {
    throw InvalidArgumentError(ctx.Describe() + ": the cpu kernel moves byte-sized elements only, got " +
                               ctx.InputString(0));
  }
  return bytes;
}

int64_t Blocksize(const ir::Node& node) {
  const int64_t b = node.RequireAttr("blocksize").i;
  if (b < 1) throw InvalidModelError(node.Describe() + ": blocksize must be positive, got " + std::to_string(b));
  return b;
}

class DepthToSpace : public OpKernel {
 public:
  explicit DepthToSpace(const ir::Node& node) : blocksize_(Blocksize(node)) {
    const std::string mode = node.GetString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") throw InvalidModelError(node.Describe() + ": unknown mode '" + mode + "'");
    crd_ = mode == "CRD";
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t b = blocksize_;
    if (x.shape.size() != 4 || x.shape[1] % (b * b) != 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be 4-D with channels divisible by blocksize^2 = " +
                                 std::to_string(b * b) + ", got " + ctx.InputString(0));
    }
    const int64_t n = x.shape[0], c = x.shape[1] / (b * b), h = x.shape[2], w = x.shape[3], hw = h * w;
    BlockCopyPlan p;
    p.elem_bytes = ElementBytesOf(ctx);
    p.box = {n, c, h, b, w, b};
    p.dst = {c * h * b * w * b, h * b * w * b, b * w * b, w * b, b, 1};
    // Source strides of (n, c, h, b1, w, b2).
    if (crd_) {
      p.src = {x.shape[1] * hw, b * b * hw, w, b * hw, 1, hw};
    } else {
      p.src = {x.shape[1] * hw, hw, w, b * c * hw, 1, c * hw};
    }
    ctx.SetOutput(0, x.dtype, {n, c, h * b, w * b});
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override { RunCopy(ctx); }

 private:
  int64_t blocksize_;
  bool crd_ = false;
};

class SpaceToDepth : public OpKernel {
 public:
  explicit SpaceToDepth(const ir::Node& node) : blocksize_(Blocksize(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t b = blocksize_;
    if (x.shape.size() != 4 || x.shape[2] % b != 0 || x.shape[3] % b != 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be 4-D with height and width divisible by blocksize " +
                                 std::to_string(b) + ", got " + ctx.InputString(0));
    }
    const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3], ho = h / b, wo = w / b;
    BlockCopyPlan p;
    p.elem_bytes = ElementBytesOf(ctx);
    p.box = {n, b, b, c, ho, wo};
    p.dst = {c * b * b * ho * wo, b * c * ho * wo, c * ho * wo, ho * wo, wo, 1};
    p.src = {c * h * w, w, 1, h * w, b * w, b};
    ctx.SetOutput(0, x.dtype, {n, c * b * b, ho, wo});
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override { RunCopy(ctx); }

 private:
  int64_t blocksize_;
};

}  // namespace

void RegisterDepthToSpaceKernels(KernelRegistry& r) {
  r.Add({.op = "DepthToSpace",
         .since = 1,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<DepthToSpace>,
         .name = "cpu.any_depth_to_space__strided.1"});
  r.Add({.op = "SpaceToDepth",
         .since = 1,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<SpaceToDepth>,
         .name = "cpu.any_space_to_depth__strided.1"});
}

}  // namespace ferry::cpu
