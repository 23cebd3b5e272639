// ai.ferry ReorderToBlocked / ReorderFromBlocked on oneDNN reorders (float32, block 8, 16 or 0, logical rank 3-5),
// plus the blocked-layout helpers of blocked_layout.h. Prepare checks X, declares Y (the blocked or the logical
// shape) and builds the reorder primitive for X's shape and the session's thread count (oneDNN fixes its parallel
// split at creation), kept as the signature's state; it runs with a user scratchpad (the workspace).
// ONNX Runtime's com.microsoft.nchwc ReorderInput / ReorderOutput are the same kernel (kernels/nchwc_layout.h): the
// block is the machine's NCHWc block, the blocked side is 4-D [N, Cp, H, W] (the bytes of Ferry's blocked
// [N, Cp/b, H, W, b]), the plain side NCHW or, with channels_last = 1, NHWC (oneDNN's nhwc); ReorderOutput keeps
// `channels` channels. oneDNN writes zeros into the padding channels of a blocked destination.
#include "kernels/cpu/blocked_layout.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/nchwc_layout.h"
#include "kernels/ref/blocked_layout.h"
#include "kernels/ref/nchwc.h"
#include "kernels/registry.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"

namespace ferry::cpu {

std::string BlockReason(const std::string& op, int64_t block) {
  if (block == 8 || block == 16 || block == 0) return "";
  return op + ": block = " + std::to_string(block) + " is not implemented on cpu (8, 16, or 0: channels-last)";
}

dnnl::memory::desc BlockedDesc(const Shape& logical, int64_t block) {
  using tag = dnnl::memory::format_tag;
  tag t = tag::undef;
  switch (logical.size()) {
    case 3: t = block == 16 ? tag::nCw16c : block == 8 ? tag::nCw8c : tag::nwc; break;
    case 4: t = block == 16 ? tag::nChw16c : block == 8 ? tag::nChw8c : tag::nhwc; break;
    case 5: t = block == 16 ? tag::nCdhw16c : block == 8 ? tag::nCdhw8c : tag::ndhwc; break;
    default: break;
  }
  if (t == tag::undef || !BlockReason("", block).empty()) {
    throw InternalError("cpu: no oneDNN blocked layout for logical shape " + ShapeToString(logical) + " and block " +
                        std::to_string(block));
  }
  dnnl::memory::desc md(Dims(logical), dnnl::memory::data_type::f32, t);
  const size_t want = static_cast<size_t>(ShapeElementCount(BlockedShape(logical, block))) * sizeof(float);
  if (md.get_size() != want) {
    throw InternalError("cpu: oneDNN's blocked layout of " + ShapeToString(logical) + " by " + std::to_string(block) +
                        " has " + std::to_string(md.get_size()) + " bytes, Ferry's " + std::to_string(want));
  }
  return md;
}

Shape BlockedShape(const Shape& logical, int64_t block) { return ref::BlockedShape(logical, block); }

Shape LogicalShape(const Shape& blocked, int64_t channels, int64_t block) {
  Shape s{blocked[0], channels};
  s.insert(s.end(), blocked.begin() + (block > 0 ? 2 : 1), blocked.end() - 1);
  return s;
}

void CopyZeroingPadding(const float* from, float* to, const Shape& blocked, int64_t channels, int threads) {
  const int64_t block = blocked.back(), blocks = blocked[1];
  const int64_t chunk = ShapeElementCount(blocked) / std::max<int64_t>(1, blocked[0] * blocks);  // plane * block
  const int64_t used = channels - (blocks - 1) * block;  // channels in the last block
  ParallelFor(threads, blocked[0] * blocks, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(chunk, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t q = begin; q < end; ++q) {
                  std::memcpy(to + q * chunk, from + q * chunk, static_cast<size_t>(chunk) * sizeof(float));
                  if (q % blocks != blocks - 1 || used >= block) continue;
                  for (float* p = to + q * chunk; p < to + (q + 1) * chunk; p += block) {
                    std::fill(p + used, p + block, 0.0f);
                  }
                }
              });
}

namespace {

// What Prepare builds for one input signature: the reorder, when there is anything to reorder.
struct ReorderPlan {
  bool run = false;  // X and Y are not empty
  int threads = 1;   // what the reorder was built for and runs with
  dnnl::reorder prim;
  dnnl::memory::desc from, to, scratch;
};

// Plain [N, C, D...] <-> blocked [N, ceil(C/b), D..., b].
class BlockedReorder : public OpKernel {
 public:
  BlockedReorder(const ir::Node& node, bool to_blocked)
      : to_blocked_(to_blocked),
        nchwc_(node.domain() == schemas::kMsNchwcDomain),
        channels_last_(nchwc_ && node.GetInt("channels_last", 0) != 0),
        block_(nchwc_ ? NchwcBlockSizeFor(node) : node.GetInt("block", 0)),
        channels_(node.GetInt("channels", nchwc_ ? 0 : -1)),
        what_(node.Describe()) {
    const std::string reason = BlockReason(node.op_type(), block_);
    if (!reason.empty()) throw UnsupportedError(node.Describe() + ": " + reason);
    if (nchwc_ && !to_blocked_ && channels_ <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute channels = " + std::to_string(channels_) +
                              ", expected > 0 (the logical channel count)");
    }
  }

  // Every check of X, Y's shape (blocked: [N, ceil(C/b), D..., b] or [N, D..., C]; or the logical [N, C, D...]),
  // the reorder for X's shape and its scratchpad.
  void Prepare(PrepareContext& ctx) const override {
    if (nchwc_) {
      PrepareNchwc(ctx);
      return;
    }
    const InputSpec& x = ctx.tensor_input(0);
    const std::string what = ctx.Describe();
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(what + ": input X must be float32, got " + ctx.InputString(0));
    }
    Shape logical;
    if (to_blocked_) {
      logical = x.shape;
    } else {
      if (!MatchesBlocked(x.shape)) {
        throw InvalidArgumentError(
            what + ": " + ctx.InputString(0) + ", expected " + std::to_string(channels_) + " channels " +
            (block_ > 0 ? "blocked by " + std::to_string(block_) + " ([N, " +
                              std::to_string((channels_ + block_ - 1) / block_) + ", spatial..., " +
                              std::to_string(block_) + "]"
                        : std::string("channels-last ([N, spatial..., C]")) +
            ", 1 to 3 spatial dims)");
      }
      logical = LogicalShape(x.shape, channels_, block_);
    }
    if (static_cast<int64_t>(logical.size()) < kMinBlockedRank ||
        static_cast<int64_t>(logical.size()) > kMaxBlockedRank) {
      throw UnsupportedError(what + ": " + ctx.InputString(0) +
                             "; the cpu kernel reorders tensors of rank 3 to 5 (1 to 3 spatial dims)");
    }
    const Shape y_shape = to_blocked_ ? BlockedShape(logical, block_) : logical;
    ctx.SetOutput(0, DataType::kFloat, y_shape);
    Finish(ctx, logical, PlainDesc(logical, DataType::kFloat),
           ShapeElementCount(y_shape) > 0 && ShapeElementCount(x.shape) > 0);
  }

  // com.microsoft.nchwc: X 4-D; the blocked side [N, Cp, H, W] (see the top of the file).
  void PrepareNchwc(PrepareContext& ctx) const {
    ref::CheckNchwcTensor(ctx, 0, "X", to_blocked_ ? 0 : block_);
    const Shape& x = ctx.input(0).shape;
    Shape logical = x;  // [N, C, H, W]
    if (to_blocked_ && channels_last_) logical = {x[0], x[3], x[1], x[2]};
    if (!to_blocked_) {
      ref::CheckNchwcChannels(ctx, x[1], channels_, block_);
      logical[1] = channels_;
    }
    const Shape y_shape = to_blocked_      ? Shape{x[0], NchwcPadded(logical[1], block_), logical[2], logical[3]}
                          : channels_last_ ? Shape{x[0], x[2], x[3], channels_}
                                           : logical;
    ctx.SetOutput(0, DataType::kFloat, y_shape);
    const dnnl::memory::desc plain = channels_last_ ? BlockedDesc(logical, 0) : PlainDesc(logical, DataType::kFloat);
    Finish(ctx, logical, plain, ShapeElementCount(y_shape) > 0 && ShapeElementCount(x) > 0);
  }

  // The reorder between `plain` and the blocked layout of `logical` (the direction of the op), kept as the state.
  void Finish(PrepareContext& ctx, const Shape& logical, const dnnl::memory::desc& plain, bool run) const {
    const std::string what = ctx.Describe();
    ReorderPlan p;
    p.threads = ctx.threads();
    p.run = run;
    if (p.run) {
      ScopedOmpThreads scope(p.threads);  // oneDNN fixes a reorder's parallel split when it is created
      const dnnl::memory::desc blocked = BlockedDesc(logical, block_);
      p.from = to_blocked_ ? plain : blocked;
      p.to = to_blocked_ ? blocked : plain;
      try {
        const dnnl::reorder::primitive_desc pd(Engine(), p.from, Engine(), p.to, WithUserScratchpad());
        p.prim = dnnl::reorder(pd);
        p.scratch = pd.scratchpad_desc();
      } catch (const dnnl::error& err) {
        throw InternalError(what + ": oneDNN reorder: " + err.what());
      }
      NeedScratchpad(p.scratch, ctx.workspace());
    }
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const ReorderPlan& p = ctx.state<ReorderPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);  // the reorder writes padding too
    if (!p.run) return;
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, Wrap(x, p.from)}, {DNNL_ARG_TO, Wrap(y, p.to)}};
    AddScratchpad(args, p.scratch);
    Execute(p.prim, args, p.threads, what_);
  }

 private:
  // Whether X of shape `x` is blocked as the node says (ReorderFromBlocked).
  bool MatchesBlocked(const Shape& x) const {
    const int64_t rank = static_cast<int64_t>(x.size()) - (block_ > 0 ? 1 : 0);
    return rank >= kMinBlockedRank && rank <= kMaxBlockedRank && channels_ >= 0 &&
           (block_ > 0 ? x.back() == block_ && x[1] == (channels_ + block_ - 1) / block_ : x.back() == channels_);
  }

  bool to_blocked_;
  bool nchwc_;          // com.microsoft.nchwc ReorderInput / ReorderOutput
  bool channels_last_;  // nchwc: the plain side is NHWC
  int64_t block_, channels_;
  std::string what_;
};

std::string ReorderPredicate(const ir::Node& node) { return BlockReason(node.op_type(), node.GetInt("block", 0)); }

// The logical rank must have a oneDNN blocked tag (3 to 5).
std::string ReorderShapePredicate(const ir::Node& node) {
  const int64_t rank = KnownRank(node, 0);
  if (rank < 0) return "";
  const int64_t block = node.GetInt("block", 0);
  const int64_t logical = node.op_type() == "ReorderToBlocked" || block == 0 ? rank : rank - 1;
  if (logical < kMinBlockedRank || logical > kMaxBlockedRank) {
    return node.op_type() + ": a tensor of logical rank " + std::to_string(logical) +
           " is not implemented on cpu (rank 3 to 5: 1 to 3 spatial dims)";
  }
  return "";
}

std::unique_ptr<OpKernel> MakeToBlocked(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<BlockedReorder>(node, true);
}
std::unique_ptr<OpKernel> MakeFromBlocked(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<BlockedReorder>(node, false);
}

}  // namespace

void RegisterBlockedLayoutKernels(KernelRegistry& r) {
  const std::string domain(schemas::kFerryDomain);
  r.Add({.op = "ReorderToBlocked",
         .domain = domain,
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeToBlocked,
         .predicate = ReorderPredicate,
         .shape_predicate = ReorderShapePredicate,
         .isa = {},
         .name = "cpu.f32_reorder_to_blocked__onednn.1",
         .constraints = "block 8, 16 or 0 (channels-last); 1 to 3 spatial dims",
         .library = "oneDNN"});
  r.Add({.op = "ReorderFromBlocked",
         .domain = domain,
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeFromBlocked,
         .predicate = ReorderPredicate,
         .shape_predicate = ReorderShapePredicate,
         .isa = {},
         .name = "cpu.f32_reorder_from_blocked__onednn.1",
         .constraints = "block 8, 16 or 0 (channels-last); 1 to 3 spatial dims",
         .library = "oneDNN"});
}

// --- com.microsoft.nchwc, group "nchwc": the same kernel (see the top of the file) ---
void RegisterNchwcReorderKernels(KernelRegistry& r) {
  const std::string domain(schemas::kMsNchwcDomain);
  r.Add({.op = "ReorderInput",
         .domain = domain,
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeToBlocked,
         .isa = {},
         .name = "cpu.f32_nchwc_reorder_input__onednn.1",
         .constraints = "float32; 4-D",
         .library = "oneDNN"});
  r.Add({.op = "ReorderOutput",
         .domain = domain,
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeFromBlocked,
         .isa = {},
         .name = "cpu.f32_nchwc_reorder_output__onednn.1",
         .constraints = "float32; 4-D",
         .library = "oneDNN"});
}

}  // namespace ferry::cpu
