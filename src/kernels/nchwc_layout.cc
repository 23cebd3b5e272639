#include "kernels/nchwc_layout.h"

#include "ferry/error.h"
#include "semantics/nchwc_block.h"

namespace ferry {

// The rule lives in semantics/nchwc_block.h, which shape inference and legalization share.
int64_t NchwcBlockSize() { return semantics::NchwcBlockSize(); }

int64_t NchwcBlockSizeFor(const ir::Node& node) {
  try {
    return NchwcBlockSize();
  } catch (const InvalidArgumentError& e) {
    throw InvalidModelError(node.Describe() + ": " + e.what());
  }
}

std::string NchwcConvLayoutOf(const Shape& w, int64_t group, int64_t block, NchwcConvLayout* out) {
  if (w.size() != 4) return "expected a 2-D convolution's W [M, C/group, kh, kw]";
  const int64_t m = w[0], in = w[1], b = block;
  const std::string bs = std::to_string(b);
  if (group < 1) return "group = " + std::to_string(group) + " must be >= 1";
  if (m % b != 0) return "M = " + std::to_string(m) + " is not a multiple of the NCHWc block " + bs;
  NchwcConvLayout l;
  l.depthwise = group > 1 && in == 1 && m == group;
  l.plain_input = group == 1 && in < b;
  if (!l.filter_bo()) {
    if (m % group != 0) return "M = " + std::to_string(m) + " is not a multiple of group " + std::to_string(group);
    if (in % b != 0 || (m / group) % b != 0) {
      return "C/group = " + std::to_string(in) + " and M/group = " + std::to_string(m / group) + " (group " +
             std::to_string(group) + ") must be multiples of the NCHWc block " + bs +
             " (or the conv depthwise, or ungrouped with C < " + bs + ")";
    }
  }
  *out = l;
  return "";
}

}  // namespace ferry
