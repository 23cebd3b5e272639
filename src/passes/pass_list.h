// The factories of every pass (one per pass file) and the list that orders them: pass_list.cc.
#pragma once

#include <memory>

#include "passes/pass.h"

namespace ferry::passes {

std::unique_ptr<Pass> MakeLegalize();               // legalize.cc, level 0 (only with --legalize)
std::unique_ptr<Pass> MakeEliminateIdentity();      // eliminate_identity.cc, level 1
std::unique_ptr<Pass> MakeFoldConstants();          // fold_constants.cc, level 1
std::unique_ptr<Pass> MakeEliminateCommonSubexpressions();  // eliminate_common_subexpressions.cc, level 1
std::unique_ptr<Pass> MakeAdoptOrtOps();           // adopt_ort_ops.cc, level 1
std::unique_ptr<Pass> MakeUnblockNchwc();          // unblock_nchwc.cc, level 3
std::unique_ptr<Pass> MakeComputeInFloat32();      // compute_in_float32.cc, level 1
std::unique_ptr<Pass> MakeFoldBatchNorm();          // fold_batch_norm.cc, level 2
std::unique_ptr<Pass> MakeFuseConvAdd();            // fuse_conv_add.cc, level 2
std::unique_ptr<Pass> MakeFuseHardSwish();          // fuse_hard_swish.cc, level 2
std::unique_ptr<Pass> MakeFuseConvActivation();     // fuse_conv_activation.cc, level 2
std::unique_ptr<Pass> MakeFuseGelu();               // fuse_gelu.cc, level 2
std::unique_ptr<Pass> MakeFuseMatMul();             // fuse_matmul.cc, level 2
std::unique_ptr<Pass> MakeFuseAttention();          // fuse_attention.cc, level 2
std::unique_ptr<Pass> MakeFuseLayerNorm();          // fuse_layer_norm.cc, level 2
std::unique_ptr<Pass> MakeFuseSkipLayerNorm();      // fuse_skip_layer_norm.cc, level 2
std::unique_ptr<Pass> MakeFuseGemm();               // fuse_gemm.cc, level 2
std::unique_ptr<Pass> MakeFuseScaleShift();         // fuse_scale_shift.cc, level 2
std::unique_ptr<Pass> MakeBlockedLayout();          // blocked_layout.cc, level 3
std::unique_ptr<Pass> MakeEliminateDeadNodes();     // eliminate_dead_nodes.cc, level 1

}  // namespace ferry::passes
