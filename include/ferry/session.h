// The Session API: load a model once, run it many times (from several threads at once if you like).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "ferry/tensor.h"
#include "ferry/value.h"

namespace ferry {

struct SessionOptions {
  // Backends in priority order. Today: "ref".
  std::vector<std::string> backends = {"ref"};
  // Intra-op threads per run (0 = all hardware threads).
  int threads = 0;
  // CPU extensions Ferry may use, e.g. "avx2,fma" to emulate a lesser CPU ("" = all the host has, narrowed by
  // FERRY_ISA). Kernels needing a missing extension are not placed.
  std::string isa;
  // Graph optimization level 0-3. Placeholder until the optimizer lands: only 0 is honoured.
  int optimization_level = 0;
};

// Static description of a graph input or output. Unknown or symbolic dims are -1; `dim_names` holds the symbol
// ("batch") or "" for each dim. `kind` is "tensor", "sequence", "optional" or "map".
struct IoInfo {
  std::string name;
  std::string kind = "tensor";
  DataType dtype = DataType::kUndefined;
  bool has_shape = false;  // false when the rank is unknown
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
};

using NamedValue = std::pair<std::string, Value>;

class Session {
 public:
  // Throws ferry::Error (InvalidModel, Unsupported, ...) naming the model path, node and op on failure.
  static std::unique_ptr<Session> Create(const std::string& model_path, const SessionOptions& options = {});
  static std::unique_ptr<Session> CreateFromBytes(std::span<const uint8_t> bytes, const SessionOptions& options = {},
                                                  const std::string& base_dir = "");
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<IoInfo>& inputs() const;   // inputs the caller must feed (initializers excluded)
  const std::vector<IoInfo>& outputs() const;

  // Run the model. Every required input must be given by name; dtypes and static dims are checked
  // (InvalidArgumentError naming the input, expected vs got). Thread-safe.
  // Inputs and outputs may be tensors, sequences or optionals.
  std::vector<NamedValue> RunValues(const std::vector<NamedValue>& inputs) const;
  // Tensor-only convenience: throws InvalidArgumentError if an output is not a tensor.
  std::vector<std::pair<std::string, Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& inputs) const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry
