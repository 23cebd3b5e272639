// Cutting a standalone model out of a model (`ferry compare --bisect` and `--ops`): some of its main-graph nodes,
// fed with captured values.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "ir/graph.h"

namespace ferry::tools {

struct ExtractedModel {
  std::unique_ptr<ir::Model> model;
  std::vector<NamedValue> feeds;  // a value for every graph input, in graph input order
};

// A model of `nodes` (main-graph nodes of `original`, kept in its order) whose outputs are `outputs`. An input of
// a kept node that no kept node produces becomes an initializer when it is one in `original`, else a graph input
// fed with its value from `values` (its type taken from that value). Outputs and intermediate values are typed
// from `values` where present, else from `original`. Throws InvalidArgumentError when an input has no value in
// `values` (naming it) or a node holds subgraphs.
ExtractedModel ExtractSubgraph(const ir::Model& original, const std::vector<const ir::Node*>& nodes,
                               const std::vector<std::string>& outputs, const std::map<std::string, Value>& values);

// Writes `feeds` as the ONNX test layout: DIR/test_data_set_0/input_K.pb (TensorProto; tensors only), and the
// optional `outputs` as output_K.pb. Throws InvalidArgumentError when a file cannot be written.
void WriteDataSet(const std::string& dir, const std::vector<NamedValue>& feeds, const std::vector<NamedValue>& outputs);

}  // namespace ferry::tools
