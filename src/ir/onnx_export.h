// ONNX export: ir::Model -> ModelProto (initializers inline as raw_data).
#pragma once

#include <string>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
}

namespace ferry::ir {

void ExportModelProto(const Model& model, onnx::ModelProto* proto);
std::string ExportModelBytes(const Model& model);
// Throws InvalidArgumentError when the file cannot be written.
void ExportModelToFile(const Model& model, const std::string& path);

}  // namespace ferry::ir
