// ONNX import: ModelProto -> ir::Model. The model file is untrusted: every reference, type and size is
// validated here, and errors name the model path, graph and node.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
class TypeProto;
}  // namespace onnx

namespace ferry::ir {

// Highest ONNX IR version Ferry reads.
inline constexpr int64_t kMaxIrVersion = 13;

// The operator domains Ferry's own schemas define (src/schemas/, which the IR does not depend on), each with the
// newest opset they know. Opset imports (of the model and of each function) are validated at import, before any
// pass can fold a node away: a version below 1 is invalid, one of these domains at a newer opset than listed is
// UnsupportedError, and one domain imported twice at different versions is invalid. Any other domain is a custom
// one (a plugin's, docs/plugins.md) and takes any version from 1. tests/ir/opset_import_test.cc keeps this table
// equal to the schema registry's.
struct KnownDomain {
  std::string_view domain;  // "" is ai.onnx
  int64_t max_opset;
};
inline constexpr KnownDomain kKnownDomains[] = {
    {"", 28},       {"ai.onnx.ml", 5},         {"ai.onnx.preview.training", 1}, {"ai.onnx.preview", 1},
    {"ai.ferry", 1}, {"com.microsoft", 1}, {"com.microsoft.nchwc", 1},
};
// The newest opset of `domain` in kKnownDomains ("ai.onnx" is ""), 0 for a custom domain.
int64_t KnownMaxOpset(std::string_view domain);

struct ImportOptions {
  // false: initializers with more than `small_initializer_elements` elements (the weights) are not copied and
  // external data is not read for them. Such a value keeps its type (dtype and static shape from the
  // TensorProto's dims) but has no data, so it is a plain typed value in the IR (is_initializer() is false):
  // enough for type inference and placement (`ferry check`), not for execution. Small initializers (shape
  // tensors, axes, scales: what shape inference reads) are still loaded.
  bool load_initializer_data = true;
  int64_t small_initializer_elements = 1024;
};

// What an import did with the initializers of the main graph (subgraphs not counted).
struct ImportStats {
  int64_t initializers = 0;           // dense and sparse, loaded or not
  int64_t initializers_skipped = 0;   // typed but not loaded (load_initializer_data = false)
  int64_t bytes_skipped = 0;          // their data size
  std::vector<std::string> skipped_names;
};

std::unique_ptr<Model> ImportModelFromFile(const std::string& path);
std::unique_ptr<Model> ImportModelFromFile(const std::string& path, const ImportOptions& options,
                                           ImportStats* stats = nullptr);
// `base_dir` is where external data lives (empty: external data is refused); `name` is used in errors.
std::unique_ptr<Model> ImportModelFromBytes(std::span<const uint8_t> bytes, const std::string& base_dir = "",
                                            const std::string& name = "", const ImportOptions& options = {},
                                            ImportStats* stats = nullptr);
std::unique_ptr<Model> ImportModelProto(const onnx::ModelProto& proto, const std::string& path,
                                        const std::string& base_dir, const ImportOptions& options = {},
                                        ImportStats* stats = nullptr);

TypeInfo TypeFromProto(const onnx::TypeProto& proto);

}  // namespace ferry::ir
