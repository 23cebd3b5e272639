// ONNX Runtime's NCHWc domain, com.microsoft.nchwc (schemas_ort_contrib.h): what ONNX Runtime's NCHWc
// transformer writes when a model is saved after its layout optimizations. Tensors between ReorderInput and
// ReorderOutput are blocked [N, C/b, D..., b] with b MLAS's NCHWc block size (8 or 16, the machine's), C padded
// to a multiple of b. Float only.
//
// ReorderInput(X) -> Y       plain (NCHW, or NHWC when channels_last = 1) -> blocked.
// ReorderOutput(X) -> Y      blocked -> plain with `channels` channels (NHWC when channels_last = 1).
// Conv(X, W, B?, Sum?) -> Y  Conv on blocked X and Y, with a fused `activation` and a residual Sum.
// MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool   the ONNX pools on blocked tensors.
// Upsample(X) -> Y           integer `scales` per dim, `mode` nearest or linear.
#include "schemas/op_origin.h"
#include "schemas/schemas_ort_contrib.h"

namespace ferry::schemas {

using ir::AttrType;

void RegisterMsNchwcSchemas(SchemaRegistry& r) {
  const std::string d(kMsNchwcDomain);
  const TypeList fl = Types({"float"});
  auto op = [&](const char* name) { return NewOp(name, 1, d).In("X", "T").Out("Y", "T").Constrain("T", fl); };
  auto pool = [&](const char* name) {
    return std::move(op(name)
                         .AttrString("auto_pad", "NOTSET")
                         .AttrRequired("kernel_shape", AttrType::kInts)
                         .AttrOptional("dilations", AttrType::kInts)
                         .AttrOptional("strides", AttrType::kInts)
                         .AttrOptional("pads", AttrType::kInts)
                         .AttrInt("ceil_mode", 0));
  };
  r.Add(op("ReorderInput").AttrInt("channels_last", 0));
  r.Add(op("ReorderOutput").AttrInt("channels", 0).AttrInt("channels_last", 0));
  r.Add(NewOp("Conv", 1, d)
            .In("X", "T")
            .In("W", "T")
            .OptIn("B", "T")
            .OptIn("Sum", "T")
            .Out("Y", "T")
            .AttrString("auto_pad", "NOTSET")
            .AttrOptional("kernel_shape", AttrType::kInts)
            .AttrOptional("dilations", AttrType::kInts)
            .AttrOptional("strides", AttrType::kInts)
            .AttrOptional("pads", AttrType::kInts)
            .AttrInt("group", 1)
            .AttrOptional("activation", AttrType::kString)
            .AttrOptional("activation_params", AttrType::kFloats)
            .Constrain("T", fl));
  r.Add(pool("MaxPool").AttrInt("storage_order", 0));
  r.Add(pool("AveragePool").AttrInt("count_include_pad", 0));
  r.Add(op("GlobalMaxPool"));
  r.Add(op("GlobalAveragePool"));
  r.Add(op("Upsample")
            .AttrOptional("scales", AttrType::kInts)
            .AttrString("mode", "nearest")
            .AttrString("coordinate_transformation_mode", "asymmetric"));
}

}  // namespace ferry::schemas
