// `ferry run` on small mutated models: a session from the bytes (import, optimizer at level 3, placement on
// cpu,ref, kernel creation and weight packing), random inputs at the declared shapes (symbolic dims 2), and two
// runs (the first measures the buffers' lifetimes, the second runs from the planned arena).
//
// Kept small so that a finding means a fault, not a big model: inputs of at most 64 Ki elements each with values
// in [0, 3) (integer inputs often are repeats, sizes or trip counts: `ferry run --random`'s [0, 100) made a Tile
// of the ONNX tests compute for minutes), a predicted session of at most 256 MiB, one thread. A model that
// merely computes for long is real work, not a fault, but libFuzzer's -timeout reports it: such inputs are
// looked at, not kept.
#include <span>

#include "ferry/session.h"
#include "fuzz_util.h"
#include "tools/run_inputs.h"

namespace {

constexpr int64_t kMaxInputElements = 64 * 1024;
constexpr int64_t kMaxSessionBytes = 256ll << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ferry::fuzz::ExpectFerryErrors([&] {
    ferry::SessionOptions options;
    options.threads = 1;
    options.memory_limit = kMaxSessionBytes;
    auto session =
        ferry::Session::CreateFromBytes(std::span<const uint8_t>(data, size), options, ferry::fuzz::ScratchDir());
    ferry::tools::InputSpec spec;
    spec.random = true;
    spec.seed = size;
    bool symbolic = false;
    for (const ferry::IoInfo& in : session->inputs()) {
      if (in.kind != "tensor" || !in.has_shape) return;
      std::vector<int64_t> dims = in.dims;
      int64_t elements = 1;
      for (int64_t& d : dims) {
        if (d < 0) d = 2, symbolic = true;
        if (d > kMaxInputElements) return;
        elements *= d;
        if (elements > kMaxInputElements) return;
      }
      spec.shapes[in.name] = dims;
      spec.ranges[in.name] = {0.0, 3.0};
    }
    if (symbolic) {
      // Again with the dims fixed, so that the memory limit judges the shapes the runs feed.
      options.input_shapes = spec.shapes;
      session = ferry::Session::CreateFromBytes(std::span<const uint8_t>(data, size), options,
                                                ferry::fuzz::ScratchDir());
    }
    const std::vector<ferry::NamedValue> inputs = ferry::tools::BuildInputs(*session, spec);
    for (int run = 0; run < 2; ++run) (void)session->RunValues(inputs);
  });
  return 0;
}
