// oneDNN's library-managed scratchpad is unsafe for a primitive run from two threads at once (and, in oneDNN's
// default build, for a primitive run from a thread other than the one that created it), while Ferry calls a
// kernel's Compute from several threads at once. So the primitives of the matmul, gemm, pooling and
// normalization kernels are created with a user scratchpad (WithUserScratchpad) and each execution gets the
// calling thread's own buffer (AddScratchpad).
#pragma once

#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel.h"

namespace ferry::cpu {

// `attr` with scratchpad_mode::user.
dnnl::primitive_attr WithUserScratchpad(dnnl::primitive_attr attr = dnnl::primitive_attr());

// Adds DNNL_ARG_SCRATCHPAD for `desc` (a primitive descriptor's scratchpad_desc()) to `args` when it needs any
// memory: this thread's scratchpad buffer, 64-byte aligned, grown as needed and kept for the thread's life. The
// memory is valid until this thread's next call.
void AddScratchpad(std::unordered_map<int, dnnl::memory>& args, const dnnl::memory::desc& desc);

// Records in `ws` (a kernel's Prepare: PrepareContext::workspace) that AddScratchpad will need `desc` on the
// calling thread: the buffer "oneDNN scratchpad", one per thread that runs kernels, shared by every kernel using
// AddScratchpad.
void NeedScratchpad(const dnnl::memory::desc& desc, Workspace& ws);
// Bytes the calling thread's scratchpad buffer holds now (what AddScratchpad has grown it to), for tests.
int64_t ScratchpadBytesOnThisThread();

}  // namespace ferry::cpu
