// com.microsoft tensor ops and the smaller ops ONNX Runtime's CPU provider registers (schemas_ort_contrib.h).
//
// GridSample(X, Grid) -> Y             the ONNX GridSample-16 computation on 4-D inputs (`mode`, `padding_mode`,
//                                      `align_corners`), from before ONNX had it.
// Inverse(X) -> Y                      the inverse of every matrix of the batch [*, M, M].
// Trilu(X, k?) -> Y                    ONNX Trilu-14 (`upper`, default 1).
// Range(start, limit, delta?) -> Y     ONNX Range with an optional delta (1).
// Unique(x) -> (y, idx, counts)        the unique values of a 1-D x in order of appearance.
// ExpandDims(X, axis) -> Y             X with a dim of 1 inserted at `axis` (an int32 input, in [-r - 1, r]).
// CDist(A, B) -> C                     pairwise distances of the rows of A [M, N] and B [K, N]: C [M, K].
// WordConvEmbedding(Sequence, W, B, C) -> Y   a char-level convolution embedding of each word.
// The rest (CropAndResize, MurmurHash3, Tokenizer, NGramRepeatBlock, BifurcationDetector, DynamicTimeWarping,
// UnfoldTensor, SampleOp, MaxpoolWithMask, ConvTransposeWithDynamicPads, NhwcMaxPool, Pad, AttnLSTM,
// MatMulInteger16, MatMulFpQ4, MatMulBnb4) as ContribOperators.md defines them.
#include "schemas/op_origin.h"
#include "schemas/schemas_ort_contrib.h"

namespace ferry::schemas {

using ir::AttrType;

void RegisterMsTensorSchemas(SchemaRegistry& r) {
  const std::string d(kMsDomain);
  auto op = [&](const char* name) { return NewOp(name, 1, d); };
  // ONNX's all_tensor_types() as ONNX Runtime uses it: IR 4's tensor types without bfloat16.
  const TypeList all = Types({"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16",
                              "float", "double", "string", "bool", "complex64", "complex128"});
  const TypeList f16_32_64 = Types({"float16", "float", "double"});

  r.Add(op("GridSample")
            .In("X", "T1")
            .In("Grid", "T1")
            .Out("Y", "T2")
            .AttrInt("align_corners", 0)
            .AttrString("mode", "bilinear")
            .AttrString("padding_mode", "zeros")
            .Constrain("T1", all)
            .Constrain("T2", f16_32_64));
  r.Add(op("Inverse").In("X", "T").Out("Y", "T").Constrain("T", f16_32_64));
  r.Add(op("Trilu")
            .In("X", "T")
            .OptIn("k", "tensor(int64)")
            .Out("Y", "T")
            .AttrInt("upper", 1)
            .Constrain("T", Types({"float16", "float", "double", "bfloat16", "uint8", "uint16", "uint32", "uint64",
                                   "int8", "int16", "int32", "int64", "bool"})));
  r.Add(op("Range")
            .In("start", "T")
            .In("limit", "T")
            .OptIn("delta", "T")
            .Out("Y", "T")
            .Constrain("T", Types({"float", "double", "int16", "int32", "int64"})));
  r.Add(op("Unique")
            .In("x", "T")
            .Out("y", "T")
            .Out("idx", "tensor(int64)")
            .Out("counts", "tensor(int64)")
            .Constrain("T", all));
  r.Add(op("ExpandDims").In("X", "T").In("axis", "tensor(int32)").Out("Y", "T").Constrain("T", all));
  r.Add(op("CDist")
            .In("A", "T")
            .In("B", "T")
            .Out("C", "T")
            .AttrString("metric", "sqeuclidean")
            .Constrain("T", Types({"float", "double"})));
  r.Add(op("WordConvEmbedding")
            .In("Sequence", "T")
            .In("W", "T1")
            .In("B", "T1")
            .In("C", "T1")
            .Out("Y", "T1")
            .AttrOptional("embedding_size", AttrType::kInt)
            .AttrOptional("conv_window_size", AttrType::kInt)
            .AttrOptional("char_embedding_size", AttrType::kInt)
            .Constrain("T", Types({"int32"}))
            .Constrain("T1", Types({"float"})));

  r.Add(op("CropAndResize")
            .In("X", "T1")
            .In("rois", "T1")
            .In("batch_indices", "T2")
            .In("crop_size", "T2")
            .Out("Y", "T1")
            .AttrString("mode", "bilinear")
            .AttrFloat("extrapolation_value", 0.0f)
            .Constrain("T1", f16_32_64)
            .Constrain("T2", Types({"int32"})));
  r.Add(op("MurmurHash3")
            .In("X", "T1")
            .Out("Y", "T2")
            .AttrOptional("positive", AttrType::kInt)
            .AttrOptional("seed", AttrType::kInt)
            .Constrain("T1", Types({"uint32", "int32", "uint64", "int64", "float", "double", "string"}))
            .Constrain("T2", Types({"uint32", "int32"})));
  r.Add(op("Tokenizer")
            .In("X", "T")
            .Out("Y", "T")
            .AttrRequired("mark", AttrType::kInt)
            .AttrRequired("mincharnum", AttrType::kInt)
            .AttrRequired("pad_value", AttrType::kString)
            .AttrOptional("separators", AttrType::kStrings)
            .AttrOptional("tokenexp", AttrType::kString)
            .Constrain("T", Types({"string"})));
  r.Add(op("NGramRepeatBlock")
            .In("input_ids", "Tid")
            .In("scores", "T")
            .Out("scores_out", "T")
            .AttrRequired("ngram_size", AttrType::kInt)
            .Constrain("Tid", Types({"int64"}))
            .Constrain("T", Types({"float"})));
  r.Add(op("BifurcationDetector")
            .In("src_tokens", "T")
            .In("cur_tokens", "T")
            .In("prev_suffix_match_idx", "T")
            .OptIn("pred_tokens", "T")
            .Out("tokens", "T")
            .Out("suffix_match_idx", "T")
            .AttrOptional("min_ngram_size", AttrType::kInt)
            .AttrOptional("max_ngram_size", AttrType::kInt)
            .Constrain("T", Types({"int64"})));
  r.Add(op("DynamicTimeWarping")
            .In("input", "F")
            .Out("output", "I")
            .Constrain("F", Types({"float"}))
            .Constrain("I", Types({"int32"})));
  r.Add(op("UnfoldTensor")
            .In("input", "T")
            .Out("output", "T")
            .AttrOptional("dim", AttrType::kInt)
            .AttrRequired("size", AttrType::kInt)
            .AttrOptional("step", AttrType::kInt)
            .Constrain("T", Concat({all, Types({"bfloat16"})})));
  r.Add(op("SampleOp")
            .In("X", "T")
            .Out("Y", "T")
            .Constrain("T", Types({"uint32", "uint64", "int32", "int64", "float16", "float", "double"})));
  r.Add(op("MaxpoolWithMask")
            .In("X", "T")
            .In("M", "tensor(int32)")
            .Out("Y", "T")
            .AttrOptional("auto_pad", AttrType::kString)
            .AttrOptional("kernel_shape", AttrType::kInts)
            .AttrOptional("pads", AttrType::kInts)
            .AttrOptional("storage_order", AttrType::kInt)
            .AttrOptional("strides", AttrType::kInts)
            .Constrain("T", Types({"float"})));
  r.Add(op("ConvTransposeWithDynamicPads")
            .In("X", "T")
            .In("W", "T")
            .OptIn("Pads", "tensor(int64)")
            .OptIn("B", "T")
            .Out("Y", "T")
            .AttrOptional("kernel_shape", AttrType::kInts)
            .AttrOptional("output_padding", AttrType::kInts)
            .AttrOptional("dilations", AttrType::kInts)
            .AttrOptional("strides", AttrType::kInts)
            .AttrString("auto_pad", "NOTSET")
            .AttrInt("group", 1)
            .Constrain("T", f16_32_64));
  r.Add(op("NhwcMaxPool")
            .In("x", "T")
            .Out("y", "T")
            .AttrOptional("auto_pad", AttrType::kString)
            .AttrOptional("ceil_mode", AttrType::kInt)
            .AttrOptional("dilations", AttrType::kInts)
            .AttrRequired("kernel_shape", AttrType::kInts)
            .AttrOptional("pads", AttrType::kInts)
            .AttrOptional("strides", AttrType::kInts)
            .Constrain("T", Types({"int8", "uint8"})));
  r.Add(op("Pad")
            .In("data", "T")
            .In("pads", "tensor(int64)")
            .OptIn("value", "T")
            .Out("output", "T")
            .AttrOptional("mode", AttrType::kString)
            .Constrain("T", f16_32_64));
  r.Add(op("AttnLSTM")
            .In("X", "T")
            .In("W", "T")
            .In("R", "T")
            .OptIn("B", "T")
            .OptIn("sequence_lens", "T1")
            .OptIn("initial_h", "T")
            .OptIn("initial_c", "T")
            .OptIn("P", "T")
            .OptIn("QW", "T")
            .OptIn("MW", "T")
            .OptIn("V", "T")
            .OptIn("M", "T")
            .OptIn("memory_seq_lens", "T1")
            .OptIn("AW", "T")
            .OptOut("Y", "T")
            .OptOut("Y_h", "T")
            .OptOut("Y_c", "T")
            .AttrOptional("activation_alpha", AttrType::kFloats)
            .AttrOptional("activation_beta", AttrType::kFloats)
            .AttrOptional("activations", AttrType::kStrings)
            .AttrOptional("clip", AttrType::kFloat)
            .AttrOptional("direction", AttrType::kString)
            .AttrOptional("hidden_size", AttrType::kInt)
            .AttrOptional("input_forget", AttrType::kInt)
            .Constrain("T", Types({"float", "double"}))
            .Constrain("T1", Types({"int32"})));
  r.Add(op("MatMulInteger16")
            .In("A", "T1")
            .In("B", "T2")
            .Out("Y", "T3")
            .Constrain("T1", Types({"int16", "uint16"}))
            .Constrain("T2", Types({"int16", "uint16"}))
            .Constrain("T3", Types({"int32", "uint32"})));
  r.Add(op("MatMulFpQ4")
            .In("A", "T1")
            .In("B", "T2")
            .In("B_shape", "T3")
            .Out("Y", "T1")
            .AttrOptional("blk_quant_type", AttrType::kInt)
            .Constrain("T1", Types({"float"}))
            .Constrain("T2", Types({"uint8"}))
            .Constrain("T3", Types({"int64"})));
  r.Add(op("MatMulBnb4")
            .In("A", "T1")
            .In("B", "T2")
            .In("absmax", "T1")
            .Out("Y", "T1")
            .AttrRequired("K", AttrType::kInt)
            .AttrRequired("N", AttrType::kInt)
            .AttrRequired("block_size", AttrType::kInt)
            .AttrRequired("quant_type", AttrType::kInt)
            .AttrOptional("training_mode", AttrType::kInt)
            .AttrOptional("transB", AttrType::kInt)
            .Constrain("T1", Types({"float", "float16", "bfloat16"}))
            .Constrain("T2", Types({"uint8"})));
}

}  // namespace ferry::schemas
