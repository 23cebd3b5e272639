// ONNX export: ir::Model -> ModelProto (initializers inline as raw_data, or in an external data file).
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
}

namespace ferry::ir {

void ExportModelProto(const Model& model, onnx::ModelProto* proto);
std::string ExportModelBytes(const Model& model);
struct ExportOptions {
  // true: initializers (of every graph, subgraphs included) of more than `external_data_threshold` bytes go to
  // one file beside the model, named after it plus ".data" (model.onnx -> model.onnx.data), by ONNX's external
  // data convention: data_location EXTERNAL, external_data {location, offset, length}; a tensor over 1 MiB starts
  // at a multiple of 64 KiB (as onnx-ir aligns them, so a reader can mmap it), smaller ones follow each other.
  bool external_data = false;
  int64_t external_data_threshold = 1024;
};

struct ExportStats {
  std::string data_path;          // the external data file written ("" when none)
  int64_t external_tensors = 0;   // initializers written there
  int64_t external_bytes = 0;     // their data, padding excluded
};

// Throws InvalidArgumentError when a file cannot be written, or when the model with its inline initializers
// would exceed protobuf's 2 GiB limit (then use external_data).
void ExportModelToFile(const Model& model, const std::string& path);
void ExportModelToFile(const Model& model, const std::string& path, const ExportOptions& options,
                       ExportStats* stats = nullptr);

}  // namespace ferry::ir
