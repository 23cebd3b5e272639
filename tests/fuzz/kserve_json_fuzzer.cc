// A KServe v2 REST infer body that is all JSON (no Inference-Header-Content-Length): parsing with the depth bound,
// every field (id, inputs with name/datatype/shape/data/parameters, outputs, parameters), nested and flat data,
// every datatype's value checks, shape and size checks against the config, and the response encoder.
#include <string_view>

#include "kserve_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ferry::fuzz::DecodeAndEncode(std::string_view(reinterpret_cast<const char*>(data), size), std::nullopt);
  return 0;
}
