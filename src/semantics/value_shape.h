// What the graph alone tells of a value's shape before a run: its initializer's, else its type's. For decisions
// made before the first run (kernel creation: pre-packing, primitives; support predicates; planning).
#pragma once

#include <cstdint>
#include <optional>

#include "ferry/tensor.h"
#include "ir/graph.h"

namespace ferry::semantics {

// The rank of `v` (null: an omitted input): its initializer's, else its tensor type's when known; nullopt otherwise.
std::optional<int64_t> KnownRank(const ir::Value* v);

// The dims of `v`: its initializer's shape, else its tensor type's when every dim is static; nullopt otherwise.
std::optional<Shape> KnownStaticShape(const ir::Value* v);

}  // namespace ferry::semantics
