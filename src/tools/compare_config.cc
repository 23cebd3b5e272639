#include "tools/compare_config.h"

#include <sstream>

#include "core/parse_number.h"
#include "ferry/error.h"
#include "ferry/limits.h"

namespace ferry::tools {
namespace {

std::vector<std::string> SplitKeep(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

int ParseInt(const std::string& v, int lo, int hi, const std::string& token, const std::string& where) {
  const std::optional<int64_t> n = ParseInt64(v);
  if (!n || *n < lo || *n > hi) {
    throw InvalidArgumentError(where + ": bad value in '" + token + "' (expected an integer in " + std::to_string(lo) +
                               ".." + std::to_string(hi) + ")");
  }
  return static_cast<int>(*n);
}

}  // namespace

CompareConfig ParseCompareConfig(const std::string& text, const std::string& flag) {
  CompareConfig c;
  c.text = text;
  const std::string where = flag + " '" + text + "'";
  const std::vector<std::string> parts = SplitKeep(text, ':');
  c.options.backends.clear();
  for (const std::string& b : SplitKeep(parts[0], ',')) {
    if (b.empty()) throw InvalidArgumentError(where + ": empty backend name in '" + parts[0] + "' (expected e.g. cpu,ref)");
    c.options.backends.push_back(b);
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& token = parts[i];
    const size_t eq = token.find('=');
    const std::string key = token.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : token.substr(eq + 1);
    const bool has_value = eq != std::string::npos;
    const auto need = [&](bool want_value) {
      if (want_value && (!has_value || value.empty())) {
        throw InvalidArgumentError(where + ": option '" + token + "' needs a value (" + key + "=...)");
      }
      if (!want_value && has_value) throw InvalidArgumentError(where + ": option '" + token + "' takes no value");
    };
    if (key == "opt") {
      need(true);
      c.options.optimization_level = ParseInt(value, 0, 3, token, where);
    } else if (key == "threads") {
      need(true);
      c.options.threads = ParseInt(value, 0, kMaxThreads, token, where);
    } else if (key == "deterministic") {
      need(false);
      c.options.deterministic = true;
    } else if (key == "isa") {
      need(true);
      c.options.isa = value;
    } else if (key == "plugin") {
      need(true);
      c.options.plugins.push_back(value);
    } else if (key == "pin") {
      need(true);
      const size_t at = value.rfind('=');
      if (at == std::string::npos || at == 0 || at + 1 == value.size()) {
        throw InvalidArgumentError(where + ": option '" + token + "': expected pin=NODE_OR_OP=BACKEND");
      }
      c.options.pins.emplace_back(value.substr(0, at), value.substr(at + 1));
    } else if (key == "disable-pass") {
      need(true);
      c.options.disabled_passes.push_back(value);
    } else if (key == "no-fallback") {
      need(false);
      c.options.allow_fallback = false;
    } else if (key == "legalize") {
      need(false);
      c.options.legalize = true;
    } else if (key == "no-arena") {
      need(false);
      c.options.memory_arena = false;
    } else {
      throw InvalidArgumentError(where + ": unknown option '" + token +
                                 "' (options: opt=N, threads=N, deterministic, isa=EXTS, plugin=PATH, "
                                 "pin=NODE_OR_OP=BACKEND, disable-pass=NAME, no-fallback, legalize, no-arena)");
    }
  }
  if (c.options.deterministic && c.options.threads <= 0) {
    throw InvalidArgumentError(where + ": 'deterministic' needs a fixed thread count (add :threads=N)");
  }
  return c;
}

std::string DescribeConfig(const CompareConfig& c) {
  const SessionOptions& o = c.options;
  std::ostringstream os;
  os << "backends ";
  for (size_t i = 0; i < o.backends.size(); ++i) os << (i ? "," : "") << o.backends[i];
  os << ", opt " << o.optimization_level << ", threads " << (o.threads > 0 ? std::to_string(o.threads) : "all");
  if (o.deterministic) os << ", deterministic";
  if (!o.isa.empty()) os << ", isa " << o.isa;
  for (const auto& p : o.plugins) os << ", plugin " << p;
  for (const auto& [what, backend] : o.pins) os << ", pin " << what << "=" << backend;
  for (const auto& p : o.disabled_passes) os << ", without pass " << p;
  if (!o.allow_fallback) os << ", no fallback";
  if (o.legalize) os << ", legalize";
  if (!o.memory_arena) os << ", no arena";
  return os.str();
}

}  // namespace ferry::tools
