// The opset converter's building blocks: a Step (one node crossing one schema version boundary, up or down), the
// ConversionContext adapters rewrite the IR through, the Adapter record and its registry, and the generic rule.
//
// A node is converted one boundary at a time: from the version in effect at its opset to the one in effect at the
// target, crossing the since_version of every schema version in between. At each boundary the adapter registered
// for (op, boundary) rewrites the node, or, when none is, the generic rule checks that the node as written is
// valid for the schema on the other side and means the same there. A node that cannot be expressed makes the
// adapter call Refuse(reason); the driver (opset_conversion.cc) collects every such node and converts nothing.
//
// Adapters may replace the node (another op, other inputs) and may add helper nodes; a helper node is written at
// an opset the adapter chooses (Build's `opset`) and the driver converts it on to the target like any other node,
// so an adapter only needs to know the form of its helpers at one opset. An op added in a later opset is written
// out in older ops by its legalization decomposition (ConversionContext::Decompose).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/tensor.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/value_query.h"
#include "schemas/schema.h"

namespace ferry::convert {

// What Refuse throws: the reason completes "node 'NAME' (OP): cannot be expressed in opset N: ".
struct Unconvertible {
  std::string reason;
};
[[noreturn]] void Refuse(std::string reason);

// One node crossing the version boundary `boundary` (the since_version of the newer schema).
struct Step {
  int64_t boundary = 0;
  bool up = true;
  const schemas::OpSchema* older = nullptr;  // in effect at boundary - 1 (nullptr: the op does not exist there)
  const schemas::OpSchema* newer = nullptr;  // in effect at boundary
  int64_t target = 0;                        // the opset the whole conversion goes to
  // The node is in a model-local function's body, whose value types depend on the caller: element types that are
  // unknown there are not held against the node.
  bool in_function = false;

  // The opset the node is expressed in after this step.
  int64_t after() const { return up ? boundary : boundary - 1; }
  const schemas::OpSchema* from() const { return up ? older : newer; }
  const schemas::OpSchema* to() const { return up ? newer : older; }
  // "Softmax-13" for messages.
  std::string ToName() const;
  std::string FromName() const;
};

// What adapters rewrite the IR through: IR builders (ir/builder.h) whose names come from one scope for the whole
// model (ONNX forbids a subgraph to redefine an outer name), and the replacement of nodes, with the bookkeeping the
// driver needs (the helper nodes to convert on, the constants nothing reads any more).
class ConversionContext {
 public:
  explicit ConversionContext(ir::Model& model);

  ir::Model& model() { return model_; }

  // A builder of helpers in `graph`: values and initializers named from the model's scope, and default-domain nodes
  // written in the form of opset `opset` (the driver converts them to the target), each given the element types its
  // schema implies for outputs of unknown type.
  ir::Builder Build(ir::Graph& graph, int64_t opset = 0);
  // Replaces `node` by a node of op `op` (same name, domain and opset) with these inputs, outputs and attributes;
  // initializers and Constant outputs the old node read and nothing reads any more are removed. Returns the new node.
  ir::Node* Rebuild(ir::Node* node, const std::string& op, std::vector<ir::Value*> inputs,
                    std::vector<ir::Value*> outputs, std::vector<ir::Attribute> attributes);
  // Removes `node` (which a decomposition replaced), then cleans up its inputs as Rebuild does.
  void Remove(ir::Node* node);
  // Writes `node` out in older ops with the legalization decomposition of its op (legalize/decomposition.h), built
  // at the opset the step goes to; refuses when the decomposition does. Returns nullptr (the node is gone).
  ir::Node* Decompose(ir::Node* node, const Step& step);
  // Helper nodes added since the last call (the driver converts them to the target).
  std::vector<ir::Node*> TakeAdded();
  // Removes the initializers and Constant nodes that rewritten nodes stopped reading and nothing else reads (done
  // once at the end, so that no node the driver still holds goes away).
  void RemoveOrphans();

 private:
  void DropIfUnused(ir::Value* v);
  // Gives the node's outputs of unknown type the element type its schema implies.
  void FillTypes(ir::Node& n);

  ir::Model& model_;
  ir::NameScope names_;
  std::vector<ir::Node*> added_;
  std::vector<ir::Value*> orphans_;
};

using AdaptFn = ir::Node* (*)(ConversionContext& ctx, ir::Node* node, const Step& step);

// The adapter of an op going below its first opset: ConversionContext::Decompose.
ir::Node* DecomposeDown(ConversionContext& ctx, ir::Node* node, const Step& step);

// How one op crosses one boundary. `up`/`down` return the node to continue with (the same node, its rebuilt
// replacement, or nullptr when the node was replaced by helper nodes); nullptr for a direction means the
// generic rule. The driver validates a returned node against the schema on the other side afterwards.
struct Adapter {
  std::string op;
  int64_t boundary = 0;
  std::string name;  // family name for the report, e.g. "reduce-axes"
  AdaptFn up = nullptr;
  AdaptFn down = nullptr;
};

class AdapterRegistry {
 public:
  // Throws InternalError for a second adapter of the same (op, boundary).
  void Add(Adapter a);
  const Adapter* Find(std::string_view op, int64_t boundary) const;
  const std::vector<Adapter>& all() const { return adapters_; }

 private:
  std::vector<Adapter> adapters_;
  std::map<std::pair<std::string, int64_t>, size_t> index_;
};

// Every adapter, built once from the list in adapter_list.cc.
const AdapterRegistry& Adapters();

// The generic rule: makes the node's attributes right for the other schema (drops an attribute the other side
// lacks when it holds the old default, or a neutral value such as all-1 dilations; writes out an old default that
// the other side changed) and checks the node against it (CheckNodeAt). Refuses otherwise. Returns true when it
// changed an attribute.
bool GenericStep(ir::Node& node, const Step& step);
// Refuses unless `node` is a valid use of `schema`: input/output counts, required inputs, attributes (names, types,
// required ones) and the element types of its inputs and outputs (known types must be allowed; for an unknown
// type, `from` must allow no type `schema` does not; `from` nullptr: unknown types pass).
void CheckNodeAt(const ir::Node& node, const schemas::OpSchema& schema, const schemas::OpSchema* from);

// ---- helpers for adapters ----------------------------------------------------------------------------------

// The value queries adapters ask (ir/value_query.h). Constants: an initializer that is not a graph input, or a
// Constant node's value (any of its value* attributes), as a copy; an integer tensor's values (int32/int64), a
// float tensor's (float/double/float16/bfloat16) as double. Shapes and element types: what the value's type
// declares (an initializer's tensor is not consulted): its rank, its dims, its dims when all are static, the
// element type of a tensor.
using ir::ConstantFloats;
using ir::ConstantInts;
using ir::ConstantValue;
using ir::TensorElementType;
using ir::TypeDims;
using ir::TypeRank;
using ir::TypeStaticShape;
// True when the value has readers (nodes, subgraphs) or is a graph output.
bool IsUsed(const ir::Value* v);

using ir::FloatAttr;  // the attribute constructors (ir/attribute.h)
using ir::FloatsAttr;
using ir::IntAttr;
using ir::IntsAttr;
using ir::StringAttr;
// The node's attributes without those named.
std::vector<ir::Attribute> AttrsWithout(const ir::Node& node, std::initializer_list<std::string_view> names);
// Replaces (or adds) attribute `a` in `attrs`.
void SetAttr(std::vector<ir::Attribute>& attrs, ir::Attribute a);
bool SameAttrValue(const ir::Attribute& a, const ir::Attribute& b);
std::string AttrValueString(const ir::Attribute& a);

// `axis` in [-rank, rank) made non-negative; Refuse when out of range.
int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what);
// A base for the names of a node's helper values and nodes: its name, or its op when it has none.
std::string NodeBase(const ir::Node& node);
// The inputs of `node` as a vector (for Rebuild), resized to `n` (absent optional inputs as nullptr).
std::vector<ir::Value*> InputsResized(const ir::Node& node, size_t n);
// The inputs with trailing absent ones removed.
std::vector<ir::Value*> TrimInputs(std::vector<ir::Value*> inputs);

}  // namespace ferry::convert
