#include "server/repository.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ferry/error.h"

namespace ferry::server {
namespace fs = std::filesystem;

void ValidateModelName(const std::string& name) {
  if (name.empty() || name.size() > 255) {
    throw InvalidArgumentError("model name '" + name + "' must be 1 to 255 characters");
  }
  if (name[0] == '.') throw InvalidArgumentError("model name '" + name + "' must not start with '.'");
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) {
      throw InvalidArgumentError("model name '" + name + "' has a character outside [A-Za-z0-9_.-]");
    }
  }
}

int64_t ParseVersion(const std::string& text) {
  if (text.empty() || text.size() > 18 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw InvalidArgumentError("model version '" + text + "' is not a non-negative integer");
  }
  return std::stoll(text);
}

std::vector<std::string> ListModels(const std::string& repository, std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!fs::is_directory(repository, ec)) {
    throw InvalidArgumentError("model repository '" + repository + "' is not a directory");
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(repository, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec)) {
      if (skipped) skipped->push_back(name + ": not a directory");
      continue;
    }
    try {
      ValidateModelName(name);
    } catch (const Error& e) {
      if (skipped) skipped->push_back(name + ": " + e.what());
      continue;
    }
    names.push_back(name);
  }
  if (ec) throw InvalidArgumentError("model repository '" + repository + "': " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

constexpr uintmax_t kMaxConfigBytes = 4u << 20;  // config.pbtxt

bool IsInside(const fs::path& child, const fs::path& parent) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(child, ec);
  const fs::path p = fs::weakly_canonical(parent, ec);
  auto ci = c.begin();
  for (auto pi = p.begin(); pi != p.end(); ++pi, ++ci) {
    if (ci == c.end() || *ci != *pi) return false;
  }
  return true;
}

}  // namespace

ModelSource ReadModelSource(const std::string& repository, const std::string& name) {
  ValidateModelName(name);
  ModelSource src;
  src.name = name;
  const fs::path dir = fs::path(repository) / name;
  src.dir = dir.string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InvalidArgumentError("model '" + name + "' is not in the repository (no folder " + src.dir + ")");
  }
  if (!IsInside(dir, repository)) {
    throw InvalidArgumentError("model '" + name + "': " + src.dir + " resolves outside the repository");
  }
  const fs::path config_path = dir / "config.pbtxt";
  if (fs::exists(config_path, ec)) {
    // Checked before it is opened: reading a FIFO would block the load, and a device might never end.
    if (!fs::is_regular_file(fs::status(config_path, ec))) {
      throw InvalidModelError(config_path.string() + ": not a regular file");
    }
    const uintmax_t size = fs::file_size(config_path, ec);
    if (!ec && size > kMaxConfigBytes) {
      throw InvalidModelError(config_path.string() + ": " + std::to_string(size) + " bytes (at most " +
                              std::to_string(kMaxConfigBytes) + ")");
    }
    std::ifstream in(config_path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw InvalidModelError(config_path.string() + ": cannot be read");
    src.config = ParseModelConfig(text.str(), config_path.string(), &src.warnings);
  } else {
    src.config = EmptyModelConfig(name);
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string v = entry.path().filename().string();
    if (!entry.is_directory(ec)) continue;
    try {
      src.available_versions.push_back(ParseVersion(v));
    } catch (const Error&) {
      src.warnings.push_back(src.dir + ": folder '" + v + "' is not a version number; skipped");
      continue;
    }
    if (!IsInside(entry.path(), dir)) {
      throw InvalidArgumentError("model '" + name + "': version folder " + entry.path().string() +
                                 " resolves outside the model folder");
    }
  }
  std::sort(src.available_versions.begin(), src.available_versions.end());
  return src;
}

std::vector<int64_t> SelectVersions(const ServeConfig& config, const std::vector<int64_t>& available,
                                    const std::string& model_dir) {
  std::vector<int64_t> out;
  switch (config.version_policy) {
    case VersionPolicy::kAll: out = available; break;
    case VersionPolicy::kLatest: {
      const size_t n = std::min<size_t>(config.latest_versions, available.size());
      out.assign(available.end() - static_cast<std::ptrdiff_t>(n), available.end());
      break;
    }
    case VersionPolicy::kSpecific: {
      std::string missing;
      for (int64_t v : config.specific_versions) {
        if (std::find(available.begin(), available.end(), v) == available.end()) {
          missing += (missing.empty() ? "" : ", ") + std::to_string(v);
        } else if (std::find(out.begin(), out.end(), v) == out.end()) {
          out.push_back(v);
        }
      }
      if (!missing.empty()) {
        throw InvalidModelError(model_dir + ": version_policy.specific lists version(s) " + missing +
                                " with no version folder");
      }
      std::sort(out.begin(), out.end());
      break;
    }
  }
  if (out.empty()) throw InvalidModelError(model_dir + ": no version folder (e.g. " + model_dir + "/1/" +
                                           config.model_filename + ")");
  return out;
}

std::string ModelFingerprint(const std::string& repository, const std::string& name) {
  std::ostringstream out;
  std::error_code ec;
  const fs::path dir = fs::path(repository) / name;
  const auto stamp = [&](const fs::path& p) {
    std::error_code e;
    const auto size = fs::file_size(p, e);
    const auto time = fs::last_write_time(p, e);
    out << p.filename().string() << ':' << (e ? 0 : size) << ':' << time.time_since_epoch().count() << ';';
  };
  if (!fs::is_directory(dir, ec)) return "";
  std::vector<fs::path> entries;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) entries.push_back(entry.path());
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& p : entries) {
    out << fs::relative(p, dir, ec).string() << '=';
    stamp(p);
  }
  return out.str();
}

}  // namespace ferry::server
