// Schema versions of the ai.onnx.ml and ai.onnx.preview domains newer than Debian's libonnx 1.12, as data.
// Source: ONNX docs/Changelog-ml.md (ai.onnx.ml opsets 4 and 5) and docs/Changelog.md (ai.onnx.preview opset 1).
#include "schemas/schema_opset_helpers.h"

namespace ferry::schemas {

using namespace types;  // NOLINT(build/namespaces)
using ir::AttrType;

void RegisterMlAndPreviewSchemas(SchemaRegistry& r) {
  constexpr const char* kMl = "ai.onnx.ml";
  const TypeList kLabelTypes = Types({"string", "int64", "float", "int32", "int16", "double"});
  r.Add(Derive(r, "LabelEncoder", 4, kMl)
            .AttrOptional("default_tensor", AttrType::kTensor)
            .AttrOptional("keys_tensor", AttrType::kTensor)
            .AttrOptional("values_tensor", AttrType::kTensor)
            .Constrain("T1", kLabelTypes)
            .Constrain("T2", kLabelTypes));

  r.Add(NewOp("TreeEnsemble", 5, kMl)
            .In("X", "T")
            .Out("Y", "T")
            .AttrInt("aggregate_function", 1)
            .AttrRequired("leaf_targetids", AttrType::kInts)
            .AttrRequired("leaf_weights", AttrType::kTensor)
            .AttrOptional("membership_values", AttrType::kTensor)
            .AttrOptional("n_targets", AttrType::kInt)
            .AttrRequired("nodes_falseleafs", AttrType::kInts)
            .AttrRequired("nodes_falsenodeids", AttrType::kInts)
            .AttrRequired("nodes_featureids", AttrType::kInts)
            .AttrOptional("nodes_hitrates", AttrType::kTensor)
            .AttrOptional("nodes_missing_value_tracks_true", AttrType::kInts)
            .AttrRequired("nodes_modes", AttrType::kTensor)
            .AttrRequired("nodes_splits", AttrType::kTensor)
            .AttrRequired("nodes_trueleafs", AttrType::kInts)
            .AttrRequired("nodes_truenodeids", AttrType::kInts)
            .AttrInt("post_transform", 0)
            .AttrRequired("tree_roots", AttrType::kInts)
            .Constrain("T", kFloat));

  r.Add(NewOp("FlexAttention", 1, "ai.onnx.preview")
            .In("Q", "T1")
            .In("K", "T1")
            .In("V", "T1")
            .Out("Y", "T1")
            .AttrOptional("prob_mod", AttrType::kGraph)
            .AttrOptional("scale", AttrType::kFloat)
            .AttrOptional("score_mod", AttrType::kGraph)
            .AttrOptional("softmax_precision", AttrType::kInt)
            .Constrain("T1", kFloatBf));
}

}  // namespace ferry::schemas
