#include "runtime/memory_plan.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "ferry/error.h"

namespace ferry::runtime {
namespace {

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

[[noreturn]] void Reject(size_t index, const std::string& what) {
  throw InvalidArgumentError("memory plan: request " + std::to_string(index) + ": " + what);
}

std::string Lifetime(const BufferRequest& r) {
  return "[" + std::to_string(r.first_step) + ", " + std::to_string(r.last_step) + "]";
}

int64_t RoundUp(int64_t bytes, int64_t alignment, size_t index) {
  if (bytes > kMaxBytes - (alignment - 1)) Reject(index, "size " + std::to_string(bytes) + " is too large");
  return (bytes + alignment - 1) / alignment * alignment;
}

// Checks every request; returns, per request, the request that takes it over (-1: none).
std::vector<int> Validate(std::span<const BufferRequest> requests, int64_t alignment) {
  if (alignment <= 0) {
    throw InvalidArgumentError("memory plan: alignment must be positive, got " + std::to_string(alignment));
  }
  const size_t n = requests.size();
  for (size_t i = 0; i < n; ++i) {
    const BufferRequest& r = requests[i];
    if (r.bytes < 0) Reject(i, "negative size " + std::to_string(r.bytes));
    if (r.first_step > r.last_step) {
      Reject(i, "first_step " + std::to_string(r.first_step) + " is after last_step " + std::to_string(r.last_step));
    }
  }
  std::vector<int> taken_by(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const BufferRequest& r = requests[i];
    if (r.alias_of == -1) continue;
    if (r.alias_of < 0 || static_cast<size_t>(r.alias_of) >= n) {
      Reject(i, "alias_of " + std::to_string(r.alias_of) + " is out of range (" + std::to_string(n) + " requests)");
    }
    if (static_cast<size_t>(r.alias_of) == i) Reject(i, "alias_of names the request itself (an alias cycle)");
    const auto target = static_cast<size_t>(r.alias_of);
    const BufferRequest& t = requests[target];
    const std::string name = "alias_of " + std::to_string(target);
    if (t.last_step != r.first_step) {
      Reject(i, name + " lives " + Lifetime(t) + ", so it does not die at this request's first step (lifetime " +
                    Lifetime(r) + ")");
    }
    if (t.bytes < r.bytes) {
      Reject(i, name + " has " + std::to_string(t.bytes) + " bytes, fewer than this request's " +
                    std::to_string(r.bytes));
    }
    if (taken_by[target] != -1) {
      Reject(i, name + " is already taken over by request " + std::to_string(taken_by[target]));
    }
    taken_by[target] = static_cast<int>(i);
  }
  // Each request has at most one alias_of and is taken over at most once, so the alias graph is paths and
  // cycles: whatever a walk from the roots (no alias_of) does not reach lies on a cycle.
  std::vector<char> reached(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (requests[i].alias_of != -1) continue;
    for (int k = static_cast<int>(i); k != -1; k = taken_by[static_cast<size_t>(k)]) {
      reached[static_cast<size_t>(k)] = 1;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!reached[i]) Reject(i, "alias_of " + std::to_string(requests[i].alias_of) + " leads into an alias cycle");
  }
  return taken_by;
}

// An alias chain (or a lone buffer): placed as one.
struct Unit {
  int root = 0;  // the request the chain starts with (the one with no alias_of)
  int first_step = 0, last_step = 0;
  int64_t bytes = 0;    // the largest member
  int64_t aligned = 0;  // bytes rounded up to the alignment
  int64_t offset = 0;
};

bool LifetimesOverlap(const Unit& a, const Unit& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// The lowest offset among the best-fitting gaps below and between `placed` units (sorted by offset) whose
// lifetimes overlap `u`'s; else the end of the highest of them.
int64_t BestFitOffset(const Unit& u, const std::vector<Unit>& units, const std::vector<int>& placed) {
  int64_t end = 0;  // highest end of the overlapping units seen so far
  int64_t best = -1, best_leftover = kMaxBytes;
  for (int p : placed) {
    const Unit& q = units[static_cast<size_t>(p)];
    if (!LifetimesOverlap(u, q)) continue;
    if (q.offset >= end) {
      const int64_t gap = q.offset - end;
      if (gap >= u.aligned && gap - u.aligned < best_leftover) {
        best = end;
        best_leftover = gap - u.aligned;
      }
    }
    end = std::max(end, q.offset + q.aligned);
  }
  return best >= 0 ? best : end;
}

}  // namespace

MemoryPlan PlanMemory(std::span<const BufferRequest> requests, int64_t alignment) {
  const std::vector<int> taken_by = Validate(requests, alignment);
  const size_t n = requests.size();

  std::vector<Unit> units;
  std::vector<int> unit_of(n, -1);
  int64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (requests[i].alias_of != -1) continue;
    Unit u;
    u.root = static_cast<int>(i);
    u.first_step = requests[i].first_step;
    u.last_step = requests[i].last_step;
    for (int k = u.root; k != -1; k = taken_by[static_cast<size_t>(k)]) {
      const BufferRequest& r = requests[static_cast<size_t>(k)];
      u.last_step = std::max(u.last_step, r.last_step);
      u.bytes = std::max(u.bytes, r.bytes);
      unit_of[static_cast<size_t>(k)] = static_cast<int>(units.size());
    }
    u.aligned = RoundUp(u.bytes, alignment, i);
    if (u.aligned > kMaxBytes - total) Reject(i, "the total size of the requests overflows int64");
    total += u.aligned;
    units.push_back(u);
  }

  MemoryPlan plan;
  plan.alignment = alignment;

  // Lower bound: sweep the unit lifetimes (a chain counts once at its hand-over steps, as it shares memory).
  std::vector<std::pair<int64_t, int64_t>> events;  // (step, +bytes at first_step / -bytes after last_step)
  events.reserve(2 * units.size());
  for (const Unit& u : units) {
    if (u.aligned == 0) continue;
    events.emplace_back(u.first_step, u.aligned);
    events.emplace_back(int64_t{u.last_step} + 1, -u.aligned);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  for (size_t e = 0; e < events.size(); ++e) {
    live += events[e].second;
    if (e + 1 == events.size() || events[e + 1].first != events[e].first) {
      plan.lower_bound = std::max(plan.lower_bound, live);
    }
  }

  // Greedy by size, best fit.
  std::vector<int> order(units.size());
  for (size_t u = 0; u < units.size(); ++u) order[u] = static_cast<int>(u);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const Unit& x = units[static_cast<size_t>(a)];
    const Unit& y = units[static_cast<size_t>(b)];
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    if (x.first_step != y.first_step) return x.first_step < y.first_step;
    return x.root < y.root;
  });
  std::vector<int> placed;  // units placed so far, by offset
  placed.reserve(units.size());
  for (int idx : order) {
    Unit& u = units[static_cast<size_t>(idx)];
    if (u.aligned == 0) continue;  // offset 0, occupies nothing
    u.offset = BestFitOffset(u, units, placed);
    plan.arena_bytes = std::max(plan.arena_bytes, u.offset + u.aligned);
    auto at = std::upper_bound(placed.begin(), placed.end(), u.offset,
                               [&](int64_t off, int p) { return off < units[static_cast<size_t>(p)].offset; });
    placed.insert(at, idx);
  }

  plan.offsets.resize(n);
  for (size_t i = 0; i < n; ++i) {
    plan.offsets[i] = requests[i].bytes == 0 ? 0 : units[static_cast<size_t>(unit_of[i])].offset;
  }
  return plan;
}

bool PlanIsValid(std::span<const BufferRequest> requests, const MemoryPlan& plan, std::string* why) {
  auto fail = [&](const std::string& message) {
    if (why) *why = message;
    return false;
  };
  const size_t n = requests.size();
  if (plan.offsets.size() != n) {
    return fail(std::to_string(plan.offsets.size()) + " offsets for " + std::to_string(n) + " requests");
  }
  if (plan.alignment <= 0) return fail("alignment " + std::to_string(plan.alignment) + " is not positive");
  for (size_t i = 0; i < n; ++i) {
    const std::string name = "request " + std::to_string(i);
    const int64_t off = plan.offsets[i];
    if (off < 0 || off % plan.alignment != 0) {
      return fail(name + ": offset " + std::to_string(off) + " is not a non-negative multiple of " +
                  std::to_string(plan.alignment));
    }
    if (requests[i].bytes > 0 && (off > plan.arena_bytes || requests[i].bytes > plan.arena_bytes - off)) {
      return fail(name + ": bytes [" + std::to_string(off) + ", " + std::to_string(off + requests[i].bytes) +
                  ") end past the arena of " + std::to_string(plan.arena_bytes));
    }
    const int a = requests[i].alias_of;
    if (a >= 0 && static_cast<size_t>(a) < n && requests[i].bytes > 0 && plan.offsets[static_cast<size_t>(a)] != off) {
      return fail(name + ": offset " + std::to_string(off) + " differs from its alias_of " + std::to_string(a) +
                  "'s " + std::to_string(plan.offsets[static_cast<size_t>(a)]));
    }
  }
  // Chain root per request (memoised walks; a walk longer than n is a cycle).
  std::vector<int> root(n, -1);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int> path;
    int k = static_cast<int>(i);
    while (root[static_cast<size_t>(k)] == -1) {
      path.push_back(k);
      const int next = requests[static_cast<size_t>(k)].alias_of;
      if (next < 0 || static_cast<size_t>(next) >= n) break;
      if (path.size() > n) return fail("request " + std::to_string(i) + " is on an alias cycle");
      k = next;
    }
    const int r = root[static_cast<size_t>(k)] != -1 ? root[static_cast<size_t>(k)] : k;
    for (int p : path) root[static_cast<size_t>(p)] = r;
  }
  // Pairs with intersecting lifetimes: by first step, each against those starting no later than it ends.
  std::vector<int> by_first;
  for (size_t i = 0; i < n; ++i) {
    if (requests[i].bytes > 0) by_first.push_back(static_cast<int>(i));
  }
  std::stable_sort(by_first.begin(), by_first.end(), [&](int a, int b) {
    return requests[static_cast<size_t>(a)].first_step < requests[static_cast<size_t>(b)].first_step;
  });
  for (size_t x = 0; x < by_first.size(); ++x) {
    const auto i = static_cast<size_t>(by_first[x]);
    for (size_t y = x + 1; y < by_first.size(); ++y) {
      const auto j = static_cast<size_t>(by_first[y]);
      if (requests[j].first_step > requests[i].last_step) break;
      if (root[i] == root[j]) continue;
      const int64_t oi = plan.offsets[i], oj = plan.offsets[j];
      if (oi < oj + requests[j].bytes && oj < oi + requests[i].bytes) {
        return fail("requests " + std::to_string(i) + " and " + std::to_string(j) + " are live together (" +
                    Lifetime(requests[i]) + " and " + Lifetime(requests[j]) + ") but share bytes: [" +
                    std::to_string(oi) + ", " + std::to_string(oi + requests[i].bytes) + ") and [" +
                    std::to_string(oj) + ", " + std::to_string(oj + requests[j].bytes) + ")");
      }
    }
  }
  if (why) why->clear();
  return true;
}

}  // namespace ferry::runtime
