#include "server/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>

#include "ferry/error.h"

namespace ferry::server {
namespace {

uint64_t Nanos(Clock::duration d) {
  return static_cast<uint64_t>(std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()));
}

uint64_t ShapeKey(const InferRequest& r) {
  std::vector<const std::pair<std::string, Tensor>*> inputs;
  for (const auto& in : r.inputs) inputs.push_back(&in);
  std::sort(inputs.begin(), inputs.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const auto* in : inputs) {
    mix(std::hash<std::string>()(in->first));
    mix(static_cast<uint64_t>(in->second.dtype()));
    for (size_t d = 1; d < in->second.shape().size(); ++d) mix(static_cast<uint64_t>(in->second.shape()[d]));
    mix(in->second.shape().size());
  }
  return h;
}

const Tensor* FindTensor(const std::vector<std::pair<std::string, Tensor>>& list, const std::string& name) {
  for (const auto& [n, t] : list) {
    if (n == name) return &t;
  }
  return nullptr;
}

}  // namespace

Tensor ConcatBatch(const std::vector<const Tensor*>& parts) {
  const Tensor& first = *parts.front();
  Shape shape = first.shape();
  int64_t rows = 0;
  for (const Tensor* p : parts) rows += p->shape()[0];
  shape[0] = rows;
  Tensor out = Tensor::Uninitialized(first.dtype(), shape);
  if (first.dtype() == DataType::kString) {
    int64_t at = 0;
    for (const Tensor* p : parts) {
      std::copy(p->strings(), p->strings() + p->size(), out.strings() + at);
      at += p->size();
    }
    return out;
  }
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (const Tensor* p : parts) {
    std::memcpy(dst, p->raw_data(), p->nbytes());
    dst += p->nbytes();
  }
  return out;
}

Tensor SliceBatch(const Tensor& t, int64_t begin, int64_t end) {
  Shape shape = t.shape();
  const int64_t rows = shape[0];
  shape[0] = end - begin;
  Tensor out = Tensor::Uninitialized(t.dtype(), shape);
  const int64_t per_row = rows == 0 ? 0 : t.size() / rows;
  if (t.dtype() == DataType::kString) {
    std::copy(t.strings() + begin * per_row, t.strings() + end * per_row, out.strings());
    return out;
  }
  const size_t row_bytes = rows == 0 ? 0 : t.nbytes() / static_cast<size_t>(rows);
  std::memcpy(out.raw_data(), static_cast<const uint8_t*>(t.raw_data()) + static_cast<size_t>(begin) * row_bytes,
              static_cast<size_t>(end - begin) * row_bytes);
  return out;
}

Scheduler::Scheduler(std::vector<std::unique_ptr<Session>> instances, SchedulerOptions options,
                     std::shared_ptr<ModelStats> stats)
    : instances_(std::move(instances)), options_(std::move(options)), stats_(std::move(stats)) {
  for (size_t i = 0; i < instances_.size(); ++i) threads_.emplace_back([this, i] { Worker(i); });
}

Scheduler::~Scheduler() { Drain(); }

void Scheduler::Drain() {
  std::lock_guard drain(drain_mutex_);
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

size_t Scheduler::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

int64_t Scheduler::MemoryBytes() const {
  int64_t total = 0;
  for (const auto& s : instances_) {
    total += s->PredictMemory().weights_bytes + s->kernel_held_bytes();
    for (const auto& a : s->arenas()) total += a.arena_bytes * static_cast<int64_t>(std::max<size_t>(a.blocks, 1));
  }
  return total;
}

Scheduler::Submitted Scheduler::Submit(InferRequest& request, InferCallback& done) {
  Pending p;
  p.arrival = Clock::now();
  uint64_t timeout = options_.default_timeout_us;
  if (options_.allow_timeout_override && request.timeout_us > 0 && (timeout == 0 || request.timeout_us < timeout)) {
    timeout = request.timeout_us;
  }
  if (timeout > 0) p.deadline = p.arrival + std::chrono::microseconds(timeout);
  p.shape_key = ShapeKey(request);
  {
    std::lock_guard lock(mutex_);
    if (closing_) return Submitted::kClosed;
    if (queue_.size() >= options_.max_queue_size) {
      stats_->RecordFailure(FailureReason::kRejected, 0);
      return Submitted::kQueueFull;
    }
    p.request = std::move(request);
    p.done = std::move(done);
    stats_->pending.fetch_add(1);
    queue_.push_back(std::move(p));
  }
  cv_.notify_one();
  return Submitted::kQueued;
}

void Scheduler::Finish(Pending& p, InferResponse response) {
  const uint64_t ns = Nanos(Clock::now() - p.arrival);
  response.model_version = options_.version;
  if (response.status == 200) {
    stats_->success.Add(ns);
    stats_->inference_count.fetch_add(static_cast<uint64_t>(p.request.batch_size));
    stats_->last_inference_ms.store(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
  } else {
    stats_->RecordFailure(response.reason == FailureReason::kNone ? FailureReason::kOther : response.reason, ns);
  }
  stats_->request_us.Observe(static_cast<double>(ns) / 1000.0);
  stats_->pending.fetch_sub(1);
  try {
    if (p.done) p.done(std::move(response));
  } catch (...) {  // a transport callback must not take an instance thread down
  }
}

void Scheduler::Sweep(Clock::time_point now, std::vector<std::pair<Pending, InferResponse>>* dropped) {
  std::deque<Pending> kept, delayed;
  for (auto& p : queue_) {
    if (p.request.cancelled && p.request.cancelled->load()) {
      dropped->emplace_back(std::move(p), InferResponse::Fail(499, FailureReason::kCanceled,
                                                              "the client closed the connection; request cancelled"));
    } else if (p.deadline <= now) {
      if (options_.timeout_delay) {
        p.deadline = Clock::time_point::max();
        delayed.push_back(std::move(p));
      } else {
        const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(now - p.arrival).count();
        InferResponse r = InferResponse::Fail(503, FailureReason::kRejected,
                                              "request timed out after " + std::to_string(waited) +
                                                  " us in the queue of model '" + options_.model + "' version " +
                                                  options_.version);
        r.timed_out = true;
        dropped->emplace_back(std::move(p), std::move(r));
      }
    } else {
      kept.push_back(std::move(p));
    }
  }
  for (auto& p : delayed) kept.push_back(std::move(p));
  queue_.swap(kept);
}

void Scheduler::Worker(size_t instance) {
  std::unique_lock lock(mutex_);
  for (;;) {
    const auto now = Clock::now();
    std::vector<std::pair<Pending, InferResponse>> dropped;
    Sweep(now, &dropped);
    std::vector<Pending> batch;
    std::optional<Clock::time_point> wake;
    if (!queue_.empty()) {
      std::vector<QueuedView> views;
      views.reserve(queue_.size());
      for (const auto& p : queue_) views.push_back({p.request.batch_size, p.arrival, p.shape_key});
      // Draining: nothing more will arrive, so run what is there without waiting.
      const auto decision = DecideBatch(views, options_.batch, closing_ ? Clock::time_point::max() : now);
      for (size_t i = 0; i < decision.take; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      wake = decision.wait_until;
      for (const auto& p : queue_) {
        if (p.deadline != Clock::time_point::max() && (!wake || p.deadline < *wake)) wake = p.deadline;
      }
    }
    if (dropped.empty() && batch.empty()) {
      if (queue_.empty()) {
        if (closing_) return;
        cv_.wait(lock);
      } else if (wake) {
        cv_.wait_until(lock, *wake);
      } else {
        cv_.wait(lock);
      }
      continue;
    }
    if (!queue_.empty()) cv_.notify_one();
    lock.unlock();
    for (auto& [p, response] : dropped) Finish(p, std::move(response));
    if (!batch.empty()) Execute(*instances_[instance], batch);
    lock.lock();
  }
}

void Scheduler::Execute(const Session& session, std::vector<Pending>& batch) {
  const auto start = Clock::now();
  for (const auto& p : batch) {
    stats_->queue.Add(Nanos(start - p.arrival));
    stats_->queue_us.Observe(static_cast<double>(Nanos(start - p.arrival)) / 1000.0);
  }
  const auto fail_all = [&](int status, FailureReason reason, const std::string& message) {
    for (auto& p : batch) Finish(p, InferResponse::Fail(status, reason, message));
  };
  int64_t total = 0;
  for (const auto& p : batch) total += p.request.batch_size;
  std::vector<std::pair<std::string, Tensor>> inputs;
  std::vector<std::pair<std::string, Tensor>> outputs;
  Clock::time_point inputs_ready, ran;
  try {
    if (batch.size() == 1) {
      inputs = batch.front().request.inputs;
    } else {
      for (const auto& [name, t0] : batch.front().request.inputs) {
        std::vector<const Tensor*> parts;
        for (const auto& p : batch) parts.push_back(FindTensor(p.request.inputs, name));
        inputs.emplace_back(name, ConcatBatch(parts));
      }
    }
    inputs_ready = Clock::now();
    outputs = session.Run(inputs);
    ran = Clock::now();
  } catch (const Error& e) {
    const bool caller = e.category() == ErrorCategory::kInvalidArgument;
    fail_all(caller ? 400 : 500, caller ? FailureReason::kOther : FailureReason::kBackend,
             "model '" + options_.model + "' version " + options_.version + ": " + e.what());
    return;
  } catch (const std::exception& e) {
    fail_all(500, FailureReason::kBackend, "model '" + options_.model + "': internal error: " + e.what());
    return;
  }
  if (batch.size() > 1) {
    for (const auto& [name, t] : outputs) {
      if (t.rank() == 0 || t.dim(0) != total) {
        fail_all(500, FailureReason::kBackend,
                 "model '" + options_.model + "': output '" + name + "' has shape " + ShapeToString(t.shape()) +
                     ", whose first dim is not the batch size " + std::to_string(total) +
                     ": the model does not batch along dim 0 (set max_batch_size: 0)");
        return;
      }
    }
  }
  std::vector<InferResponse> responses(batch.size());
  int64_t offset = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& req = batch[i].request;
    const auto& wanted = req.outputs.empty() ? options_.outputs : req.outputs;
    for (const auto& name : wanted) {
      const Tensor* t = FindTensor(outputs, name);
      if (!t) continue;  // names were checked against the config by the transport
      responses[i].outputs.emplace_back(
          name, batch.size() == 1 ? *t : SliceBatch(*t, offset, offset + req.batch_size));
    }
    offset += req.batch_size;
  }
  const auto done = Clock::now();
  stats_->RecordBatch(total, Nanos(inputs_ready - start), Nanos(ran - inputs_ready), Nanos(done - ran));
  for (size_t i = 0; i < batch.size(); ++i) Finish(batch[i], std::move(responses[i]));
}

}  // namespace ferry::server
