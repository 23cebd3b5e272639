// The factories of every pass (one per pass file) and the list that orders them: pass_list.cc.
#pragma once

#include <memory>

#include "passes/pass.h"

namespace ferry::passes {

std::unique_ptr<Pass> MakeFuseConvAdd();            // fuse_conv_add.cc, level 2
std::unique_ptr<Pass> MakeFuseConvActivation();     // fuse_conv_activation.cc, level 2
std::unique_ptr<Pass> MakeFuseGelu();               // fuse_gelu.cc, level 2
std::unique_ptr<Pass> MakeFuseMatMul();             // fuse_matmul.cc, level 2
std::unique_ptr<Pass> MakeBlockedLayout();          // blocked_layout.cc, level 3
std::unique_ptr<Pass> MakeEliminateDeadNodes();     // eliminate_dead_nodes.cc, level 1

}  // namespace ferry::passes
