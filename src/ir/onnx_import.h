// ONNX import: ModelProto -> ir::Model. The model file is untrusted: every reference, type and size is
// validated here, and errors name the model path, graph and node.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
class TypeProto;
}  // namespace onnx

namespace ferry::ir {

// Highest ONNX IR version Ferry reads.
inline constexpr int64_t kMaxIrVersion = 13;

std::unique_ptr<Model> ImportModelFromFile(const std::string& path);
// `base_dir` is where external data lives (empty: external data is refused); `name` is used in errors.
std::unique_ptr<Model> ImportModelFromBytes(std::span<const uint8_t> bytes, const std::string& base_dir = "",
                                            const std::string& name = "");
std::unique_ptr<Model> ImportModelProto(const onnx::ModelProto& proto, const std::string& path,
                                        const std::string& base_dir);

TypeInfo TypeFromProto(const onnx::TypeProto& proto);

}  // namespace ferry::ir
