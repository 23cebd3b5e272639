#include "runtime/arena.h"

#include <algorithm>
#include <cstring>

#include "core/buffer_pool.h"
#include "ferry/error.h"
#include "runtime/memory_plan.h"

namespace ferry::runtime {
namespace {

constexpr int64_t kAlignment = 64;

int64_t Key(int step, int output) { return (static_cast<int64_t>(step) << 20) | output; }

// Storage bytes of a tensor, or -1 when it is not an arena candidate (too large to be sane: the default
// allocator then reports it).
int64_t TensorBytes(DataType dtype, const Shape& shape) {
  const int64_t count = ShapeElementCount(shape);
  const unsigned __int128 bits = static_cast<unsigned __int128>(count) * static_cast<unsigned>(DataTypeBits(dtype));
  if (bits > (static_cast<unsigned __int128>(1) << 49)) return -1;
  return static_cast<int64_t>((bits + 7) / 8);
}

}  // namespace

ArenaPlan::ArenaPlan(std::vector<Slice> slices, int64_t arena_bytes, int64_t lower_bound)
    : slices_(std::move(slices)), arena_bytes_(arena_bytes), lower_bound_(lower_bound) {
  for (size_t i = 0; i < slices_.size(); ++i) index_[Key(slices_[i].step, slices_[i].output)] = static_cast<int>(i);
}

int ArenaPlan::Find(int step, int output) const {
  auto it = index_.find(Key(step, output));
  return it == index_.end() ? -1 : it->second;
}

std::shared_ptr<ArenaPlan::Block> ArenaPlan::Acquire() {
  std::unique_ptr<Block> b;
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      b = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!b) {
    b = std::make_unique<Block>();
    b->memory = AllocateBuffer(static_cast<size_t>(std::max<int64_t>(arena_bytes_, 1)), /*zero=*/false);
    b->live.assign(slices_.size(), 0);
    b->used.assign(slices_.size(), 0);
    std::lock_guard lock(mu_);
    ++created_;
  }
  std::fill(b->used.begin(), b->used.end(), 0);
  return std::shared_ptr<Block>(b.release(), [plan = shared_from_this()](Block* p) { plan->Release(p); });
}

void ArenaPlan::Release(Block* b) {
  std::unique_ptr<Block> owned(b);
  std::lock_guard lock(mu_);
  free_.push_back(std::move(owned));
}

size_t ArenaPlan::blocks_created() const {
  std::lock_guard lock(mu_);
  return created_;
}

ArenaRecorder::ArenaRecorder() : state_(std::make_shared<State>()) {}

bool ArenaRecorder::Allocate(int output, DataType dtype, const Shape& shape, bool zero, Tensor* out) {
  const int64_t bytes = TensorBytes(dtype, shape);
  if (bytes <= 0) return false;
  State& s = *state_;
  const int64_t key = Key(s.step, output);
  if (!s.seen.insert(key).second) {
    // A second buffer for one output in one step: neither is planned.
    for (auto& r : s.records) {
      if (r.step == s.step && r.output == output) r.bytes = -1;
    }
    return false;
  }
  std::shared_ptr<void> buffer = AllocateBuffer(static_cast<size_t>(bytes), zero);
  void* data = buffer.get();
  const size_t index = s.records.size();
  s.records.push_back({s.step, output, bytes});
  // The buffer's release is the end of its lifetime, whoever holds it last.
  std::shared_ptr<void> owner(data, [state = state_, index, buffer = std::move(buffer)](void*) mutable {
    Record& r = state->records[index];
    r.freed = state->done ? -2 : state->step;  // -2: outlived the run
    buffer.reset();
  });
  *out = Tensor::Wrap(dtype, shape, std::move(owner), data);
  return true;
}

std::shared_ptr<ArenaPlan> ArenaRecorder::Finish(int end_step) {
  State& s = *state_;
  s.step = end_step;
  s.done = true;
  std::vector<BufferRequest> requests;
  std::vector<const Record*> planned;
  for (const auto& r : s.records) {
    if (r.bytes <= 0 || r.freed < r.step) continue;  // duplicate key, still held, or outlived the run
    requests.push_back({r.bytes, r.step, r.freed});
    planned.push_back(&r);
  }
  if (requests.empty()) return nullptr;
  const MemoryPlan plan = PlanMemory(requests, kAlignment);
  std::vector<ArenaPlan::Slice> slices(planned.size());
  for (size_t i = 0; i < planned.size(); ++i) {
    slices[i] = {planned[i]->step, planned[i]->output, planned[i]->bytes, plan.offsets[i], planned[i]->step,
                 planned[i]->freed, {}};
  }
  // A slice may be handed out only after every earlier slice sharing its bytes is released.
  for (size_t j = 0; j < slices.size(); ++j) {
    const auto& b = slices[j];
    for (size_t i = 0; i < slices.size(); ++i) {
      const auto& a = slices[i];
      if (i == j || a.first_step > b.first_step || (a.first_step == b.first_step && i > j)) continue;
      const bool share = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      if (share) slices[j].conflicts.push_back(static_cast<int>(i));
    }
  }
  return std::make_shared<ArenaPlan>(std::move(slices), plan.arena_bytes, plan.lower_bound);
}

ArenaRun::ArenaRun(std::shared_ptr<ArenaPlan> plan) : plan_(std::move(plan)), block_(plan_->Acquire()) {}

bool ArenaRun::Allocate(int output, DataType dtype, const Shape& shape, bool zero, Tensor* out) {
  const int index = plan_->Find(step_, output);
  if (index < 0) return false;
  const auto& slice = plan_->slices()[static_cast<size_t>(index)];
  ArenaPlan::Block& b = *block_;
  const int64_t bytes = TensorBytes(dtype, shape);
  if (bytes <= 0 || bytes > slice.bytes || b.used[static_cast<size_t>(index)]) return false;
  for (int c : slice.conflicts) {
    if (b.live[static_cast<size_t>(c)]) return false;
  }
  b.used[static_cast<size_t>(index)] = 1;
  b.live[static_cast<size_t>(index)] = 1;
  char* data = static_cast<char*>(b.memory.get()) + slice.offset;
  if (zero) std::memset(data, 0, static_cast<size_t>(bytes));
  std::shared_ptr<void> owner(data, [block = block_, index](void*) { block->live[static_cast<size_t>(index)] = 0; });
  *out = Tensor::Wrap(dtype, shape, std::move(owner), data);
  return true;
}

}  // namespace ferry::runtime
