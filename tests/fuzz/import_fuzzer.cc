// Model bytes -> validated IR: the importer (protobuf parse, every reference, type and size, sparse
// initializers, external data resolved against the scratch directory's files, FIFO and escaping symlinks
// included), function inlining and static type and shape inference. Also the importer's no-weights mode, which
// `ferry check` uses and which must validate external data the same way.
#include <span>

#include "fuzz_util.h"
#include "ir/inline_functions.h"
#include "ir/onnx_import.h"
#include "runtime/type_inference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  const std::string& dir = ferry::fuzz::ScratchDir();
  ferry::fuzz::ExpectFerryErrors([&] {
    auto model = ferry::ir::ImportModelFromBytes(bytes, dir, "fuzz.onnx");
    ferry::ir::InlineModelFunctions(*model);
    ferry::runtime::InferTypes(*model);
  });
  ferry::fuzz::ExpectFerryErrors([&] {
    ferry::ir::ImportOptions options;
    options.load_initializer_data = false;
    auto model = ferry::ir::ImportModelFromBytes(bytes, dir, "fuzz.onnx", options);
    ferry::ir::InlineModelFunctions(*model);
    ferry::runtime::TypeInferenceReport report;
    ferry::runtime::InferTypes(*model, &report);
  });
  return 0;
}
