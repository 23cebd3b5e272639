#include "tools/bench_svg_layout.h"

#include <algorithm>
#include <cmath>

namespace ferry::tools {
namespace {

constexpr int kMaxLogTicks = 8;

// 1, 2 and 5 times powers of ten from below `lo` to above `hi` (lo > 0), as the axis they make.
BenchAxis OneTwoFive(double lo, double hi) {
  BenchAxis a;
  a.log = true;
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  std::vector<double> all;
  for (int e = first; e <= last; ++e) {
    for (double m : {1.0, 2.0, 5.0}) all.push_back(m * std::pow(10.0, e));
  }
  // A relative tolerance: 10^-1 * 5 is not exactly 0.5.
  auto below = [&](double t) { return t <= lo * (1 + 1e-9); };
  auto above = [&](double t) { return t >= hi * (1 - 1e-9); };
  size_t from = 0, to = all.size() - 1;
  for (size_t i = 0; i < all.size(); ++i) {
    if (below(all[i])) from = i;
  }
  for (size_t i = all.size(); i-- > 0;) {
    if (above(all[i])) to = i;
  }
  a.ticks.assign(all.begin() + static_cast<std::ptrdiff_t>(from), all.begin() + static_cast<std::ptrdiff_t>(to) + 1);
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  return a;
}

// Powers of ten from the one at or below `lo` to the one at or above `hi`, every k-th when there are many.
BenchAxis Decades(double lo, double hi) {
  BenchAxis a;
  a.log = true;
  int first = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (last <= first) last = first + 1;
  const int step = std::max(1, (last - first + kMaxLogTicks - 2) / (kMaxLogTicks - 1));
  first = static_cast<int>(std::floor(static_cast<double>(first) / step)) * step;
  for (int e = first;; e += step) {
    a.ticks.push_back(std::pow(10.0, e));
    if (e >= last) break;
  }
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  return a;
}

}  // namespace

std::vector<double> NiceTicks(double max, int target) {
  if (!(max > 0) || !std::isfinite(max)) max = 1;
  target = std::max(1, target);
  const double raw = max / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  const int n = static_cast<int>(std::ceil(max / step - 1e-9));
  std::vector<double> ticks;
  for (int i = 0; i <= std::max(1, n); ++i) ticks.push_back(i * step);
  return ticks;
}

double BenchAxis::Fraction(double v) const {
  if (!std::isfinite(v)) return 0;
  double t = 0;
  if (log) {
    if (!(v > 0) || !(lo > 0) || !(hi > lo)) return 0;
    t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  } else {
    if (!(hi > lo)) return 0;
    t = (v - lo) / (hi - lo);
  }
  return std::clamp(t, 0.0, 1.0);
}

BenchAxis ChooseBenchAxis(const std::vector<double>& values, double log_span) {
  double lo = INFINITY, hi = 0;
  for (double v : values) {
    if (!std::isfinite(v) || !(v > 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (hi > 0 && hi > lo * log_span) {
    BenchAxis a = OneTwoFive(lo, hi);
    return a.ticks.size() <= static_cast<size_t>(kMaxLogTicks) ? a : Decades(lo, hi);
  }
  BenchAxis a;
  a.ticks = NiceTicks(hi);
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  return a;
}

bool BoxesOverlap(const LabelBox& a, const LabelBox& b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

double TextWidth(std::string_view text, double font_size) {
  // Characters, not bytes: UTF-8 continuation bytes do not count.
  const auto chars = std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; });
  return 0.62 * font_size * static_cast<double>(chars);
}

std::vector<LabelBox> PlaceLabels(const std::vector<LabelBox>& wanted, const LabelBox& area,
                                  const std::vector<LabelBox>& obstacles) {
  auto clamp_into = [&](LabelBox b) {
    b.x = std::max(area.x, std::min(b.x, area.x + area.width - b.width));
    b.y = std::max(area.y, std::min(b.y, area.y + area.height - b.height));
    return b;
  };
  auto inside = [&](const LabelBox& b) {
    const double eps = 1e-6;
    return b.x >= area.x - eps && b.y >= area.y - eps && b.x + b.width <= area.x + area.width + eps &&
           b.y + b.height <= area.y + area.height + eps;
  };
  std::vector<LabelBox> placed;
  placed.reserve(wanted.size());
  for (const LabelBox& want : wanted) {
    const LabelBox home = clamp_into(want);
    const double dy = home.height + 2, dx = home.width + 4;
    // Enough steps to cross the area, or to pass every box placed so far and every obstacle.
    const int rows = static_cast<int>(area.height / std::max(dy, 1.0)) + 1;
    const int cols = static_cast<int>(area.width / std::max(dx, 1.0)) + 1;
    const int reach = std::max(rows, cols) + static_cast<int>(placed.size() + obstacles.size());
    struct Candidate {
      double cost;
      int order;
      LabelBox box;
    };
    std::vector<Candidate> candidates;
    int order = 0;
    for (int i = 0; i <= 2 * std::min(reach, cols); ++i) {
      const int side = (i % 2 == 1 ? -1 : 1) * ((i + 1) / 2);  // 0, left 1, right 1, left 2, ...
      for (int k = 0; k <= 2 * std::min(reach, rows); ++k) {
        const int up = (k % 2 == 1 ? -1 : 1) * ((k + 1) / 2);  // 0, up 1, down 1, up 2, ...
        LabelBox c = home;
        c.x += side * dx;
        c.y += up * dy;
        if (inside(c)) candidates.push_back({std::hypot(side * dx, up * dy), order, c});
        ++order;
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.cost != b.cost ? a.cost < b.cost : a.order < b.order;
    });
    auto free = [&](const LabelBox& c) {
      auto hits = [&](const LabelBox& p) { return BoxesOverlap(c, p); };
      return std::none_of(placed.begin(), placed.end(), hits) && std::none_of(obstacles.begin(), obstacles.end(), hits);
    };
    const auto found = std::find_if(candidates.begin(), candidates.end(),
                                    [&](const Candidate& c) { return free(c.box); });
    placed.push_back(found == candidates.end() ? home : found->box);
  }
  return placed;
}

}  // namespace ferry::tools
