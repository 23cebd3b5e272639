#include "semantics/value_shape.h"

namespace ferry::semantics {

std::optional<int64_t> KnownRank(const ir::Value* v) {
  if (!v) return std::nullopt;
  if (const Tensor* t = v->initializer()) return t->rank();
  return v->type().rank();
}

std::optional<Shape> KnownStaticShape(const ir::Value* v) {
  if (!v) return std::nullopt;
  if (const Tensor* t = v->initializer()) return t->shape();
  if (!v->type().is_tensor()) return std::nullopt;
  return v->type().static_dims();
}

}  // namespace ferry::semantics
