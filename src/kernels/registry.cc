#include "kernels/registry.h"

#include <algorithm>

#include "kernels/refused_ops.h"
#include "schemas/schema.h"
#include "schemas/validate.h"

namespace ferry {

const char* FailureLayerName(FailureLayer layer) {
  switch (layer) {
    case FailureLayer::kNone: return "none";
    case FailureLayer::kGraph: return "graph";
    case FailureLayer::kKernel: return "kernel";
    case FailureLayer::kHardware: return "hardware";
  }
  return "unknown";
}

void KernelRegistry::Add(KernelDef def) {
  def.backend = backend_;
  def.domain = std::string(schemas::CanonicalDomain(def.domain));
  if (def.name.empty()) {
    def.name = backend_ + "." + (def.domain.empty() ? "" : def.domain + ".") + def.op + "." + std::to_string(def.since);
  }
  defs_.push_back(std::move(def));
}

namespace {

std::string TypeList(const std::vector<DataType>& types) {
  std::string s;
  for (DataType t : types) {
    if (!s.empty()) s += ", ";
    s += DataTypeName(t);
  }
  return s;
}

// Returns "" when `def`'s dtype constraints accept the node's input types, else the reason.
std::string CheckTypes(const KernelDef& def, const schemas::OpSchema* schema, const ir::Node& node,
                       const std::vector<DataType>& input_types) {
  if (!schema) return "";
  for (size_t i = 0; i < input_types.size(); ++i) {
    DataType t = input_types[i];
    if (t == DataType::kUndefined) continue;
    std::string var = schema->InputTypeVar(i);
    if (var.empty()) continue;
    for (const auto& c : def.types) {
      if (c.var != var) continue;
      if (std::find(c.types.begin(), c.types.end(), t) == c.types.end()) {
        std::string input_name = node.input(i) ? node.input(i)->name() : std::to_string(i);
        return "input '" + input_name + "' has type " + std::string(DataTypeName(t)) + "; kernel " + def.name +
               " supports " + var + " in {" + TypeList(c.types) + "}";
      }
    }
  }
  return "";
}

}  // namespace

SupportResult KernelRegistry::Query(const ir::Node& node, const std::vector<DataType>& input_types,
                                    const Target& target) const {
  SupportResult result;
  std::string_view domain = schemas::CanonicalDomain(node.domain());
  const auto& registry = schemas::SchemaRegistry::Get();
  const schemas::OpSchema* schema = registry.Find(domain, node.op_type(), node.opset());
  if (registry.MaxOpset(domain) > 0 && node.opset() > registry.MaxOpset(domain)) {
    result.layer = FailureLayer::kGraph;
    result.reason = "opset " + std::to_string(node.opset()) + " of domain '" +
                    (domain.empty() ? std::string("ai.onnx") : std::string(domain)) + "' is newer than Ferry knows (" +
                    std::to_string(registry.MaxOpset(domain)) + ")";
    return result;
  }
  if (!schema && !registry.Versions(domain, node.op_type()).empty()) {
    const auto versions = registry.Versions(domain, node.op_type());
    result.layer = FailureLayer::kGraph;
    result.reason = node.op_type() + " has no schema version at or below opset " + std::to_string(node.opset()) +
                    " (its first version is " + std::to_string(versions.front()->since_version) + ")";
    return result;
  }
  if (schema) {
    std::string invalid = schemas::ValidateNodeAgainstSchema(node, *schema);
    if (!invalid.empty()) {
      result.layer = FailureLayer::kGraph;
      result.reason = invalid;
      return result;
    }
  }
  std::vector<const KernelDef*> same_op;
  for (const auto& def : defs_) {
    if (def.op == node.op_type() && def.domain == domain) same_op.push_back(&def);
  }
  if (same_op.empty()) {
    if (!schema && registry.Versions(domain, node.op_type()).empty()) {
      result.layer = FailureLayer::kGraph;
      result.reason = "unknown op " + (domain.empty() ? std::string() : std::string(domain) + "::") + node.op_type();
    } else {
      result.layer = FailureLayer::kKernel;
      result.reason = "backend '" + backend_ + "' has no kernel for " + node.op_type();
      const std::string_view refused = RefusedOpReason(domain, node.op_type());
      if (!refused.empty()) result.reason += ": " + std::string(refused);
    }
    return result;
  }
  std::string last_reason, hardware_reason;
  bool opset_matched = false;
  for (const KernelDef* def : same_op) {
    if (node.opset() < def->since || node.opset() > def->until) continue;
    opset_matched = true;
    std::string why = CheckTypes(*def, schema, node, input_types);
    if (why.empty() && def->predicate) why = def->predicate(node);
    if (why.empty() && def->shape_predicate) why = def->shape_predicate(node);
    if (!why.empty()) {
      last_reason = std::move(why);
      continue;
    }
    // The kernel fits the node; can this hardware run it?
    if (!target.isa.contains(def->isa)) {
      hardware_reason = "kernel " + def->name + " needs " + (def->isa - target.isa).ToString() +
                        ", which this CPU (or --isa " + target.isa.ToString() + ") lacks";
      continue;
    }
    if (def->min_compute_capability > target.compute_capability) {
      hardware_reason = "kernel " + def->name + " needs compute capability " +
                        std::to_string(def->min_compute_capability / 10) + "." +
                        std::to_string(def->min_compute_capability % 10) + ", the device has " +
                        std::to_string(target.compute_capability / 10) + "." +
                        std::to_string(target.compute_capability % 10);
      continue;
    }
    result.kernel = def;
    return result;
  }
  if (!hardware_reason.empty()) {
    result.layer = FailureLayer::kHardware;
    result.reason = hardware_reason;
    return result;
  }
  result.layer = FailureLayer::kKernel;
  if (!opset_matched) {
    // Each range once, in registration order: the ISA and dtype variants of one version share it.
    std::vector<std::string> seen;
    std::string ranges;
    for (const KernelDef* def : same_op) {
      std::string range =
          std::to_string(def->since) + "-" + (def->until == kOpsetOpen ? std::string("") : std::to_string(def->until));
      if (std::find(seen.begin(), seen.end(), range) != seen.end()) continue;
      if (!ranges.empty()) ranges += ", ";
      ranges += range;
      seen.push_back(std::move(range));
    }
    result.reason = "backend '" + backend_ + "' implements " + node.op_type() + " for opsets " + ranges +
                    ", not opset " + std::to_string(node.opset());
  } else {
    result.reason = last_reason;
  }
  return result;
}

namespace dtypes {

std::vector<DataType> Floats() { return {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16}; }
std::vector<DataType> SignedInts() { return {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64}; }
std::vector<DataType> Ints() {
  return {DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
          DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64};
}
std::vector<DataType> Numeric() { return Concat(Floats(), Ints()); }
std::vector<DataType> All() {
  std::vector<DataType> out;
  for (int32_t v = 1; v <= kMaxDataTypeValue; ++v) out.push_back(static_cast<DataType>(v));
  return out;
}
std::vector<DataType> AllNonString() {
  auto out = All();
  out.erase(std::remove(out.begin(), out.end(), DataType::kString), out.end());
  return out;
}
std::vector<DataType> Concat(std::vector<DataType> a, const std::vector<DataType>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace dtypes
}  // namespace ferry
