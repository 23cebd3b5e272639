// The ops that compute nothing on cpu: control flow (If, Loop, Scan), sequences (SequenceEmpty ... SequenceMap,
// SplitToSequence, ConcatFromSequence), optionals, Shape, Size and Constant. Their kernels move values, read
// metadata or run subgraphs; a subgraph's nodes are placed like any other node, so a Loop body's MatMul runs on a
// cpu kernel whichever backend holds the Loop. The ref kernels are already what these ops need on a host backend,
// so the cpu backend registers those very kernels (no copy of their code) under cpu names: without them every
// control-flow node, and every Shape of a dynamic tensor, was a fallback to ref and a placement boundary.
#include "kernels/registry.h"

namespace ferry::ref {
void RegisterIfKernels(KernelRegistry& r);
void RegisterLoopKernels(KernelRegistry& r);
void RegisterScanKernels(KernelRegistry& r);
void RegisterSequenceKernels(KernelRegistry& r);
void RegisterSplitToSequenceKernels(KernelRegistry& r);
void RegisterConcatFromSequenceKernels(KernelRegistry& r);
void RegisterSequenceMapKernels(KernelRegistry& r);
void RegisterOptionalKernels(KernelRegistry& r);
void RegisterConstantKernels(KernelRegistry& r);
void RegisterShapeKernels(KernelRegistry& r);
void RegisterSizeKernels(KernelRegistry& r);
}  // namespace ferry::ref

namespace ferry::cpu {

void RegisterPlumbingKernels(KernelRegistry& r) {
  // The registry names each def after the backend it is added to ("cpu.If.1", ...).
  ref::RegisterIfKernels(r);
  ref::RegisterLoopKernels(r);
  ref::RegisterScanKernels(r);
  ref::RegisterSequenceKernels(r);
  ref::RegisterSplitToSequenceKernels(r);
  ref::RegisterConcatFromSequenceKernels(r);
  ref::RegisterSequenceMapKernels(r);
  ref::RegisterOptionalKernels(r);
  ref::RegisterConstantKernels(r);
  ref::RegisterShapeKernels(r);
  ref::RegisterSizeKernels(r);
}

}  // namespace ferry::cpu
