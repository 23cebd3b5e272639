// The order passes run in. Adding a pass: its file, its factory in pass_list.h, one line here.
#include "passes/pass_list.h"

#include "passes/pass_manager.h"

namespace ferry::passes {

const std::vector<std::unique_ptr<Pass>>& AllPasses() {
  static const std::vector<std::unique_ptr<Pass>> passes = [] {
    std::vector<std::unique_ptr<Pass>> p;
    p.push_back(MakeFuseConvAdd());         // before the activation fusion: act(conv + z), never act(conv) + z
    p.push_back(MakeFuseConvActivation());
    p.push_back(MakeFuseGelu());
    p.push_back(MakeFuseMatMul());          // after fuse_gelu: absorbs the Gelu it made after a linear layer
    p.push_back(MakeBlockedLayout());
    p.push_back(MakeEliminateDeadNodes());  // last: removes what the rewrites left unread
    return p;
  }();
  return passes;
}

}  // namespace ferry::passes
