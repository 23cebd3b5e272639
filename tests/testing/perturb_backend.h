// A test backend whose Relu is deliberately wrong (it adds 0.01): the diverging side of `ferry compare`'s tests.
// Place a node on it with a configuration such as "compare_perturb,ref" or "cpu,compare_perturb,ref:pin=NODE=...".
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "backends/backend.h"
#include "kernels/kernel.h"

namespace ferry::testing {

class OffByRelu : public OpKernel {
 public:
  explicit OffByRelu(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0, DataType::kFloat, x.shape());
    for (int64_t i = 0; i < x.size(); ++i) y.data<float>()[i] = std::max(x.data<float>()[i], 0.0f) + 0.01f;
  }
};

class PerturbBackend : public Backend {
 public:
  PerturbBackend() : registry_("compare_perturb") {
    registry_.Add({.op = "Relu", .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<OffByRelu>});
  }
  const std::string& name() const override { return name_; }
  std::string device() const override { return "cpu"; }
  const KernelRegistry& kernels() const override { return registry_; }

 private:
  std::string name_ = "compare_perturb";
  KernelRegistry registry_;
};

// Registers the backend once per process (every test file shares it) and returns its name, "compare_perturb".
inline const std::string& EnsurePerturbBackend() {
  static const std::string name = [] {
    RegisterBackend(std::make_unique<PerturbBackend>());
    return std::string("compare_perturb");
  }();
  return name;
}

}  // namespace ferry::testing
