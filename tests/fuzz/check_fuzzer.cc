// The whole `ferry check` path on a model file: the no-weights import (external data validated as `ferry run`
// validates it), inlining, type inference, the optimizer's view, placement on cpu,ref (and, for a third of the inputs,
// on an AVX2 machine), and the text and JSON reports (whose strings come from the model: names with invalid UTF-8
// must still make valid JSON).
#include <span>

#include "fuzz_util.h"
#include "tools/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ferry::fuzz::WriteScratchFile("model.onnx", std::span<const uint8_t>(data, size));
  ferry::fuzz::ExpectFerryErrors([&] {
    ferry::tools::CheckOptions options;
    if (size % 3 == 0) options.isa = "avx2,fma";
    const ferry::tools::CheckReport report = ferry::tools::CheckModel(path, options);
    (void)ferry::tools::FormatCheckText(report, /*verbose=*/true);
    (void)ferry::tools::FormatCheckJson(report);
  });
  return 0;
}
