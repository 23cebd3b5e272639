// The order passes run in. Adding a pass: its file, its factory in pass_list.h, one line here.
#include "passes/pass_list.h"

#include "passes/pass_manager.h"

namespace ferry::passes {

const std::vector<std::unique_ptr<Pass>>& AllPasses() {
  static const std::vector<std::unique_ptr<Pass>> passes = [] {
    std::vector<std::unique_ptr<Pass>> p;
    p.push_back(MakeLegalize());            // first: the passes below see the primitives it makes
    p.push_back(MakeEliminateIdentity());   // cleanups first: what the fusions match is the cleaned graph
    p.push_back(MakeFoldConstants());       // after eliminate_identity: an Identity of a weight is not copied
    p.push_back(MakeEliminateCommonSubexpressions());  // after folding: merges the constants folding made
    p.push_back(MakeAdoptOrtOps());         // before the fusions: they see Ferry's ops in files ORT wrote
    p.push_back(MakeUnblockNchwc());        // likewise: ORT's NCHWc region as the plain graph blocked_layout blocks
    p.push_back(MakeComputeInFloat32());    // after the cleanups, before the fusions: they see float32 ops
    p.push_back(MakeFoldBatchNorm());       // first fusion: the conv fusions below see the folded Conv
    p.push_back(MakeFuseConvAdd());         // before the activation fusion: act(conv + z), never act(conv) + z
    p.push_back(MakeFuseHardSwish());       // before the activation fusion: Conv + HardSwish becomes FusedConv
    p.push_back(MakeFuseConvActivation());
    p.push_back(MakeFuseGelu());
    p.push_back(MakeFuseMatMul());          // after fuse_gelu: absorbs the Gelu it made after a linear layer
    p.push_back(MakeFuseAttention());       // after fuse_matmul: also takes a FusedMatMul with a mask as bias
    p.push_back(MakeFuseLayerNorm());
    p.push_back(MakeFuseSkipLayerNorm());   // after fuse_layer_norm: also absorbs the LayerNorm it made
    p.push_back(MakeFuseGemm());            // portable mode only; after the fusions whose patterns hold a MatMul
    p.push_back(MakeFuseScaleShift());      // after the fusions whose patterns hold Mul and Add of constants
    p.push_back(MakeBlockedLayout());
    p.push_back(MakeEliminateDeadNodes());  // last: removes what the rewrites left unread
    return p;
  }();
  return passes;
}

}  // namespace ferry::passes
