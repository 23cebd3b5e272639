// What the oneDNN convolution kernels (Conv, ai.ferry FusedConv / BlockedConv, ConvTranspose) share: finding
// constant weights, per-thread scratch buffers, and a "plan" — one primitive for one input-shape signature plus
// the reorders between Ferry's tensors and the layouts the primitive chose, which the kernels' Prepare builds and
// keeps as the signature's state — with the code that runs it.
#pragma once

#include <dnnl.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/cpu/dnnl_util.h"  // ScopedOmpThreads
#include "kernels/kernel.h"

namespace ferry::cpu {

// The initializer behind input i of `node` when it is a true constant: an initializer that is not also a graph
// input (a caller could override such a one with a feed). nullptr otherwise.
std::shared_ptr<const Tensor> ConstantInput(const ir::Node& node, size_t i);

// The rank of input i of `node` when known (from its type or its initializer), else -1.
int64_t KnownRank(const ir::Node& node, size_t i);

// A primitive (convolution_forward or deconvolution_forward) built for one input-shape signature, with the
// reorders between Ferry's tensors (the *_user descs) and the primitive's layouts. Every primitive runs with a
// user scratchpad, so one plan may run on several threads at once.
struct ConvPlan {
  dnnl::primitive prim;
  dnnl::memory::desc src_md, weights_md, bias_md, dst_md, scratch_md;  // what the primitive takes
  dnnl::memory::desc src_user, weights_user, dst_user;       // Ferry's tensors (dst_user may be a strided view)
  std::optional<dnnl::reorder> src_in, weights_in, dst_out;  // present when the layouts differ
  dnnl::memory::desc src_in_scratch, weights_in_scratch, dst_out_scratch;
  std::optional<dnnl::memory> packed_weights;  // constant W, already in weights_md (shared with PackedWeights)
  bool bias = false;  // set before FinishConvPlan: the primitive takes a bias (plain, one value per channel)
  // Set before FinishConvPlan: the primitive has a sum post-op, which adds what its dst holds (Z, laid out as
  // dst_user) before executing. Z is copied into Y, or reordered into the blocked dst (z_in) when dst_out is set.
  bool sum = false;
  std::optional<dnnl::reorder> z_in;
  dnnl::memory::desc z_in_scratch;
  // When set, the plan is these parts instead of `prim`: plans for consecutive slices of the output channels, run one
  // after another, each writing a contiguous slice of Y (batch 1) from the whole of X (conv.cc, "Winograd
  // scratchpad": one primitive's scratchpad would be too large).
  struct Part {
    std::shared_ptr<const ConvPlan> plan;
    int64_t first_channel = 0;  // of Y and B
    int64_t y_offset = 0;       // in floats, of the part's slice of Y (and of Z)
  };
  std::vector<Part> parts;
};

// A kernel's constant weights, reordered once per layout a primitive asked for (plans built for other thread
// counts or shapes usually want the same layout and share the buffer). Kernels reading the same initializer (an
// unrolled loop's iterations, as RAFT's refinement steps, or weights tied between layers) share one copy per
// layout across the process once ShareAs names it. Thread-safe.
class PackedWeights {
 public:
  // The initializer whose values every Get packs: copies are then shared with the other kernels that name it.
  // Identified by its control block (kept from reuse while a copy lives), not by its address.
  void ShareAs(const std::shared_ptr<const Tensor>& source) {
    source_ = source;
    share_ = source != nullptr;
  }
  // `w` (described by `user`, which may be a part of it: a submemory desc) in layout `md`, reordered on first
  // request (or taken from a kernel that packed the same initializer in that layout).
  dnnl::memory Get(const Tensor& w, const dnnl::memory::desc& user, const dnnl::memory::desc& md,
                   const std::string& what);
  // Bytes of the packed copies this object made (a shared copy counts once, for the kernel that made it).
  int64_t bytes() const;

 private:
  struct Entry {
    dnnl::memory::desc user, md;
    std::shared_ptr<const dnnl::memory> memory;
    bool made_here = false;
  };
  mutable std::mutex mu_;
  std::weak_ptr<const Tensor> source_;
  bool share_ = false;
  std::vector<Entry> entries_;
};

// Completes `plan` from the primitive descriptor `pd` (src/weights/dst/scratchpad) and the user descs already set
// in it: makes the primitive and the reorders that are needed. When `constant_weights` is given, takes them from
// `packed` in the primitive's layout. Call under ScopedOmpThreads for the thread count the plan will run with.
void FinishConvPlan(ConvPlan& plan, const dnnl::primitive_desc& pd, dnnl::primitive prim,
                    const Tensor* constant_weights, PackedWeights* packed, const std::string& what);

// The attribute every conv primitive and reorder is built with (user scratchpad).
dnnl::primitive_attr ScratchpadAttr();

// Runs `plan`: x, w (ignored when the plan holds packed weights), bias (may be null) -> y, with `threads`
// threads (the count the plan was built for). Activation reorders go through per-thread scratch buffers (no allocation
// once they have grown). `z` (plans with `sum` only; laid out as dst_user, which must then be dense) is what the
// sum post-op adds; it may be y itself.
void RunConvPlan(const ConvPlan& plan, const void* x, const void* w, const void* bias, void* y, int threads,
                 const std::string& what, const void* z = nullptr);

// Records in `ws` (a kernel's Prepare: PrepareContext::workspace) the per-thread buffers RunConvPlan keeps for
// `plan` on the calling thread: "conv src reorder", "conv weights reorder" and "conv dst reorder" (a layout the
// primitive wants that Ferry's tensor does not have) and "conv scratchpad" (the largest scratchpad of the primitive
// and its reorders). Every convolution kernel (Conv, FusedConv, BlockedConv, ConvTranspose) shares them.
void AddConvWorkspace(const ConvPlan& plan, Workspace& ws);
// Bytes the calling thread's RunConvPlan buffers hold now (what its runs have grown them to), for tests.
int64_t ConvScratchBytesOnThisThread();

// The calling thread's "conv scratchpad" buffer grown to at least `bytes` (64-byte aligned), for a convolution
// kernel of Ferry's own (winograd_conv.cc) that runs without a ConvPlan; valid until the thread's next request.
// Its Prepare records the size with ws.Need("conv scratchpad", bytes).
void* ConvScratchpad(size_t bytes);

}  // namespace ferry::cpu
