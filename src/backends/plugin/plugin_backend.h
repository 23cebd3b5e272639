// The backend a loaded plugin becomes: its ops (copied from the plugin's FerryOpDefs), their kernels, and the
// host side of the C ABI (FerryHostApi, FerryOpContext). plugin_loader.cc opens the library and fills it.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.h"
#include "ferry/plugin.h"
#include "schemas/schema.h"

namespace ferry::plugin {

struct Param {
  std::string name, type_var;
  bool optional = false;
};

// One op a plugin registered, owned by its backend (never freed: plugins stay loaded for the process).
struct PluginOp {
  std::string plugin_path;  // for messages
  std::string backend;
  std::string domain, op_type;
  int since = 1, until = kOpsetOpen;
  std::vector<Param> inputs, outputs;
  std::vector<TypeConstraintDef> types;
  std::vector<schemas::AttrSchema> attributes;
  FerryCreateFn create = nullptr;
  FerryComputeFn compute = nullptr;
  FerryDestroyFn destroy = nullptr;
  FerryInferShapesFn infer_shapes = nullptr;

  std::string Describe() const;  // "com.example::Correlation (plugin /path/libx.so)"
  // The schema Ferry validates nodes of this op against: element types are left open (any non-string type)
  // so that a dtype the plugin lacks is a kernel-layer verdict naming the plugin's types.
  schemas::OpSchema MakeSchema() const;
  KernelDef MakeKernelDef() const;
};

// Validates a FerryOpDef and copies it. Returns "" or what is wrong with it.
std::string ReadOpDef(const FerryOpDef& def, const std::string& plugin_path, const std::string& backend,
                      PluginOp& out);

class PluginBackend : public Backend {
 public:
  PluginBackend(std::string name, std::string path) : name_(std::move(name)), path_(std::move(path)), registry_(name_) {}
  const std::string& name() const override { return name_; }
  std::string device() const override { return std::string(kHostDevice); }
  const KernelRegistry& kernels() const override { return registry_; }
  bool is_plugin() const override { return true; }
  const std::string& path() const { return path_; }

  // Adds an op (its kernel); `ops` keeps it alive.
  void AddOp(std::unique_ptr<PluginOp> op);
  const std::vector<std::unique_ptr<PluginOp>>& ops() const { return ops_; }

 private:
  std::string name_, path_;
  KernelRegistry registry_;
  std::vector<std::unique_ptr<PluginOp>> ops_;
};

// The host API handed to plugins (one table for the process).
const FerryHostApi* HostApi();

// Shape inference for every plugin op (OpSchema::infer): finds the op and calls its infer_shapes callback.
void InferPluginShapes(schemas::InferenceContext& ctx);
// Makes the op findable by InferPluginShapes.
void RegisterOpForInference(const PluginOp& op);

}  // namespace ferry::plugin
