// The attribute constructors of attribute.h.
#include "ir/attribute.h"

#include <utility>

namespace ferry::ir {

Attribute IntAttr(std::string name, int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}

Attribute IntsAttr(std::string name, std::vector<int64_t> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

Attribute FloatAttr(std::string name, float v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloat;
  a.f = v;
  return a;
}

Attribute FloatsAttr(std::string name, std::vector<float> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloats;
  a.floats = std::move(v);
  return a;
}

Attribute StringAttr(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kString;
  a.s = std::move(v);
  return a;
}

}  // namespace ferry::ir
