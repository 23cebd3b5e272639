// ONNX Runtime's contrib registrations in the default domain at version 1, below the op's first ONNX version
// (op_origin.h, OrtDefaultDomainOps): models that ONNX Runtime's tools wrote at an older opset use them.
//
// LayerNormalization-1 (X, Scale, B?) -> (Y, Mean?, InvStdDev?)   ONNX's LayerNormalization-17 computation;
//   Scale, B and Y of type V, the statistics of type U (float or double, as `stash_type` says).
// SimplifiedLayerNormalization-1 (X, scale) -> (Y, inv_std_var?)   RMS normalization over the dims [axis, rank):
//   Y = X / sqrt(mean(X^2) + epsilon) * scale.
#include "schemas/schemas_ort_contrib.h"

namespace ferry::schemas {

namespace {

const TypeList& Floats() {
  static const TypeList t = Types({"float16", "float", "double", "bfloat16"});
  return t;
}
const TypeList& Stats() {
  static const TypeList t = Types({"float", "double"});
  return t;
}

}  // namespace

SchemaEdit SimplifiedLayerNormalizationSchema(std::string domain) {
  return std::move(NewOp("SimplifiedLayerNormalization", 1, std::move(domain))
                       .In("X", "T")
                       .In("scale", "V")
                       .Out("Y", "V")
                       .OptOut("inv_std_var", "U")
                       .AttrInt("axis", -1)
                       .AttrFloat("epsilon", 1e-5f)
                       .AttrInt("stash_type", 1)
                       .Constrain("T", Floats())
                       .Constrain("U", Stats())
                       .Constrain("V", Floats()));
}

void RegisterOrtDefaultDomainSchemas(SchemaRegistry& r) {
  r.Add(NewOp("LayerNormalization", 1)
            .In("X", "T")
            .In("Scale", "V")
            .OptIn("B", "V")
            .Out("Y", "V")
            .OptOut("Mean", "U")
            .OptOut("InvStdDev", "U")
            .AttrInt("axis", -1)
            .AttrFloat("epsilon", 1e-5f)
            .AttrInt("stash_type", 1)
            .Constrain("T", Floats())
            .Constrain("U", Stats())
            .Constrain("V", Floats()));
  r.Add(SimplifiedLayerNormalizationSchema(""));
}

}  // namespace ferry::schemas
