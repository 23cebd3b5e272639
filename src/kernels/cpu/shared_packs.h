// Packed copies of constant weights shared by the kernels that read the same initializer: an unrolled loop's
// iterations (RAFT's refinement steps, a traced RNN), weights tied between layers. Process-wide, keyed by the
// source initializer, the layout it is read in and the layout it is packed into.
#pragma once

#include <dnnl.hpp>
#include <memory>

#include "ferry/tensor.h"

namespace ferry::cpu {

// The source is identified by its control block, never by its address: the key's weak_ptr keeps that block from
// being reused while the entry exists. The registry holds no copy: an entry lives while a kernel holds its memory.
// Thread-safe.
class SharedPacks {
 public:
  static SharedPacks& Instance();
  // The copy of `source` (read as `user`) in layout `packed` that some kernel made and still holds, or null.
  std::shared_ptr<const dnnl::memory> Find(const std::weak_ptr<const Tensor>& source, const dnnl::memory::desc& user,
                                           const dnnl::memory::desc& packed);
  // Records `memory`, the copy of `source` (read as `user`) in layout `packed`; drops the entries no kernel holds.
  void Add(const std::weak_ptr<const Tensor>& source, const dnnl::memory::desc& user,
           const dnnl::memory::desc& packed, const std::shared_ptr<const dnnl::memory>& memory);

 private:
  SharedPacks();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ferry::cpu
