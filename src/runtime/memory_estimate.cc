#include "runtime/memory_estimate.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "runtime/memory_plan.h"
#include "runtime/value_reads.h"

namespace ferry::runtime {
namespace {

// Tensor's own allocation limit (core/tensor.cc): beyond it a value could not be allocated at all. Capping
// each value here also keeps every sum of a graph's values far from int64 overflow.
constexpr int64_t kMaxValueBytes = int64_t{1} << 46;

}  // namespace

int64_t StaticValueBytes(const ir::TypeInfo& type, std::string* why) {
  auto unknown = [&](const std::string& reason) {
    if (why) *why = reason;
    return int64_t{-1};
  };
  if (!type.is_tensor()) {
    if (type.kind == ir::TypeInfo::Kind::kUnknown) return unknown("type is unknown");
    return unknown("type " + type.ToString() + " is not a tensor");
  }
  if (!type.has_static_shape()) return unknown("shape " + type.ToString() + " is not static");
  if (type.elem_type == DataType::kString) return unknown("string tensors have no fixed size");
  const int bits = DataTypeBits(type.elem_type);
  if (bits <= 0) return unknown("element type of " + type.ToString() + " has no known size");
  unsigned __int128 count = 1;
  for (const ir::Dim& d : *type.shape) {
    count *= static_cast<unsigned __int128>(d.value);
    if (count > static_cast<unsigned __int128>(kMaxValueBytes)) break;  // stays far below __int128's range
  }
  const unsigned __int128 bytes = (count * static_cast<unsigned>(bits) + 7) / 8;
  if (bytes > static_cast<unsigned __int128>(kMaxValueBytes)) {
    return unknown(type.ToString() + " is too large to allocate");
  }
  return static_cast<int64_t>(bytes);
}

GraphMemoryEstimate EstimateGraphMemory(const ir::Graph& g) {
  GraphMemoryEstimate est;
  std::unordered_set<const ir::Value*> outside;  // values not in the arena (weights, inputs, outputs)
  auto bytes_of = [&](const ir::Value* v) -> int64_t {
    std::string why;
    const int64_t b = StaticValueBytes(v->type(), &why);
    if (b >= 0) return b;
    est.unknown.push_back("'" + v->name() + "': " + why);
    return 0;
  };

  for (const ir::Value* v : g.initializers()) {
    if (!outside.insert(v).second) continue;
    // Loaded data is authoritative (and string initializers have a size too).
    est.weights_bytes += std::min(static_cast<int64_t>(v->initializer()->nbytes()), kMaxValueBytes);
  }
  for (const ir::Value* v : g.inputs()) {
    if (outside.insert(v).second) est.io_bytes += bytes_of(v);
  }
  for (const ir::Value* v : g.outputs()) {
    if (outside.insert(v).second) est.io_bytes += bytes_of(v);
  }
  // Initializers imported without data (ImportOptions::load_initializer_data = false) are typed values that
  // nothing produces.
  for (const auto& v : g.values()) {
    if (!v->producer() && !v->consumers().empty() && outside.insert(v.get()).second) {
      est.weights_bytes += bytes_of(v.get());
    }
  }

  // Last read of each value of this graph, by step.
  std::unordered_map<const ir::Value*, int> last_read;
  std::vector<const ir::Value*> reads;
  const auto& nodes = g.nodes();
  for (size_t j = 0; j < nodes.size(); ++j) {
    reads.clear();
    CollectNodeReads(*nodes[j], reads);
    for (const ir::Value* v : reads) {
      if (v->owner() == &g) last_read[v] = static_cast<int>(j);
    }
  }

  std::vector<BufferRequest> requests;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = *nodes[i];
    if (!n.subgraphs().empty()) est.unknown.push_back(n.Describe() + ": values inside its subgraphs are not counted");
    for (const ir::Value* v : n.outputs()) {
      if (!v || outside.count(v)) continue;
      BufferRequest r;
      r.bytes = bytes_of(v);
      r.first_step = static_cast<int>(i);
      auto it = last_read.find(v);
      r.last_step = it != last_read.end() ? std::max(it->second, r.first_step) : r.first_step;
      requests.push_back(r);
    }
  }
  const MemoryPlan plan = PlanMemory(requests);
  est.arena_bytes = plan.arena_bytes;
  est.lower_bound = plan.lower_bound;
  return est;
}

}  // namespace ferry::runtime
