#include "core/peak_rss.h"

#include <fstream>
#include <string>
#include <string_view>

#include "core/parse_number.h"

namespace ferry {
namespace {

std::string_view TrimBlanks(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace

int64_t PeakRssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::string_view v = TrimBlanks(std::string_view(line).substr(6));  // "VmHWM:\t   12345 kB"
    if (!v.ends_with("kB")) return -1;
    const std::optional<int64_t> kb = ParseInt64(TrimBlanks(v.substr(0, v.size() - 2)));
    return kb && *kb >= 0 ? *kb : -1;
  }
  return -1;
}

bool ResetPeakRss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

}  // namespace ferry
