// Per model version: a bounded queue, the dynamic batcher (batcher.h) and N instances, each a Session run by its
// own thread. Requests are concatenated along dim 0 into one batch, run once, and the outputs split back.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ferry/session.h"
#include "server/batcher.h"
#include "server/infer_request.h"
#include "server/metrics.h"

namespace ferry::server {

struct SchedulerOptions {
  std::string model, version;      // for messages
  BatchPolicy batch;
  size_t max_queue_size = 64;      // requests waiting (not running); never unbounded
  uint64_t default_timeout_us = 0; // 0: no timeout
  bool timeout_delay = false;      // an expired request moves behind the others instead of failing
  bool allow_timeout_override = false;
  std::vector<std::string> outputs;  // the outputs a request gets when it names none
};

class Scheduler {
 public:
  Scheduler(std::vector<std::unique_ptr<Session>> instances, SchedulerOptions options,
            std::shared_ptr<ModelStats> stats);
  ~Scheduler();  // Drain()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  enum class Submitted { kQueued, kQueueFull, kClosed };
  // Queues the request (moving from `request` and `done`); `done` is then called exactly once, from an instance
  // thread. kQueueFull / kClosed: nothing is moved and the caller answers (503 / retry on the model's new load).
  Submitted Submit(InferRequest& request, InferCallback& done);
  // Stops accepting requests, runs every queued one, joins the instance threads. Idempotent.
  void Drain();

  size_t queued() const;
  const SchedulerOptions& options() const { return options_; }
  // What the instances hold now: weights, pre-packed kernel data, activation arenas (bytes).
  int64_t MemoryBytes() const;

 private:
  struct Pending {
    InferRequest request;
    InferCallback done;
    Clock::time_point arrival;
    Clock::time_point deadline = Clock::time_point::max();
    uint64_t shape_key = 0;
  };
  void Worker(size_t instance);
  // Removes cancelled and timed-out requests from the queue (the lock is held).
  void Sweep(Clock::time_point now, std::vector<std::pair<Pending, InferResponse>>* dropped);
  void Execute(const Session& session, std::vector<Pending>& batch);
  void Finish(Pending& p, InferResponse response);

  std::vector<std::unique_ptr<Session>> instances_;
  SchedulerOptions options_;
  std::shared_ptr<ModelStats> stats_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
  std::mutex drain_mutex_;
};

// Concatenates tensors of equal dtype and inner dims along dim 0; slices rows [begin, end) of dim 0.
Tensor ConcatBatch(const std::vector<const Tensor*>& parts);
Tensor SliceBatch(const Tensor& t, int64_t begin, int64_t end);

}  // namespace ferry::server
