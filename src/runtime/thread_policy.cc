#include "runtime/thread_policy.h"

#include <fcntl.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/parallel.h"

namespace ferry::runtime {

ThreadDecider::Choice ThreadDecider::Next() {
  if (!serial_) return {true, false};
  if (until_probe_ > 0) {
    --until_probe_;
    return {false, false};
  }
  until_probe_ = interval_;  // a probe in flight: concurrent runs stay serial until it reports
  return {true, true};
}

void ThreadDecider::Observe(bool contended) {
  if (!contended) {
    serial_ = false;
    strikes_ = 0;
    interval_ = kFirstProbe;
    return;
  }
  if (serial_) {
    interval_ = std::min(interval_ * 2, kMaxProbe);  // a probe found the host still busy
  } else if (++strikes_ < kStrikes) {
    return;
  }
  serial_ = true;
  strikes_ = 0;
  until_probe_ = interval_;
}

bool Contended(int64_t wall_ns, int64_t max_wait_ns) {
  return max_wait_ns >= kMinWaitNs && static_cast<double>(max_wait_ns) > kContendedShare * static_cast<double>(wall_ns);
}

namespace {

// At most this many members of a team are measured (evenly spread), so that measuring a wide team stays cheap.
constexpr int kMaxMeasured = 16;

// The schedstat files of the calling thread's OpenMP team members, opened once per team size.
class TeamStatFiles {
 public:
  ~TeamStatFiles() { Close(); }
  // The open files for a team of `threads`, or nullptr when they cannot be had.
  const std::vector<int>* For(int threads) {
    if (threads != threads_ || failed_) {
      if (threads == threads_ && failed_) return nullptr;
      Open(threads);
    }
    return failed_ ? nullptr : &fds_;
  }
  void Invalidate() { threads_ = 0; }

 private:
  void Open(int threads) {
    Close();
    threads_ = threads;
    failed_ = false;
    std::vector<long> tids(static_cast<size_t>(threads), 0);
#pragma omp parallel num_threads(threads)
    { tids[static_cast<size_t>(omp_get_thread_num())] = syscall(SYS_gettid); }
    const int measured = std::min(threads, kMaxMeasured);
    for (int k = 0; k < measured; ++k) {
      const int i = static_cast<int>(static_cast<int64_t>(k) * threads / measured);
      if (tids[static_cast<size_t>(i)] == 0) continue;  // a smaller team (a nested call): measure who ran
      const std::string path = "/proc/self/task/" + std::to_string(tids[static_cast<size_t>(i)]) + "/schedstat";
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        failed_ = true;
        Close();
        return;
      }
      fds_.push_back(fd);
    }
  }
  void Close() {
    for (int fd : fds_) ::close(fd);
    fds_.clear();
  }

  int threads_ = 0;
  bool failed_ = false;
  std::vector<int> fds_;
};

thread_local TeamStatFiles team_files;

// The second field of a schedstat file: time spent waiting on a run queue, ns.
bool ReadWait(int fd, int64_t* wait_ns) {
  char buf[96];
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoull(buf, &end, 10);  // time on the CPU
  if (end == buf) return false;
  const char* wait = end;
  *wait_ns = static_cast<int64_t>(std::strtoull(wait, &end, 10));
  return end != wait;
}

}  // namespace

bool ReadTeamCpuWaits(int threads, std::vector<int64_t>* waits_ns) {
  const std::vector<int>* fds = team_files.For(threads);
  if (!fds) return false;
  waits_ns->resize(fds->size());
  for (size_t i = 0; i < fds->size(); ++i) {
    if (!ReadWait((*fds)[i], &(*waits_ns)[i])) {
      team_files.Invalidate();  // a member exited: the next measurement finds the team anew
      return false;
    }
  }
  return true;
}

bool ThreadPolicy::serial() const {
  std::lock_guard lock(mu_);
  return decider_.serial();
}

void ThreadPolicy::Observe(bool contended) {
  std::lock_guard lock(mu_);
  decider_.Observe(contended);
}

void ThreadPolicy::Typical::Add(const void* s, double wall_ns) {
  if (!s) return;
  ns = s == signature ? 0.75 * ns + 0.25 * wall_ns : wall_ns;
  signature = s;
}

ThreadPolicy::Run::Run(ThreadPolicy* policy, const void* signature, int fixed_threads)
    : policy_(policy), signature_(signature), threads_used_(fixed_threads) {
  if (!policy_) return;
  threads_used_ = policy_->threads_;
  start_ = std::chrono::steady_clock::now();
  ThreadDecider::Choice choice;
  {
    std::lock_guard lock(policy_->mu_);
    choice = policy_->decider_.Next();
    if (choice.parallel &&
        (choice.probe || start_ - policy_->last_measured_ >= std::chrono::nanoseconds(kMeasureEveryNs))) {
      measuring_ = true;
      policy_->last_measured_ = start_;
    }
    budget_ns_ = choice.probe      ? kSlowProbe * policy_->serial_runs_.For(signature_)
                 : choice.parallel ? kSlowParallel * policy_->parallel_runs_.For(signature_)
                                   : 0;
  }
  parallel_ = choice.parallel;
  if (!parallel_) {
    Serialize();
    return;
  }
  if (measuring_ && !ReadTeamCpuWaits(policy_->threads_, &waits_)) measuring_ = false;
  if (measuring_) start_ = std::chrono::steady_clock::now();
}

void ThreadPolicy::Run::Serialize() {
  saved_levels_ = omp_get_max_active_levels();
  saved_threads_ = omp_get_max_threads();
  saved_cap_ = thread_cap;
  ApplySerial();
  threads_used_ = 1;
}

void ThreadPolicy::Run::ApplySerial() const {
  omp_set_max_active_levels(0);  // every parallel region from here on: a team of the calling thread alone
  omp_set_num_threads(1);        // the libraries that ask how many threads they have hear 1
  thread_cap = 1;                // and so do Ferry's kernels, whatever count they prepared for
}

void ThreadPolicy::Run::Restore() const {
  omp_set_max_active_levels(saved_levels_);
  omp_set_num_threads(saved_threads_);
  thread_cap = saved_cap_;
}

ThreadPolicy::Run::FullTeam::FullTeam(Run* run) : run_(run && run->saved_levels_ >= 0 ? run : nullptr) {
  if (run_) run_->Restore();
}

ThreadPolicy::Run::FullTeam::~FullTeam() {
  if (run_) run_->ApplySerial();
}

void ThreadPolicy::Run::CutIfSlow() {
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  if (static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) <= budget_ns_) {
    return;
  }
  cut_ = true;
  Serialize();
}

void ThreadPolicy::Run::Finish() {
  if (!policy_) return;
  const double wall = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count());
  if (cut_) {
    policy_->Observe(true);  // slower than the budget: the team was held up
    return;
  }
  {
    std::lock_guard lock(policy_->mu_);
    (parallel_ ? policy_->parallel_runs_ : policy_->serial_runs_).Add(signature_, wall);
  }
  if (!measuring_) return;
  std::vector<int64_t> after;
  if (!ReadTeamCpuWaits(policy_->threads_, &after) || after.size() != waits_.size()) return;
  int64_t max_wait = 0;
  for (size_t i = 0; i < after.size(); ++i) max_wait = std::max(max_wait, after[i] - waits_[i]);
  cpu_wait_ms_ = static_cast<double>(max_wait) / 1e6;
  policy_->Observe(Contended(static_cast<int64_t>(wall), max_wait));
}

ThreadPolicy::Run::~Run() {
  if (saved_levels_ >= 0) Restore();
}

}  // namespace ferry::runtime
