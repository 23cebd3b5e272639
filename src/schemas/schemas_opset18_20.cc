// Default-domain schema versions introduced in opsets 18-20 (newer than Debian's libonnx 1.12), as data.
// Source: ONNX docs/Changelog.md (Version 18/19/20 of the default ONNX operator set).
#include "schemas/schema_opset_helpers.h"

namespace ferry::schemas {

using namespace types;  // NOLINT(build/namespaces): type groups read as data here
using ir::AttrType;

void RegisterOpset18Schemas(SchemaRegistry& r) {
  const TypeList kBitwise = Concat({kIntUnsigned, kIntSigned});
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    r.Add(NewOp(op, 18).In("A", "T").In("B", "T").Out("C", "T").Constrain("T", kBitwise));
  }
  r.Add(NewOp("BitwiseNot", 18).In("X", "T").Out("Y", "T").Constrain("T", kBitwise));

  r.Add(NewOp("CenterCropPad", 18)
            .In("input_data", "T")
            .In("shape", "Tind")
            .Out("output_data", "T")
            .AttrOptional("axes", AttrType::kInts)
            .Constrain("T", kAllIr4)
            .Constrain("Tind", Types({"int32", "int64"})));
  r.Add(NewOp("Col2Im", 18)
            .In("input", "T")
            .In("image_shape", "tensor(int64)")
            .In("block_shape", "tensor(int64)")
            .Out("output", "T")
            .AttrOptional("dilations", AttrType::kInts)
            .AttrOptional("pads", AttrType::kInts)
            .AttrOptional("strides", AttrType::kInts)
            .Constrain("T", kAllIr4));
  r.Add(NewOp("GroupNormalization", 18)
            .In("X", "T")
            .In("scale", "T")
            .In("bias", "T")
            .Out("Y", "T")
            .AttrFloat("epsilon", 1e-5f)
            .AttrRequired("num_groups", AttrType::kInt)
            .Constrain("T", kFloatBf));
  r.Add(Derive(r, "LpPool", 18).AttrInt("ceil_mode", 0).AttrOptional("dilations", AttrType::kInts));
  r.Add(NewOp("Mish", 18).In("X", "T").Out("Y", "T").Constrain("T", kFloat));

  // Optional ops accept plain tensors and sequences too from opset 18.
  const TypeList kTensorsIr4 = Concat({kAllIr4});
  const TypeList kSeqIr4 = Wrap("seq", kTensorsIr4);
  const TypeList kOptionalIr4 = Concat({Wrap("optional", kSeqIr4), Wrap("optional", kTensorsIr4)});
  r.Add(Derive(r, "OptionalGetElement", 18)
            .Constrain("O", Concat({kOptionalIr4, kSeqIr4, kTensorsIr4}))
            .Constrain("V", Concat({kSeqIr4, kTensorsIr4})));
  r.Add(Derive(r, "OptionalHasElement", 18)
            .SetIn(0, FormalParam{"input", "O", ParamOption::kOptional})
            .Constrain("O", Concat({kOptionalIr4, kSeqIr4, kTensorsIr4})));

  r.Add(Derive(r, "Pad", 18)
            .SetIn(3, FormalParam{"axes", "Tind", ParamOption::kOptional})
            .Constrain("Tind", Types({"int32", "int64"})));

  // Reduce*: `axes` moves from an attribute to an optional input (ReduceSum did so in opset 13).
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    r.Add(Derive(r, op, 18)
              .RemoveAttr("axes")
              .AttrInt("noop_with_empty_axes", 0)
              .SetIn(1, FormalParam{"axes", "tensor(int64)", ParamOption::kOptional}));
  }

  r.Add(Derive(r, "Resize", 18)
            .AttrInt("antialias", 0)
            .AttrOptional("axes", AttrType::kInts)
            .AttrString("keep_aspect_ratio_policy", "stretch"));
  r.Add(Derive(r, "ScatterElements", 18));  // reduction gains max/min
  r.Add(Derive(r, "ScatterND", 18));        // reduction gains max/min
  r.Add(Derive(r, "Split", 18).AttrOptional("num_outputs", AttrType::kInt));
}

void RegisterOpset19Schemas(SchemaRegistry& r) {
  r.Add(Derive(r, "AveragePool", 19).AttrOptional("dilations", AttrType::kInts));

  const TypeList kCastTypes = Concat({kNumeric, Types({"bool", "string"}), kFloat8});
  r.Add(Derive(r, "Cast", 19).AttrInt("saturate", 1).Constrain("T1", kCastTypes).Constrain("T2", kCastTypes));
  r.Add(Derive(r, "CastLike", 19).AttrInt("saturate", 1).Constrain("T1", kCastTypes).Constrain("T2", kCastTypes));
  r.Add(Derive(r, "Constant", 19).Constrain("T", kAllIr9));

  r.Add(NewOp("DeformConv", 19)
            .In("X", "T")
            .In("W", "T")
            .In("offset", "T")
            .OptIn("B", "T")
            .OptIn("mask", "T")
            .Out("Y", "T")
            .AttrOptional("dilations", AttrType::kInts)
            .AttrInt("group", 1)
            .AttrOptional("kernel_shape", AttrType::kInts)
            .AttrInt("offset_group", 1)
            .AttrOptional("pads", AttrType::kInts)
            .AttrOptional("strides", AttrType::kInts)
            .Constrain("T", kFloat));

  r.Add(NewOp("DequantizeLinear", 19)
            .In("x", "T1")
            .In("x_scale", "T2")
            .OptIn("x_zero_point", "T1")
            .Out("y", "T2")
            .AttrInt("axis", 1)
            .Constrain("T1", Concat({Types({"int8", "uint8", "int32"}), kFloat8}))
            .Constrain("T2", Types({"float", "float16", "bfloat16"})));
  r.Add(Derive(r, "Equal", 19).AddTypes("T", Types({"string"})));
  for (const char* op : {"Identity", "If", "Loop"}) {
    r.Add(ExpandAllTypes(Derive(r, op, 19), kFloat8));
  }
  r.Add(Derive(r, "Pad", 19));  // mode gains "wrap"
  r.Add(NewOp("QuantizeLinear", 19)
            .In("x", "T1")
            .In("y_scale", "T1")
            .OptIn("y_zero_point", "T2")
            .Out("y", "T2")
            .AttrInt("axis", 1)
            .AttrInt("saturate", 1)
            .Constrain("T1", Types({"float", "float16", "bfloat16", "int32"}))
            .Constrain("T2", Concat({Types({"int8", "uint8"}), kFloat8})));
  r.Add(ExpandAllTypes(Derive(r, "Reshape", 19), kFloat8));
  r.Add(Derive(r, "Resize", 19));  // coordinate_transformation_mode gains "half_pixel_symmetric"
  for (const char* op : {"Scan", "Shape", "Size"}) r.Add(ExpandAllTypes(Derive(r, op, 19), kFloat8));
}

void RegisterOpset20Schemas(SchemaRegistry& r) {
  r.Add(NewOp("AffineGrid", 20)
            .In("theta", "T1")
            .In("size", "T2")
            .Out("grid", "T1")
            .AttrInt("align_corners", 0)
            .Constrain("T1", kFloatBf)
            .Constrain("T2", Types({"int64"})));
  r.Add(Derive(r, "ConstantOfShape", 20)
            .Constrain("T2", Concat({kFloatBf, kIntSigned, kIntUnsigned, Types({"bool"}), kFloat8})));
  r.Add(NewOp("DFT", 20)
            .In("input", "T1")
            .OptIn("dft_length", "T2")
            .OptIn("axis", "tensor(int64)")
            .Out("output", "T1")
            .AttrInt("inverse", 0)
            .AttrInt("onesided", 0)
            .Constrain("T1", kFloatBf)
            .Constrain("T2", Types({"int32", "int64"})));
  r.Add(NewOp("Gelu", 20).In("X", "T").Out("Y", "T").AttrString("approximate", "none").Constrain("T", kFloatBf));
  r.Add(Derive(r, "GridSample", 20)
            .AttrString("mode", "linear")
            .Constrain("T1", kAllIr4)
            .Constrain("T2", kFloatBf));
  r.Add(NewOp("ImageDecoder", 20)
            .In("encoded_stream", "T1")
            .Out("image", "T2")
            .AttrString("pixel_format", "RGB")
            .Constrain("T1", Types({"uint8"}))
            .Constrain("T2", Types({"uint8"})));
  const TypeList kFloatIr9 = Concat({kFloatBf, kFloat8});
  r.Add(Derive(r, "IsInf", 20).Constrain("T1", kFloatIr9));
  r.Add(Derive(r, "IsNaN", 20).Constrain("T1", kFloatIr9));
  r.Add(Derive(r, "ReduceMax", 20).AddTypes("T", Types({"bool"})));
  r.Add(Derive(r, "ReduceMin", 20).AddTypes("T", Types({"bool"})));
  r.Add(NewOp("RegexFullMatch", 20)
            .In("X", "T1")
            .Out("Y", "T2")
            .AttrOptional("pattern", AttrType::kString)
            .Constrain("T1", Types({"string"}))
            .Constrain("T2", Types({"bool"})));
  r.Add(NewOp("StringConcat", 20).In("X", "T").In("Y", "T").Out("Z", "T").Constrain("T", Types({"string"})));
  r.Add(NewOp("StringSplit", 20)
            .In("X", "T1")
            .Out("Y", "T2")
            .Out("Z", "T3")
            .AttrOptional("delimiter", AttrType::kString)
            .AttrOptional("maxsplit", AttrType::kInt)
            .Constrain("T1", Types({"string"}))
            .Constrain("T2", Types({"string"}))
            .Constrain("T3", Types({"int64"})));
}

}  // namespace ferry::schemas
