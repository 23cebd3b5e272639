// The model repository on disk, laid out as Triton's: <repo>/<model>/config.pbtxt and
// <repo>/<model>/<version>/model.onnx. Names coming from requests are validated here before any path is built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/model_config.h"

namespace ferry::server {

// Throws InvalidArgumentError unless `name` is a model name Ferry accepts: 1-255 characters from
// [A-Za-z0-9_.-], not starting with '.' (so never "." or "..", and no '/' or '\': no path traversal).
void ValidateModelName(const std::string& name);
// The version a request names ("" = any): digits only, fitting int64; InvalidArgumentError otherwise.
int64_t ParseVersion(const std::string& text);

// The models in the repository: its sub-folders with valid model names, sorted. `skipped` (optional) collects
// "NAME: why" for entries that are not models (files, hidden or invalid names).
std::vector<std::string> ListModels(const std::string& repository, std::vector<std::string>* skipped = nullptr);

// A model folder read from disk: its config (parsed, not yet completed from the model) and version folders.
struct ModelSource {
  std::string name;
  std::string dir;
  ParsedConfig config;
  std::vector<std::string> warnings;
  std::vector<int64_t> available_versions;  // numeric sub-folders, ascending
};

// Reads <repository>/<name>: validates the name, checks the folder is inside the repository (no symlink out),
// parses config.pbtxt when present and lists the numeric version folders (others are skipped with a warning).
// config.pbtxt must be a regular file of at most 4 MiB, checked before it is opened (a FIFO would block).
// Throws InvalidArgumentError for a bad name or missing model, InvalidModelError for a bad config.
ModelSource ReadModelSource(const std::string& repository, const std::string& name);

// The versions the policy serves among `available` (ascending). Missing specific versions throw
// InvalidModelError naming them; an empty result throws too ("no version folder").
std::vector<int64_t> SelectVersions(const ServeConfig& config, const std::vector<int64_t>& available,
                                    const std::string& model_dir);

// A string that changes when anything the model loads from changes (config.pbtxt, version folders, model
// files: names, sizes, modification times). Poll mode reloads a model when it changes.
std::string ModelFingerprint(const std::string& repository, const std::string& name);

}  // namespace ferry::server
