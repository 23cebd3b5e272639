#include "kernels/static_shape.h"

#include "semantics/value_shape.h"

namespace ferry {

std::optional<Shape> StaticShape(const ir::Node& node, size_t i) {
  return semantics::KnownStaticShape(node.input(i));
}

}  // namespace ferry
