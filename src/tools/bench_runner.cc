#include "tools/bench_runner.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "ferry/error.h"
#include "ferry/limits.h"

namespace ferry::tools {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

BenchPhaseResult RunBenchPhase(const std::vector<std::unique_ptr<BenchClient>>& clients, int64_t count,
                               double duration_s, const std::function<void(const std::vector<double>&)>& poll) {
  std::mutex mu;
  std::condition_variable cv;
  BenchPhaseResult result;
  std::exception_ptr error;
  std::optional<Clock::time_point> first_start, last_end;
  size_t finished = 0;
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration_s));
  auto worker = [&](BenchClient& client) {
    try {
      for (int64_t mine = 0; !stop.load(); ++mine) {
        if (count > 0) {
          if (next.fetch_add(1) >= count) break;
        } else if (mine > 0 && Clock::now() >= deadline) {
          break;
        }
        const auto t0 = Clock::now();
        std::string failure = client.Request();
        const auto t1 = Clock::now();
        std::lock_guard<std::mutex> lock(mu);
        if (failure.empty()) {
          result.latencies_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        } else {
          if (result.errors++ == 0) result.first_error = std::move(failure);
        }
        if (!first_start || t0 < *first_start) first_start = t0;
        if (!last_end || t1 > *last_end) last_end = t1;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!error) error = std::current_exception();
      stop = true;
    }
    std::lock_guard<std::mutex> lock(mu);
    ++finished;
    cv.notify_all();
  };
  std::vector<std::thread> threads;
  threads.reserve(clients.size());
  for (const auto& c : clients) threads.emplace_back(worker, std::ref(*c));
  {
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return finished == clients.size(); })) {
      if (!poll) continue;
      std::vector<double> snapshot = result.latencies_ms;
      lock.unlock();
      poll(snapshot);
      lock.lock();
    }
  }
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  if (first_start && last_end) result.wall_s = Seconds(*last_end - *first_start);
  return result;
}

void MeasureBenchConfig(const std::vector<std::unique_ptr<BenchClient>>& clients, const BenchOptions& options,
                        BenchResult& r, BenchProgress p, Clock::time_point started,
                        const std::function<void(const BenchProgress&)>& progress) {
  p.config = r.config;
  auto report = [&](bool warming_up, const std::vector<double>& lat) {
    if (!progress) return;
    p.warming_up = warming_up;
    p.done = static_cast<int64_t>(lat.size());
    p.elapsed_s = Seconds(Clock::now() - started);
    if (!warming_up && !lat.empty()) {
      std::vector<double> sorted = lat;
      std::sort(sorted.begin(), sorted.end());
      p.p50_ms = PercentileNearestRank(sorted, 50);
    }
    progress(p);
  };
  if (options.warmup > 0) {
    RunBenchPhase(clients, options.warmup, 0, [&](const std::vector<double>& lat) { report(true, lat); });
  }
  BenchPhaseResult m = RunBenchPhase(clients, options.iterations, options.duration_s,
                                     [&](const std::vector<double>& lat) { report(false, lat); });
  report(false, m.latencies_ms);
  r.requests = static_cast<int64_t>(m.latencies_ms.size());
  r.errors = m.errors;
  r.first_error = std::move(m.first_error);
  r.inferences = r.requests * r.config.batch;
  r.wall_s = m.wall_s;
  r.throughput = m.wall_s > 0 ? static_cast<double>(r.inferences) / m.wall_s : 0;
  r.latency = SummarizeLatencies(std::move(m.latencies_ms), options.percentiles);
}

void ValidateBenchSweep(const BenchOptions& o) {
  if (o.batches.empty()) throw InvalidArgumentError("--batch: the list is empty");
  for (int64_t b : o.batches) {
    if (b < 1) throw InvalidArgumentError("--batch: batch sizes must be at least 1, got " + std::to_string(b));
  }
  if (o.concurrency.empty()) throw InvalidArgumentError("--concurrency: the list is empty");
  for (int c : o.concurrency) {
    if (c < 1 || c > kMaxThreads) {  // a thread per request in flight
      throw InvalidArgumentError("--concurrency: must be 1 to " + std::to_string(kMaxThreads) + ", got " +
                                 std::to_string(c));
    }
  }
  if (o.warmup < 0) throw InvalidArgumentError("--warmup: must be 0 or more");
  if ((o.iterations > 0) == (o.duration_s > 0)) {
    throw InvalidArgumentError("bench: give either a number of iterations or a duration (one of them, above 0)");
  }
  for (double p : o.percentiles) {
    if (!(p > 0 && p <= 100)) {
      throw InvalidArgumentError("--percentiles: each must be in (0, 100], got " + std::to_string(p));
    }
  }
}

}  // namespace ferry::tools
