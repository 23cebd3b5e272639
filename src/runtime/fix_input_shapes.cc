#include "runtime/fix_input_shapes.h"

#include <algorithm>

#include "ferry/error.h"

namespace ferry::runtime {
namespace {

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

void FixInputShapes(ir::Model& model, const std::map<std::string, std::vector<int64_t>>& shapes) {
  if (shapes.empty()) return;
  ir::Graph& graph = *model.graph;
  const std::vector<ir::Value*> inputs = graph.RequiredInputs();
  // First validate everything and collect the symbol bindings; then change the types (all or nothing).
  std::map<std::string, std::pair<int64_t, std::string>> symbols;  // symbol -> (value, input that bound it)
  std::vector<std::pair<ir::Value*, const std::vector<int64_t>*>> fixes;
  for (const auto& [name, dims] : shapes) {
    // `wanted`, not `name`: clang before 16 cannot capture a structured binding (the fuzz build is clang's).
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&wanted = name](const ir::Value* v) { return v->name() == wanted; });
    const std::string where = model.Describe() + ": input '" + name + "'";
    if (it == inputs.end()) {
      std::string known;
      for (const ir::Value* v : inputs) known += (known.empty() ? "" : ", ") + v->name() + " " + v->type().ToString();
      throw InvalidArgumentError(model.Describe() + ": the model has no input '" + name + "' (its inputs: " +
                                 (known.empty() ? "none" : known) + ")");
    }
    ir::Value* v = *it;
    const ir::TypeInfo& t = v->type();
    for (int64_t d : dims) {
      if (d < 0) throw InvalidArgumentError(where + ": negative dimension in " + DimsText(dims));
    }
    if (t.kind != ir::TypeInfo::Kind::kTensor && t.kind != ir::TypeInfo::Kind::kUnknown) {
      throw InvalidArgumentError(where + ": expected a tensor input to give a shape to, the model declares " +
                                 t.ToString());
    }
    if (t.shape) {
      if (t.shape->size() != dims.size()) {
        throw InvalidArgumentError(where + ": expected rank " + std::to_string(t.shape->size()) + " (the model declares " +
                                   t.ToString() + "), got " + std::to_string(dims.size()) + " dims " + DimsText(dims));
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        const ir::Dim& d = (*t.shape)[i];
        if (d.is_static() && d.value != dims[i]) {
          throw InvalidArgumentError(where + ": expected dimension " + std::to_string(i) + " to be " +
                                     std::to_string(d.value) + " (the model declares " + t.ToString() + "), got " +
                                     std::to_string(dims[i]) + " in " + DimsText(dims));
        }
        if (!d.is_static() && !d.symbol.empty()) {
          auto [sym, inserted] = symbols.try_emplace(d.symbol, dims[i], name);
          if (!inserted && sym->second.first != dims[i]) {
            throw InvalidArgumentError(where + ": dimension " + std::to_string(i) + " is the symbol '" + d.symbol +
                                       "', given " + std::to_string(dims[i]) + " here but " +
                                       std::to_string(sym->second.first) + " for input '" + sym->second.second + "'");
          }
        }
      }
    }
    fixes.emplace_back(v, &dims);
  }
  for (auto& [v, dims] : fixes) {
    ir::TypeInfo& t = v->mutable_type();
    t.kind = ir::TypeInfo::Kind::kTensor;
    std::vector<ir::Dim> fixed;
    for (int64_t d : *dims) fixed.push_back(ir::Dim::Static(d));
    t.shape = std::move(fixed);
  }
  // Bind the symbols elsewhere: other inputs (those given a shape are static now) and the declared outputs.
  auto bind = [&](ir::Value* v) {
    ir::TypeInfo& t = v->mutable_type();
    if (!t.is_tensor() || !t.shape) return;
    for (ir::Dim& d : *t.shape) {
      auto it = d.is_static() ? symbols.end() : symbols.find(d.symbol);
      if (it != symbols.end()) d = ir::Dim::Static(it->second.first);
    }
  };
  if (symbols.empty()) return;
  for (ir::Value* v : inputs) bind(v);
  for (ir::Value* v : graph.outputs()) bind(v);
}

}  // namespace ferry::runtime
