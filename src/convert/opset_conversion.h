// Opset conversion: rewrites a model's default-domain (ai.onnx) nodes from the opset it imports to another one,
// up or down across opsets 7-28, on Ferry's IR and schema registry (`ferry optimize --opset N`).
//
// Every node of every graph (subgraphs and model-local functions included) steps across each schema version
// boundary between its opset and the target: an adapter registered for (op, boundary) rewrites it (an attribute
// becoming an input, an axis convention that changed, an op that does not exist below the boundary decomposed
// into older ones), else the generic rule accepts the node when it is valid as written for the other version and
// means the same there (adapter.h). A node that cannot be expressed stops the conversion: the error lists every
// such node, "node 'NAME' (OP): cannot be expressed in opset N: REASON", and the model is left unchanged.
// Other domains (ai.onnx.ml, ai.ferry, custom ones) are left as they are.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace ferry::convert {

inline constexpr int64_t kMinConvertibleOpset = 7;

struct OpsetConversion {
  int64_t from = 0, to = 0;
  int nodes = 0;          // default-domain nodes converted (subgraphs and functions included)
  int nodes_changed = 0;  // of those, nodes an adapter or the generic rule rewrote
  int nodes_added = 0;    // helper nodes adapters added (a Softmax's Transposes, a LayerNormalization's parts)
  std::map<std::string, int> by_adapter;  // adapter family (or "generic") -> nodes it rewrote
};

// Converts `model` to opset `to` of the default domain. The model's types should be inferred first (adapters
// read ranks, static dims and element types; the generic rule checks element types against the target's type
// constraints); run type inference again afterwards for the helper values adapters add. Throws
// InvalidArgumentError for a target or source opset outside 7..the newest Ferry knows, and for a model with nodes
// that cannot be expressed (listing each one); the model is then unchanged. On success the model's graphs are
// replaced (pointers into the old graphs are no longer valid). ir_version follows the opset: raised to the IR of
// the ONNX release that introduced opset `to` going up, lowered to it going down (when nothing in the model needs
// a newer IR), so that runtimes of that release load the model.
OpsetConversion ConvertOpset(ir::Model& model, int64_t to);

// "opset 17 -> 13: 12 of 230 nodes rewritten (reduce-axes 4, softmax-axis 2, ...), 3 nodes added"
std::string FormatOpsetConversion(const OpsetConversion& c);

}  // namespace ferry::convert
