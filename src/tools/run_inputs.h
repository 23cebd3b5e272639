// Building the inputs of a run from the command line: files (.npy / TensorProto .pb), or random values with
// shapes resolved from the model's declared dims, --shape overrides and --batch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/session.h"

namespace ferry::tools {

struct InputSpec {
  std::map<std::string, std::string> files;             // NAME -> .npy or .pb path
  std::map<std::string, std::vector<int64_t>> shapes;   // NAME -> dims
  std::map<std::string, std::pair<double, double>> ranges;  // NAME -> [lo, hi)
  std::optional<int64_t> batch;                          // value for symbolic leading dims
  bool random = false;
  uint64_t seed = 0;
};

// Parses "1x3x224x224" (also "1,3,224,224"); throws InvalidArgumentError naming `what`.
std::vector<int64_t> ParseDims(const std::string& text, const std::string& what);
// Parses "NAME=VALUE"; throws InvalidArgumentError naming `flag`.
std::pair<std::string, std::string> ParseAssignment(const std::string& text, const std::string& flag);

// Every input of `session` from `spec`. Throws InvalidArgumentError naming the input when a file is missing,
// a dim cannot be resolved, or a name does not exist.
std::vector<NamedValue> BuildInputs(const Session& session, const InputSpec& spec);
// Throws InvalidArgumentError when --input, --shape or --range names no input of `inputs`, or (without --random)
// an input has no --input file: what BuildInputs checks first, for a tool to report as a usage error.
void CheckInputNames(const std::vector<IoInfo>& inputs, const InputSpec& spec);

// The same for inputs described by `inputs` (a server's model metadata, for `ferry bench --server`).
std::vector<NamedValue> BuildInputs(const std::vector<IoInfo>& inputs, const InputSpec& spec);

// The input shapes `spec` fixes at session creation (SessionOptions::input_shapes), so that the optimizer, the
// memory plan and the kernels see static shapes, as `ferry optimize --shape` and ONNX Runtime's free dimension
// overrides do: every --shape, and with --batch, each input fed random values (no --input file) whose leading dim
// is symbolic, with its other dims static (one with other symbolic dims is sized per run instead). `inputs`: the
// model's (ReadModelInputs). Throws InvalidArgumentError, naming the flag and the declared shapes, for a --shape
// naming no input, of another rank, or contradicting a static dim, and for a --batch where no input has a
// symbolic leading dim (the model's batch is fixed, or its symbolic dims come later: --shape then).
std::map<std::string, std::vector<int64_t>> FixedInputShapes(const std::vector<IoInfo>& inputs,
                                                             const InputSpec& spec);

// Loads a tensor from .npy or TensorProto .pb (by extension). Only a regular file is read: a FIFO, device or
// directory is refused (InvalidArgumentError naming the path and what it is) without ever blocking.
Tensor LoadTensorFile(const std::string& path);

struct TensorSummary {
  double min = 0, max = 0, mean = 0;
  int64_t nan = 0, inf = 0;
  bool numeric = false;
};
TensorSummary Summarize(const Tensor& t);

}  // namespace ferry::tools
