// A KServe v2 REST infer body with the binary tensor data extension: the first 4 input bytes (little endian) are
// the Inference-Header-Content-Length, the rest is the body (a JSON header, then raw tensor bytes). Lengths that
// overshoot the body or cut the JSON short, binary_data_size lies, and BYTES tensors' 4-byte length prefixes.
#include <cstring>
#include <string_view>

#include "kserve_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t header_length = 0;
  std::memcpy(&header_length, data, 4);
  ferry::fuzz::DecodeAndEncode(std::string_view(reinterpret_cast<const char*>(data) + 4, size - 4), header_length);
  return 0;
}
