// The intra-op thread count of the session whose kernels are being created on this thread. Kernels that fix
// thread-count-dependent state when they are created — oneDNN primitives fix their parallel split, and the Winograd
// convolution also the layout of its packed weights — build it for this count, so that the runs, whose
// KernelContext::threads() is the same count, reuse it instead of building (and packing) it again.
#pragma once

namespace ferry {

// The count a ScopedCreationThreads on this thread set, else all hardware threads (at least 1); never above
// kMaxThreads (ferry/limits.h).
int CreationThreads();

// Sets CreationThreads() on this thread for its lifetime (the executor, while it creates a session's kernels).
class ScopedCreationThreads {
 public:
  explicit ScopedCreationThreads(int threads);
  ~ScopedCreationThreads();
  ScopedCreationThreads(const ScopedCreationThreads&) = delete;
  ScopedCreationThreads& operator=(const ScopedCreationThreads&) = delete;

 private:
  int saved_;
};

}  // namespace ferry
