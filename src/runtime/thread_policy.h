// Adaptive intra-op threads: a run keeps all of the session's threads while the host gives them the CPUs, and
// runs on the calling thread alone while it does not (docs/threads.md).
//
// Why: every parallel region of a run (OpenMP, in oneDNN's primitives and in Ferry's own kernels) ends at a
// barrier, so a region lasts as long as its slowest thread. On a busy host a thread that waits for a CPU holds up
// the whole team at every region of the run: on 2 cores with another process busy, ResNet-50 took 118-479 ms with
// 2 threads against 73 ms with 1. One thread has no barrier to wait at.
//
// How: a run with all threads is measured now and then (at most once every kMeasureEveryNs, so short runs pay
// nothing): the time each team thread spent runnable but waiting for a CPU during the run, from the scheduler's
// per-thread statistics (/proc/self/task/TID/schedstat). When in kStrikes measured runs in a row some team thread
// waited for more than kContendedShare of the run (one such run is noise: a wake-up delayed once), the host is
// contended: the next runs execute on the calling thread alone (below), and one run in kFirstProbe (doubling up
// to kMaxProbe while the host stays busy) tries all threads again to see whether the CPUs came back. Where the
// statistics cannot be read, runs keep all threads.
//
// A serial run tells its kernels it has one thread (KernelContext::threads, core/parallel.h's thread_cap over any
// count a kernel prepared for, and OpenMP's thread count): oneDNN plans some splits (its GEMM's) by the thread
// count it is told when it runs, and a split made for two threads and run by one does half the work. Primitives that fixed their team size when they were
// made get a team of one (max-active-levels 0) and split by the team they get, as when called from inside a
// parallel region.
//
// Cutting a run short: a run with all threads that takes longer than kSlowParallel times the typical wall time
// of its input signature's runs with all threads, or a try that takes longer than kSlowProbe times its serial
// runs', runs the rest of its steps on the calling thread and counts as contended. So the onset of a load and a
// try on a busy host cost a bounded slowdown, not a run many times slower than one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ferry::runtime {

// The decision, apart from the measuring (tests drive it with observations).
class ThreadDecider {
 public:
  static constexpr int kFirstProbe = 4;  // serial runs before the first try with all threads
  static constexpr int kMaxProbe = 64;   // ... growing to this while the host stays contended
  static constexpr int kStrikes = 2;     // contended measured runs in a row that make runs serial

  // Whether the next run gets all threads; when it does after serial runs, it is a probe and must be measured.
  struct Choice {
    bool parallel = true;
    bool probe = false;
  };
  Choice Next();
  // What a measured run with all threads found.
  void Observe(bool contended);
  bool serial() const { return serial_; }
  int probe_interval() const { return interval_; }

 private:
  bool serial_ = false;
  int strikes_ = 0;
  int until_probe_ = 0;
  int interval_ = kFirstProbe;
};

// Whether a run was contended: some team thread waited for a CPU for more than kContendedShare of the run's wall
// time, and for at least kMinWaitNs (a few scheduler ticks' worth of waiting in a short run is noise).
constexpr double kContendedShare = 0.1;
constexpr int64_t kMinWaitNs = 200'000;
bool Contended(int64_t wall_ns, int64_t max_wait_ns);

// Ferry's adaptive thread policy for one session (thread-safe: runs on several threads at once share it).
class ThreadPolicy {
 public:
  static constexpr int64_t kMeasureEveryNs = 10'000'000;
  static constexpr double kSlowParallel = 2.0;
  static constexpr double kSlowProbe = 1.5;
  explicit ThreadPolicy(int threads) : threads_(threads) {}

  // One run under the policy: decides at construction (serial runs have OpenMP's nesting turned off on the
  // calling thread for the scope), measures the run when due, and reports at Finish. `signature`: what tells
  // runs of the same input signature (their typical times are comparable); nullptr: none.
  class Run {
   public:
    // nullptr policy: a run with the fixed count `fixed_threads`, nothing to decide or measure.
    explicit Run(ThreadPolicy* policy, const void* signature = nullptr, int fixed_threads = 0);
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
    // While it lives, a serialized run has its full team back: for preparing a kernel during the run, so that
    // what it plans (oneDNN primitives, their splits) is what a run with all threads plans.
    class FullTeam {
     public:
      explicit FullTeam(Run* run);  // nullptr or a run with all threads: nothing to do
      ~FullTeam();
      FullTeam(const FullTeam&) = delete;
      FullTeam& operator=(const FullTeam&) = delete;

     private:
      Run* run_;
    };

    // Between two steps of the run: a run past its time budget runs the rest on the calling thread.
    void AfterStep() {
      if (budget_ns_ > 0 && !cut_) CutIfSlow();
    }
    // Call when the run succeeded: records what the measurement found. `threads_used` (1 when the run, or the
    // rest of it, ran on the calling thread) and `cpu_wait_ms` (the longest wait for a CPU of a team thread, -1
    // when the run was not measured) describe the run.
    void Finish();
    int threads_used() const { return threads_used_; }
    double cpu_wait_ms() const { return cpu_wait_ms_; }

   private:
    void CutIfSlow();
    void Serialize();
    void ApplySerial() const;
    void Restore() const;

    ThreadPolicy* policy_;
    const void* signature_;
    int threads_used_ = 0;
    int saved_levels_ = -1;   // >= 0 while serialized: restore OpenMP's max-active-levels to it
    int saved_threads_ = -1;  // ... OpenMP's thread count (nthreads-var)
    int saved_cap_ = 0;       // ... and core/parallel.h's thread_cap
    bool parallel_ = false;
    bool measuring_ = false;
    bool cut_ = false;
    double budget_ns_ = 0;  // > 0: the wall time past which the rest runs serially
    std::vector<int64_t> waits_;
    std::chrono::steady_clock::time_point start_;
    double cpu_wait_ms_ = -1;
  };

  int threads() const { return threads_; }
  bool serial() const;
  // What a measured run with all threads found (Run::Finish reports it; tests call it to steer the policy).
  void Observe(bool contended);

 private:
  // The typical wall time (exponentially weighted, ns) of the latest signature's runs in one mode.
  struct Typical {
    const void* signature = nullptr;
    double ns = 0;
    double For(const void* s) const { return s && s == signature ? ns : 0; }
    void Add(const void* s, double wall_ns);
  };

  int threads_;
  mutable std::mutex mu_;
  ThreadDecider decider_;
  std::chrono::steady_clock::time_point last_measured_{};
  Typical parallel_runs_, serial_runs_;
};

// The calling thread's OpenMP team of `threads` (itself first): each member's wait for a CPU so far, in ns, from
// the scheduler's statistics. False where they cannot be read (no /proc, no schedstat, a member that exited).
bool ReadTeamCpuWaits(int threads, std::vector<int64_t>* waits_ns);

}  // namespace ferry::runtime
