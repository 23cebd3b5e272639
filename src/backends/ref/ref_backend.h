#pragma once

#include "backends/backend.h"
#include "kernels/ref/ref_kernels.h"

namespace ferry {

class RefBackend : public Backend {
 public:
  RefBackend();
  const std::string& name() const override { return name_; }
  std::string device() const override { return "cpu"; }
  const KernelRegistry& kernels() const override { return registry_; }

 private:
  std::string name_ = "ref";
  KernelRegistry registry_;
};

}  // namespace ferry
