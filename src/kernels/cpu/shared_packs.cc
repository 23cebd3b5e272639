#include "kernels/cpu/shared_packs.h"

#include <iterator>
#include <map>
#include <mutex>
#include <vector>

namespace ferry::cpu {

struct SharedPacks::State {
  struct Entry {
    dnnl::memory::desc user, packed;
    std::weak_ptr<const dnnl::memory> memory;
  };
  std::mutex mu;
  std::map<std::weak_ptr<const Tensor>, std::vector<Entry>, std::owner_less<std::weak_ptr<const Tensor>>> packs;
};

SharedPacks::SharedPacks() : state_(std::make_unique<State>()) {}

SharedPacks& SharedPacks::Instance() {
  static SharedPacks* packs = new SharedPacks;  // never destroyed: kernels may be destroyed after static objects
  return *packs;
}

std::shared_ptr<const dnnl::memory> SharedPacks::Find(const std::weak_ptr<const Tensor>& source,
                                                      const dnnl::memory::desc& user,
                                                      const dnnl::memory::desc& packed) {
  std::lock_guard lock(state_->mu);
  auto it = state_->packs.find(source);
  if (it == state_->packs.end()) return nullptr;
  for (const State::Entry& e : it->second) {
    if (e.user == user && e.packed == packed) {
      if (auto m = e.memory.lock()) return m;
    }
  }
  return nullptr;
}

void SharedPacks::Add(const std::weak_ptr<const Tensor>& source, const dnnl::memory::desc& user,
                      const dnnl::memory::desc& packed, const std::shared_ptr<const dnnl::memory>& memory) {
  std::lock_guard lock(state_->mu);
  for (auto it = state_->packs.begin(); it != state_->packs.end();) {
    std::erase_if(it->second, [](const State::Entry& e) { return e.memory.expired(); });
    it = it->second.empty() ? state_->packs.erase(it) : std::next(it);
  }
  state_->packs[source].push_back({user, packed, memory});
}

}  // namespace ferry::cpu
