// The .npy reader behind `ferry run --input x.npy`, `ferry compare --reference` and the server-side tools: the
// magic, versions 1-3, the header dict (descr, fortran_order, shape), the data size, from memory and from a file.
// An array that parses must encode (EncodeNpy) and parse again to the same dtype, shape and bytes.
#include <cstring>
#include <span>

#include "fuzz_util.h"
#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  ferry::fuzz::ExpectFerryErrors([&] {
    const ferry::Tensor t = ferry::tools::ParseNpy(bytes, "fuzz.npy");
    std::vector<uint8_t> encoded;
    try {
      encoded = ferry::tools::EncodeNpy(t);
    } catch (const ferry::Error&) {
      return;  // a dtype .npy can read but not write
    }
    const ferry::Tensor back = ferry::tools::ParseNpy(encoded, "re-encoded");
    if (back.dtype() != t.dtype() || back.shape() != t.shape()) ferry::fuzz::Fail(".npy round trip: type changed");
    if (t.dtype() == ferry::DataType::kString) {
      for (int64_t i = 0; i < t.size(); ++i) {
        if (back.strings()[i] != t.strings()[i]) ferry::fuzz::Fail(".npy round trip: string changed");
      }
    } else if (back.nbytes() != t.nbytes() || std::memcmp(back.raw_data(), t.raw_data(), t.nbytes()) != 0) {
      ferry::fuzz::Fail(".npy round trip: bytes changed");
    }
  });
  const std::string path = ferry::fuzz::WriteScratchFile("input.npy", bytes);
  ferry::fuzz::ExpectFerryErrors([&] { (void)ferry::tools::ReadNpy(path); });
  return 0;
}
