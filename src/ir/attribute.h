// Node attributes, mirroring ONNX AttributeProto. Graph-valued attributes own their subgraphs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/type.h"

namespace ferry::ir {

class Graph;

// Values equal ONNX's AttributeProto.AttributeType.
enum class AttrType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};

const char* AttrTypeName(AttrType t);

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  // In a function body: the name of the caller's attribute this one refers to (ONNX ref_attr_name).
  std::string ref_attr_name;
  std::string doc;

  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  TypeInfo tp;
  std::vector<TypeInfo> tps;
};

// Constructors of the common attribute kinds, for rewrites that make nodes (passes, opset adapters, legalization).
Attribute IntAttr(std::string name, int64_t v);
Attribute IntsAttr(std::string name, std::vector<int64_t> v);
Attribute FloatAttr(std::string name, float v);
Attribute FloatsAttr(std::string name, std::vector<float> v);
Attribute StringAttr(std::string name, std::string v);

}  // namespace ferry::ir
