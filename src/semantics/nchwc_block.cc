#include "semantics/nchwc_block.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "core/isa.h"
#include "ferry/error.h"

namespace ferry::semantics {

int64_t NchwcBlockSize() {
  const char* env = std::getenv("FERRY_NCHWC_BLOCK");
  if (env && *env) {
    const std::string_view v(env);
    if (v == "8") return 8;
    if (v == "16") return 16;
    throw InvalidArgumentError("FERRY_NCHWC_BLOCK = '" + std::string(v) + "': expected 8 or 16 (the NCHWc block " +
                               "size of the machine that wrote the model)");
  }
  static const bool avx512f = DetectHostIsa().has(Isa::kAvx512f);
  return avx512f ? 16 : 8;
}

}  // namespace ferry::semantics
