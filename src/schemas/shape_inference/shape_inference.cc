#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {

void RegisterShapeInference(SchemaRegistry& r) {
  RegisterElementwiseShapeInference(r);
  RegisterNnShapeInference(r);
  RegisterLinalgShapeInference(r);
  RegisterTensorShapeInference(r);
  RegisterShapeOpsShapeInference(r);
  RegisterReduceShapeInference(r);
  RegisterGeneratorShapeInference(r);
  RegisterControlFlowShapeInference(r);
  RegisterTransformerShapeInference(r);
  RegisterOrtMiscShapeInference(r);
  RegisterNchwcShapeInference(r);  // reuses nn.cc's Conv and pool rules: after RegisterNnShapeInference
}

}  // namespace ferry::schemas
