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
    b->used.assign(slices_.size(), 0);
    b->live.reserve(slices_.size());
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

int64_t ArenaTensorBytes(DataType dtype, const Shape& shape) {
  return dtype == DataType::kString ? -1 : TensorBytes(dtype, shape);
}

std::shared_ptr<ArenaPlan> PlanArena(std::span<const PlannedBuffer> buffers) {
  if (buffers.empty()) return nullptr;
  std::vector<BufferRequest> requests;
  requests.reserve(buffers.size());
  for (const PlannedBuffer& b : buffers) requests.push_back({b.bytes, b.first_step, b.last_step, b.alias_of});
  const MemoryPlan plan = PlanMemory(requests, kAlignment);
  std::vector<ArenaPlan::Slice> slices(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlannedBuffer& b = buffers[i];
    slices[i] = {b.step, b.output, b.bytes, plan.offsets[i], b.first_step, b.last_step};
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
  // A slice still held that shares these bytes (a value living longer than predicted): not this slice.
  for (int c : b.live) {
    const auto& held = plan_->slices()[static_cast<size_t>(c)];
    if (held.offset < slice.offset + slice.bytes && slice.offset < held.offset + held.bytes) return false;
  }
  b.used[static_cast<size_t>(index)] = 1;
  b.live.push_back(index);
  char* data = static_cast<char*>(b.memory.get()) + slice.offset;
  if (zero) std::memset(data, 0, static_cast<size_t>(bytes));
  std::shared_ptr<void> owner(data, [block = block_, index](void*) {
    std::vector<int>& live = block->live;
    for (size_t k = live.size(); k-- > 0;) {
      if (live[k] != index) continue;
      live[k] = live.back();
      live.pop_back();
      break;
    }
  });
  *out = Tensor::Wrap(dtype, shape, std::move(owner), data);
  return true;
}

}  // namespace ferry::runtime
