// Registration of the static shape-inference functions (OpSchema::infer), one function per op-family file under
// src/schemas/shape_inference/. RegisterShapeInference() runs once, from the schema registry's constructor, after
// all schema tables are loaded.
#pragma once

namespace ferry::schemas {

class SchemaRegistry;

void RegisterShapeInference(SchemaRegistry& r);

// One per file.
void RegisterElementwiseShapeInference(SchemaRegistry& r);    // elementwise.cc
void RegisterNnShapeInference(SchemaRegistry& r);             // nn.cc
void RegisterLinalgShapeInference(SchemaRegistry& r);         // linalg.cc
void RegisterTensorShapeInference(SchemaRegistry& r);         // tensor.cc
void RegisterShapeOpsShapeInference(SchemaRegistry& r);       // shape_ops.cc
void RegisterReduceShapeInference(SchemaRegistry& r);         // reduce.cc
void RegisterGeneratorShapeInference(SchemaRegistry& r);      // generator.cc
void RegisterControlFlowShapeInference(SchemaRegistry& r);    // control_flow.cc
void RegisterTransformerShapeInference(SchemaRegistry& r);    // transformer.cc (ONNX Runtime's contrib ops)
void RegisterOrtMiscShapeInference(SchemaRegistry& r);        // ort_misc.cc (ONNX Runtime's contrib ops, "misc")
void RegisterNchwcShapeInference(SchemaRegistry& r);          // nchwc.cc (com.microsoft.nchwc; after nn.cc)

}  // namespace ferry::schemas
