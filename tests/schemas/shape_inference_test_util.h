// Helpers for the shape-inference tests (shape_inference_test.cc, ort_contrib_shape_inference_test.cc): inputs with
// symbolic dims, an INTS attribute, importing and inferring a built model, and a value's inferred type as text.
#pragma once

#include <onnx/onnx_pb.h>

#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "testing/model_builder.h"

namespace ferry::shape_inference_test {

inline void Ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// An input whose dims are given as strings: a number, a symbol, or "?" (unknown).
inline void InputDims(testing::ModelBuilder& b, const std::string& name, int32_t elem, std::vector<std::string> dims) {
  auto* vi = b.graph().add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dp = shape->add_dim();
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) != 0)) dp->set_dim_value(std::stoll(d));
    else if (d != "?") dp->set_dim_param(d);
  }
}

// The built model imported (as `name`) and run through runtime::InferTypes.
inline std::unique_ptr<ir::Model> Infer(testing::ModelBuilder& b, const std::string& name = "test.onnx") {
  const std::string bytes = b.Bytes();
  auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", name);
  runtime::InferTypes(*model);
  return model;
}

inline std::string TypeOf(const ir::Model& m, const std::string& value) {
  const ir::Value* v = m.graph->FindValue(value);
  return v ? v->type().ToString() : "<no value " + value + ">";
}

}  // namespace ferry::shape_inference_test
