#include "core/human_format.h"

#include <cmath>
#include <cstdio>

namespace ferry {

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * (std::isfinite(ratio) ? ratio : 0.0));
  return buf;
}

std::string HumanCount(double v) {
  char buf[32];
  if (v >= 1e12) std::snprintf(buf, sizeof buf, "%.2fT", v / 1e12);
  else if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.1fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.1fK", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string HumanBytes(int64_t b) {
  char buf[32];
  const double v = static_cast<double>(b);
  if (v >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f GiB", v / (1024.0 * 1024 * 1024));
  else if (v >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", v / (1024.0 * 1024));
  else if (v >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", v / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

}  // namespace ferry
