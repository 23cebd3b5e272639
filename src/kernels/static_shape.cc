#include "kernels/static_shape.h"

namespace ferry {

std::optional<Shape> StaticShape(const ir::Node& node, size_t i) {
  const ir::Value* v = node.input(i);
  if (!v) return std::nullopt;
  if (const Tensor* t = v->initializer()) return t->shape();
  if (!v->type().is_tensor() || !v->type().shape) return std::nullopt;
  Shape s;
  for (const ir::Dim& d : *v->type().shape) {
    if (!d.is_static()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

}  // namespace ferry
