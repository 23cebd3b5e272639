// Triton's model_warmup (config.pbtxt, message ModelWarmup of model_config.proto): the samples each instance of a
// model version runs before the version is served, checked against the model's completed config, and the input
// tensors they feed. A sample's failure fails the load (as in Triton); without model_warmup, the model manager
// runs one batch of zeros instead, and a failure of that is only a warning (zeros may not be a valid input).
//
// Per sample: `name` (required), `batch_size` (1..max_batch_size, or 1 for a model that does not batch; the
// inputs get it as their first dim), `count` (runs per instance, 0 means 1, at most 1000) and `inputs`, a map
// from each input the model requires (optional ones may be left out) to its data_type (the config's), dims (one
// sample's, without the batch dim; the config's where those are not -1) and one of
//   zero_data       zeros (empty strings for TYPE_STRING);
//   random_data     uniform values, the same on every load: [0, 1) for floating point, 0..9 for integers,
//                   false/true for TYPE_BOOL, empty strings for TYPE_STRING (as Triton);
//   input_data_file a file in the model's warmup/ folder holding one sample's data, row-major and little-endian
//                   (TYPE_STRING: per element a 4-byte length, then the bytes), exactly that many bytes; it must be
//                   a regular file inside warmup/ (no "..", no symlink out; a FIFO is refused, never read).
// Every input tensor has at most 2^28 elements.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ferry/tensor.h"
#include "server/model_config.h"

namespace ferry::server {

struct WarmupInput {
  enum class Data { kZero, kRandom, kFile };
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;  // one sample's, without the batch dim
  Data data = Data::kZero;
  std::string file;           // kFile: the path inside <model>/warmup/
};

struct WarmupSample {
  std::string name;
  int64_t batch_size = 1;
  uint32_t count = 1;  // runs per instance
  std::vector<WarmupInput> inputs;  // in the order of the config's inputs
};

// Checks config.proto's model_warmup against `served` (the completed, validated config): InvalidModelError
// "FILE:LINE: model_warmup[I] 'NAME': problem".
std::vector<WarmupSample> ValidateWarmups(const ParsedConfig& config, const ServeConfig& served);

// The input tensors of one sample, `served.max_batch_size > 0` adding the batch dim. Files are read from
// `model_dir`/warmup/; InvalidModelError naming the input and file when one is not usable.
std::vector<std::pair<std::string, Tensor>> WarmupTensors(const WarmupSample& sample, const ServeConfig& served,
                                                          const std::string& model_dir);

}  // namespace ferry::server
