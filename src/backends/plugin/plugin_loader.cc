// Loading a plugin: dlopen -> ABI version check -> FerryPluginInit, whose register_op calls are validated and
// collected -> on success, schemas and the backend are registered; on any failure nothing is, and the library
// is closed.
#include "backends/plugin/plugin_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "backends/plugin/plugin_backend.h"
#include "ferry/error.h"

// What FerryPluginInit's register_op calls go to. Completes the C ABI's opaque struct.
struct FerryRegistrar {
  ferry::plugin::PluginBackend* backend = nullptr;
  std::string path;
  std::vector<std::unique_ptr<ferry::plugin::PluginOp>> ops;
  std::string error;  // the first rejected registration
};

namespace ferry {
namespace {

struct Loaded {
  std::mutex mu;
  std::map<std::string, const Backend*> by_path;  // canonical path -> backend
};

Loaded& LoadedPlugins() {
  static auto* loaded = new Loaded();
  return *loaded;
}

std::string QualifiedName(const plugin::PluginOp& op) {
  return (op.domain.empty() ? std::string() : op.domain + "::") + op.op_type;
}

bool Overlaps(const plugin::PluginOp& a, const plugin::PluginOp& b) {
  return a.domain == b.domain && a.op_type == b.op_type && a.since <= b.until && b.since <= a.until;
}

std::string Versions(const plugin::PluginOp& op) {
  return std::to_string(op.since) + (op.until == kOpsetOpen ? std::string("+") : "-" + std::to_string(op.until));
}

FerryStatus RegisterOp(FerryRegistrar* reg, const FerryOpDef* def) {
  if (!reg) return FERRY_INVALID_ARGUMENT;
  auto fail = [&](std::string why) {
    if (reg->error.empty()) reg->error = std::move(why);
    return FERRY_INVALID_ARGUMENT;
  };
  if (!def) return fail("register_op was given a NULL FerryOpDef");
  auto op = std::make_unique<plugin::PluginOp>();
  std::string problem;
  try {
    problem = plugin::ReadOpDef(*def, reg->path, reg->backend->name(), *op);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (!problem.empty()) return fail(problem);
  if (schemas::SchemaRegistry::Get().IsBuiltinDomain(op->domain)) {
    return fail("op " + QualifiedName(*op) + ": domain '" + (op->domain.empty() ? "ai.onnx" : op->domain) +
                "' is one of Ferry's built-in domains; plugin ops need a domain of their own (ABI 1 cannot "
                "replace built-in ops)");
  }
  for (const auto& other : reg->ops) {
    if (Overlaps(*other, *op)) {
      return fail("op " + QualifiedName(*op) + " versions " + Versions(*op) + " is registered twice (versions " +
                  Versions(*other) + " already)");
    }
  }
  const auto& schemas = schemas::SchemaRegistry::Get();
  if (!schemas.Versions(op->domain, op->op_type).empty()) {
    return fail("op " + QualifiedName(*op) + " is already registered by another plugin");
  }
  reg->ops.push_back(std::move(op));
  return FERRY_OK;
}

// libferry_correlation.so -> ferry_correlation
std::string BackendNameFor(const std::filesystem::path& path) {
  std::string stem = path.filename().string();
  if (stem.rfind("lib", 0) == 0 && stem.size() > 3) stem = stem.substr(3);
  const size_t dot = stem.find('.');
  if (dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
  return stem;
}

struct LibraryCloser {
  void* handle;
  bool keep = false;
  ~LibraryCloser() {
    if (handle && !keep) dlclose(handle);
  }
};

}  // namespace

const Backend& LoadPlugin(const std::string& path) {
  const std::string where = "plugin '" + path + "'";
  std::error_code ec;
  if (path.empty()) throw InvalidArgumentError("plugin: the path is empty");
  if (!std::filesystem::exists(path, ec)) throw InvalidArgumentError(where + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw InvalidArgumentError(where + ": not a regular file");
  const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();

  Loaded& loaded = LoadedPlugins();
  std::lock_guard lock(loaded.mu);
  if (auto it = loaded.by_path.find(canonical); it != loaded.by_path.end()) return *it->second;

  // RTLD_LOCAL: two plugins may export the same symbol names (they all export FerryPluginInit).
  dlerror();
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    throw InvalidArgumentError(where + " could not be loaded as a shared library: " + (e ? e : "unknown error"));
  }
  LibraryCloser closer{handle};
  auto version_fn = reinterpret_cast<FerryPluginAbiVersionFn>(dlsym(handle, "FerryPluginAbiVersion"));
  if (!version_fn) {
    throw InvalidArgumentError(where + " does not export FerryPluginAbiVersion: it is not a Ferry plugin "
                               "(see docs/plugins.md)");
  }
  const uint32_t version = version_fn();
  if (version != FERRY_PLUGIN_ABI_VERSION) {
    throw InvalidArgumentError(where + " was built for Ferry plugin ABI " + std::to_string(version) +
                               ", but this Ferry speaks ABI " + std::to_string(FERRY_PLUGIN_ABI_VERSION) +
                               ": rebuild it against this Ferry's include/ferry/plugin.h");
  }
  auto init_fn = reinterpret_cast<FerryPluginInitFn>(dlsym(handle, "FerryPluginInit"));
  if (!init_fn) {
    throw InvalidArgumentError(where + " does not export FerryPluginInit (it exports FerryPluginAbiVersion only)");
  }

  const std::string name = BackendNameFor(canonical);
  if (FindBackend(name)) {
    throw InvalidArgumentError(where + ": its backend name '" + name + "' (from the file name) is taken by " +
                               "another backend or plugin; rename the library");
  }
  auto backend = std::make_unique<plugin::PluginBackend>(name, canonical);
  FerryRegistrar registrar;
  registrar.backend = backend.get();
  registrar.path = canonical;
  FerryHostApi api = *plugin::HostApi();
  api.register_op = RegisterOp;
  // The table must outlive the call: plugins keep the pointer. One copy per plugin, never freed.
  auto* kept_api = new FerryHostApi(api);
  const FerryStatus status = init_fn(kept_api, &registrar);
  if (!registrar.error.empty()) {
    delete kept_api;
    throw InvalidArgumentError(where + ": " + registrar.error);
  }
  if (status != FERRY_OK) {
    delete kept_api;
    throw InvalidArgumentError(where + ": FerryPluginInit returned status " + std::to_string(status));
  }
  if (registrar.ops.empty()) {
    delete kept_api;
    throw InvalidArgumentError(where + ": FerryPluginInit registered no ops");
  }
  // All checks passed: publish schemas, then the backend. Extension schemas cannot collide now: RegisterOp
  // checked every op against the registry under this lock.
  std::map<std::string, int64_t> max_opset;
  for (const auto& op : registrar.ops) {
    int64_t& m = max_opset[op->domain];
    m = std::max<int64_t>(m, op->until == kOpsetOpen ? kOpsetOpen : op->until);
  }
  for (auto& op : registrar.ops) {
    schemas::SchemaRegistry::AddExtension(op->MakeSchema(), max_opset[op->domain]);
    plugin::RegisterOpForInference(*op);
    backend->AddOp(std::move(op));
  }
  const Backend& registered = RegisterBackend(std::move(backend));
  closer.keep = true;  // kernels point into the library for the rest of the process
  loaded.by_path[canonical] = &registered;
  return registered;
}

}  // namespace ferry
