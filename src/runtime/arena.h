// Activation arenas: the executor's static memory plan, one per input-shape signature.
//
// The first run of a signature records every output buffer a top-level kernel step allocates through its
// KernelContext (ArenaRecorder): its (step, output) key, its size, and the step at which its last holder let go
// of it. Lifetimes are measured, not predicted, so whatever shares a buffer — a Reshape or Identity view, an
// in-place sum that took over its addend (KernelContext::ReuseInput) — keeps it alive exactly as long as it
// really lives. Buffers still held when the run ends (graph outputs, anything else that escapes) stay out of
// the plan. PlanMemory (memory_plan.h) turns the rest into offsets in one arena (ArenaPlan).
//
// Later runs of the signature take one arena block (ArenaPlan::Acquire: a free block, or a new one when every
// block is busy with a concurrent run) and hand each planned (step, output) its slice (ArenaRun), so a steady
// state run allocates no activation memory. The plan is checked as it is used: a slice is handed out only when
// its request fits and every earlier buffer that shares its bytes has been released; otherwise (a kernel asks
// for more, or a value lives longer than in the recorded run) that output falls back to the default allocator,
// so a plan can cost memory but never corrupt a value. Subgraph (If/Loop/Scan body) values are not planned.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
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
    int first_step = 0, last_step = 0;  // the recorded lifetime
    std::vector<int> conflicts;          // earlier slices sharing bytes with this one (indices)
  };
  // One arena: the memory and, per slice, whether it is handed out and still held.
  struct Block {
    std::shared_ptr<void> memory;
    std::vector<char> live, used;
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

// Records the output buffers of one run (the first of its signature).
class ArenaRecorder : public StepAllocator {
 public:
  ArenaRecorder();
  void set_step(int step) override { state_->step = step; }
  bool Allocate(int output, DataType dtype, const Shape& shape, bool zero, Tensor* out) override;
  // Call after the run has released everything it holds (`end_step`: one past the last step). Returns the plan
  // of the buffers released within the run, or nullptr when there is nothing to plan.
  std::shared_ptr<ArenaPlan> Finish(int end_step);

 private:
  struct Record {
    int step, output;
    int64_t bytes;
    int freed = -1;
  };
  struct State {
    int step = 0;
    bool done = false;
    std::vector<Record> records;
    std::unordered_set<int64_t> seen;  // keys already recorded (a second allocation of one key is not planned)
  };
  std::shared_ptr<State> state_;
};

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
