// ai.ferry layout ops (schemas_ferry.cc): ReorderToBlocked and ReorderFromBlocked convert between the plain
// [N, C, D...] and the blocked [N, ceil(C/b), D..., b] layouts (blocked_layout.h); BlockedPool unblocks, runs the
// ref MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool loops (pool.h) and blocks the result again.
#include "kernels/ref/blocked_layout.h"

#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/pool.h"
#include "kernels/registry.h"

namespace ferry::ref {

Shape BlockedShape(std::span<const int64_t> plain, int64_t block) {
  Shape s(plain.begin(), plain.end());
  if (block > 0) {
    s[1] = BlockCount(plain[1], block);
    s.push_back(block);
  } else {
    s.erase(s.begin() + 1);
    s.push_back(plain[1]);
  }
  return s;
}

std::span<const int64_t> BlockedSpatial(std::span<const int64_t> blocked, int64_t block) {
  const size_t skip = block > 0 ? 3 : 2;
  if (blocked.size() < skip) return {};
  return blocked.subspan(block > 0 ? 2 : 1, blocked.size() - skip);
}

void CheckBlockedShape(const Shape& shape, std::span<const int64_t> logical, int64_t block, const std::string& what,
                       const char* name) {
  const Shape want = BlockedShape(logical, block);
  if (shape != want) {
    throw InvalidArgumentError(what + ": input " + name + " has shape " + ShapeToString(shape) + ", expected " +
                               ShapeToString(want) + " (" + ShapeToString(Shape(logical.begin(), logical.end())) +
                               (block > 0 ? " blocked by " + std::to_string(block) : std::string(" channels-last")) + ")");
  }
}

namespace {

int64_t ReadBlock(const ir::Node& node) {
  const int64_t b = node.GetInt("block", -1);
  if (b < 0) {
    throw InvalidModelError(node.Describe() + ": attribute block = " + std::to_string(b) + " must be >= 0 (0: channels-last)");
  }
  return b;
}

void CheckFloat(const InputSpec& t, const std::string& what, const char* name) {
  if (t.dtype != DataType::kFloat) {
    throw InvalidArgumentError(what + ": input " + name + " has type " + std::string(DataTypeName(t.dtype)) +
                               ", expected float");
  }
}

// Product of dims [from, to).
int64_t DimProduct(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

class ReorderToBlocked : public OpKernel {
 public:
  explicit ReorderToBlocked(const ir::Node& node) : block_(ReadBlock(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const std::string what = ctx.Describe();
    CheckFloat(x, what, "X");
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(what + ": input X must have rank >= 2 (N, C, ...), got shape " +
                                 ShapeToString(x.shape));
    }
    ctx.SetOutput(0, DataType::kFloat, BlockedShape(x.shape, block_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    if (y.size() == 0 || x.size() == 0) return;
    BlockChannels(x.data<float>(), x.dim(0), x.dim(1), DimProduct(x.shape(), 2, x.shape().size()), block_,
                  y.data<float>(), ctx.threads());
  }

 private:
  int64_t block_;
};

class ReorderFromBlocked : public OpKernel {
 public:
  explicit ReorderFromBlocked(const ir::Node& node) : block_(ReadBlock(node)), channels_(node.GetInt("channels", -1)) {
    if (channels_ < 0) {
      throw InvalidModelError(node.Describe() + ": attribute channels = " + std::to_string(channels_) +
                              " must be >= 0");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const std::string what = ctx.Describe();
    CheckFloat(x, what, "X");
    if (x.shape.size() < (block_ > 0 ? 3u : 2u)) {
      throw InvalidArgumentError(what + ": input X must be a blocked tensor, got shape " + ShapeToString(x.shape));
    }
    Shape y_shape{x.shape[0], channels_};
    const auto spatial = BlockedSpatial(x.shape, block_);
    y_shape.insert(y_shape.end(), spatial.begin(), spatial.end());
    CheckBlockedShape(x.shape, y_shape, block_, what, "X");
    ctx.SetOutput(0, DataType::kFloat, std::move(y_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    UnblockChannels(x.data<float>(), x.dim(0), channels_, DimProduct(y.shape(), 2, y.shape().size()), block_,
                    y.data<float>(), ctx.threads());
  }

 private:
  int64_t block_, channels_;
};

enum class PoolMode { kMax, kAverage, kGlobalAverage, kGlobalMax };

PoolMode ReadMode(const ir::Node& node) {
  const std::string mode = node.GetString("mode", "");
  if (mode == "MaxPool") return PoolMode::kMax;
  if (mode == "AveragePool") return PoolMode::kAverage;
  if (mode == "GlobalAveragePool") return PoolMode::kGlobalAverage;
  if (mode == "GlobalMaxPool") return PoolMode::kGlobalMax;
  throw InvalidModelError(node.Describe() + ": mode '" + mode +
                          "' is not one of MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool");
}

// The pool `mode` names over blocked X [N, Cb, in..., b] -> Y [N, Cb, out..., b]. The node does not know the
// logical channel count, so every lane of every block is pooled: padding lanes of Y hold the pool of X's padding
// lanes (zero when those are zero, which every ai.ferry producer writes), and readers ignore them.
class BlockedPool : public OpKernel {
 public:
  explicit BlockedPool(const ir::Node& node)
      : block_(ReadBlock(node)),
        mode_(ReadMode(node)),
        attrs_(WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        count_include_pad_(node.GetInt("count_include_pad", 0) != 0) {
    if (!global() && attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
  }

  // The logical (plain) geometry: every lane of every block is a channel; the pooling window over it.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const std::string what = ctx.Describe();
    CheckFloat(x, what, "X");
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int64_t min_rank = (global() ? 3 : 4) - (block_ > 0 ? 0 : 1);
    if (rank < min_rank || (block_ > 0 && x.shape.back() != block_)) {
      throw InvalidArgumentError(what + ": input X has shape " + ShapeToString(x.shape) + ", expected a tensor " +
                                 (block_ > 0 ? "[N, C/b, spatial..., b] with b = " + std::to_string(block_)
                                             : std::string("[N, spatial..., C]")) +
                                 " of rank >= " + std::to_string(min_rank));
    }
    Plan p;
    p.batch = x.shape[0];
    p.channels = x.shape.back();
    if (block_ > 0 && __builtin_mul_overflow(x.shape[1], block_, &p.channels)) {
      throw InvalidArgumentError(what + ": input X has shape " + ShapeToString(x.shape) +
                                 ": channel count overflows int64");
    }
    const std::span<const int64_t> in_spatial = BlockedSpatial(x.shape, block_);
    Shape y_plain{p.batch, p.channels};
    if (global()) {
      y_plain.insert(y_plain.end(), in_spatial.size(), 1);
    } else {
      p.g = ResolveWindow(attrs_, in_spatial, attrs_.kernel_shape, ceil_mode_, what);
      y_plain.insert(y_plain.end(), p.g.out.begin(), p.g.out.end());
    }
    for (int64_t d : in_spatial) p.in_size *= d;
    p.out_size = DimProduct(y_plain, 2, y_plain.size());
    ctx.SetOutput(0, DataType::kFloat, BlockedShape(y_plain, block_));
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan& p = ctx.state<Plan>();
    const int64_t batch = p.batch, channels = p.channels, in_size = p.in_size, out_size = p.out_size;
    const WindowGeometry& g = p.g;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int64_t planes = batch * channels;
    std::vector<float> xs(static_cast<size_t>(x.size())), ys(static_cast<size_t>(y.size()));
    UnblockChannels(x.data<float>(), batch, channels, in_size, block_, xs.data(), ctx.threads());
    switch (mode_) {
      case PoolMode::kMax: MaxPoolF32(xs.data(), planes, g, ys.data(), ctx.threads()); break;
      case PoolMode::kAverage:
        AveragePoolF32(xs.data(), planes, g, count_include_pad_, ys.data(), ctx.threads());
        break;
      case PoolMode::kGlobalAverage:
        GlobalAveragePoolF32(xs.data(), planes, in_size, ys.data(), ctx.threads());
        break;
      case PoolMode::kGlobalMax: GlobalMaxPoolF32(xs.data(), planes, in_size, ys.data(), ctx.threads()); break;
    }
    BlockChannels(ys.data(), batch, channels, out_size, block_, y.data<float>(), ctx.threads());
  }

 private:
  struct Plan {
    int64_t batch = 0, channels = 0, in_size = 1, out_size = 1;
    WindowGeometry g;  // unused by the global modes
  };

  bool global() const { return mode_ == PoolMode::kGlobalAverage || mode_ == PoolMode::kGlobalMax; }

  int64_t block_;
  PoolMode mode_;
  WindowAttrs attrs_;
  bool ceil_mode_, count_include_pad_;
};

}  // namespace

void RegisterBlockedLayoutKernels(KernelRegistry& r) {
  const std::vector<TypeConstraintDef> t = {{"T", {DataType::kFloat}}};
  r.Add({.op = "ReorderToBlocked", .domain = "ai.ferry", .since = 1, .types = t,
         .create = MakeKernel<ReorderToBlocked>});
  r.Add({.op = "ReorderFromBlocked", .domain = "ai.ferry", .since = 1, .types = t,
         .create = MakeKernel<ReorderFromBlocked>});
  r.Add({.op = "BlockedPool", .domain = "ai.ferry", .since = 1, .types = t, .create = MakeKernel<BlockedPool>});
}

}  // namespace ferry::ref
