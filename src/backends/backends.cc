#include <memory>

#include "backends/backend.h"
#include "backends/ref/ref_backend.h"

namespace ferry {
namespace {

const std::vector<std::unique_ptr<Backend>>& AllBackends() {
  static const auto* backends = [] {
    auto* v = new std::vector<std::unique_ptr<Backend>>();
    v->push_back(std::make_unique<RefBackend>());
    return v;
  }();
  return *backends;
}

}  // namespace

const Backend* FindBackend(std::string_view name) {
  for (const auto& b : AllBackends()) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
  for (const auto& b : AllBackends()) names.push_back(b->name());
  return names;
}

}  // namespace ferry
