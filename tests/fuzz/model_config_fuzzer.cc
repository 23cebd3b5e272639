// Triton's config.pbtxt as `ferry serve` reads it: the text-format parse (errors with file, line and column),
// the refused and ignored fields, the value checks, and auto-completion against a model with a batched float
// input, a fixed int64 input and two outputs, followed by the final validation, as ModelManager::Build orders them.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "server/model_config.h"

namespace {

ferry::IoInfo Io(const std::string& name, ferry::DataType dtype, std::vector<int64_t> dims) {
  ferry::IoInfo io;
  io.name = name;
  io.dtype = dtype;
  io.has_shape = true;
  io.dims = dims;
  io.dim_names.assign(dims.size(), "");
  if (!dims.empty() && dims[0] < 0) io.dim_names[0] = "batch";
  return io;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ferry::fuzz::ExpectFerryErrors([&] {
    std::vector<std::string> warnings;
    ferry::server::ParsedConfig config = ferry::server::ParseModelConfig(text, "fuzz/config.pbtxt", &warnings);
    (void)ferry::server::ValidateModelConfig(config, "fuzz", nullptr);
    static const std::vector<ferry::IoInfo> inputs = {Io("x", ferry::DataType::kFloat, {-1, 3, 4}),
                                                      Io("ids", ferry::DataType::kInt64, {2})};
    static const std::vector<ferry::IoInfo> outputs = {Io("y", ferry::DataType::kFloat, {-1, 10}),
                                                       Io("label", ferry::DataType::kString, {-1})};
    ferry::server::CompleteModelConfig(config, inputs, outputs, 4, "fuzz/1/model.onnx");
    (void)ferry::server::ValidateModelConfig(config, "fuzz", &warnings);
  });
  return 0;
}
