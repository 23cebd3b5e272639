// The kernel registry of one backend and its support query.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel_def.h"

namespace ferry {

// Where a "not supported" verdict comes from (see DESIGN.md, "Operator contracts are data").
enum class FailureLayer { kNone, kGraph, kKernel, kHardware };
const char* FailureLayerName(FailureLayer layer);

// The hardware a query is judged against: the CPU extensions Ferry may use (the host's, narrowed by --isa or
// FERRY_ISA) and, for GPU backends, the device's compute capability (e.g. 75 for 7.5; 0 = none).
struct Target {
  IsaSet isa = DefaultIsa();
  int compute_capability = 0;
};

struct SupportResult {
  const KernelDef* kernel = nullptr;  // set when supported
  FailureLayer layer = FailureLayer::kNone;
  std::string reason;  // why not, naming op, opset, dtype or attribute
  bool supported() const { return kernel != nullptr; }
};

class KernelRegistry {
 public:
  explicit KernelRegistry(std::string backend) : backend_(std::move(backend)) {}

  void Add(KernelDef def);
  const std::string& backend() const { return backend_; }
  const std::vector<KernelDef>& defs() const { return defs_; }

  // The one support question: can this backend run `node` (with the element types its inputs carry)?
  // `input_types` gives each input's element type (kUndefined when unknown or omitted).
  SupportResult Query(const ir::Node& node, const std::vector<DataType>& input_types,
                      const Target& target = Target()) const;

 private:
  std::string backend_;
  std::vector<KernelDef> defs_;
};

}  // namespace ferry
