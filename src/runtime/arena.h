// Activation arenas: the executor's static memory plan, one per input-shape signature.
//
// The executor prepares every kernel for a signature before its first run (kernel.h: Prepare declares each
// output's dtype and shape, which outputs are views of an input and which take over an input's buffer), predicts
// each buffer's lifetime from the steps that read it, and plans them (PlanArena): PlanMemory (memory_plan.h) turns
// the buffers into offsets in one arena (ArenaPlan). Outputs whose shape only the run knows (data-dependent),
// buffers that escape the run (graph outputs and their views) and subgraph values are not planned.
//
// Every run of the signature, the first included, takes one arena block (ArenaPlan::Acquire: a free block, or a
// new one when every block is busy with a concurrent run) and hands each planned (step, output) its slice
// (ArenaRun), so no run allocates activation memory the plan covers. The plan is checked as it is used: a slice is
// handed out only when its request fits and no slice still held shares its bytes;
// otherwise (a kernel asks for more, or a value lives longer than predicted: a subgraph returned it, an in-place
// reuse did not happen) that output falls back to the default allocator, so a plan can cost memory but never
// corrupt a value.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "kernels/kernel.h"

namespace ferry::runtime {

// What the executor drives during a top-level run: the step about to run, then the step's output allocations.
class StepAllocator : public OutputAllocator {
 public:
  virtual void set_step(int step) = 0;
};

class ArenaPlan : public std::enable_shared_from_this<ArenaPlan> {
 public:
  struct Slice {
    int step = 0, output = 0;
    int64_t bytes = 0, offset = 0;
    int first_step = 0, last_step = 0;  // the predicted lifetime
  };
  // One arena: the memory, per slice whether this run has handed it out, and the slices still held (few at any
  // time: a new slice is checked against them, not against every slice that shares its bytes).
  struct Block {
    std::shared_ptr<void> memory;
    std::vector<char> used;
    std::vector<int> live;
  };

  ArenaPlan(std::vector<Slice> slices, int64_t arena_bytes, int64_t lower_bound);

  // The slice planned for output `output` of step `step`, or -1.
  int Find(int step, int output) const;
  const std::vector<Slice>& slices() const { return slices_; }
  int64_t arena_bytes() const { return arena_bytes_; }
  int64_t lower_bound() const { return lower_bound_; }
  // A block for one run; it goes back to the plan's free list when the run and every slice it handed out
  // have let go of it. Throws ResourceExhaustedError when a new block cannot be allocated.
  std::shared_ptr<Block> Acquire();
  size_t blocks_created() const;

 private:
  void Release(Block* b);
  std::vector<Slice> slices_;
  std::unordered_map<int64_t, int> index_;  // (step << 20 | output) -> slice
  int64_t arena_bytes_, lower_bound_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Block>> free_;
  size_t created_ = 0;
};

// One buffer of a plan: output `output` of step `step` allocates `bytes`, live from `first_step` to `last_step`
// (inclusive: released during that step). `alias_of`: the index of the buffer whose bytes it takes over in place
// (that buffer dies at this one's first step and is at least as large; BufferRequest::alias_of), -1: none.
struct PlannedBuffer {
  int step = 0, output = 0;
  int64_t bytes = 0;
  int first_step = 0, last_step = 0;
  int alias_of = -1;
};

// The plan of `buffers` (sizes > 0), or nullptr when there are none. Throws InvalidArgumentError as PlanMemory
// does for lifetimes or aliases that do not hold.
std::shared_ptr<ArenaPlan> PlanArena(std::span<const PlannedBuffer> buffers);

// The storage bytes of a tensor the arena may plan, or -1 when it is not a candidate (a string tensor, or too
// large to be sane: the default allocator then reports it).
int64_t ArenaTensorBytes(DataType dtype, const Shape& shape);

// Hands out the slices of one block during a run of the plan's signature.
class ArenaRun : public StepAllocator {
 public:
  explicit ArenaRun(std::shared_ptr<ArenaPlan> plan);
  void set_step(int step) override { step_ = step; }
  bool Allocate(int output, DataType dtype, const Shape& shape, bool zero, Tensor* out) override;

 private:
  std::shared_ptr<ArenaPlan> plan_;
  std::shared_ptr<ArenaPlan::Block> block_;
  int step_ = 0;
};

}  // namespace ferry::runtime
