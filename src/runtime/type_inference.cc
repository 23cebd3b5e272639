#include "runtime/type_inference.h"

namespace ferry::runtime {

void InferTypes(ir::Model&) {
  // Filled in once the schema registry's InferOutputElementTypes lands.
}

}  // namespace ferry::runtime
