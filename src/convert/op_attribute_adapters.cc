// Ops whose attributes, outputs or name changed meaning at one boundary.
//   MaxPool-8: the Indices output is new; a node whose Indices are used cannot go below 8.
//   ConvTranspose-11: how SAME_UPPER/SAME_LOWER split the padding was swapped in 11, so nodes with those
//     auto_pad values do not cross either way.
//   Scatter-11 is deprecated in favour of ScatterElements-11, the same op: renamed going up, and back going down
//     (ScatterElements' negative axis and indices are new in 11: the axis is made non-negative, indices must be
//     constant and non-negative).
//   RoiAlign-16: coordinate_transformation_mode (default half_pixel) is new; 10 behaves as output_half_pixel.
//   GridSample-20: modes renamed (bilinear -> linear, bicubic -> cubic) and N-D inputs allowed; 16 is 4-D only.
//   DFT-20: axis moved from an attribute (default 1) to an input (default -2): axis(attribute) == axis(input,
//     constant); going down the input must be constant.
//   QuantizeLinear/DequantizeLinear-13: axis (per-axis scales) is new; 10 only knows one scale for the tensor.
//   Scan-9: the batch axis and sequence_lens of Scan-8 are gone; no simple rewrite either way.
#include <algorithm>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* MaxPoolDown8(ConversionContext& ctx, ir::Node* n, const Step& step) {
  if (ir::Value* idx = n->output(1)) {
    if (IsUsed(idx)) Refuse("its Indices output is used, and " + step.ToName() + " has none");
    n = ctx.Rebuild(n, n->op_type(), n->inputs(), {n->output(0)}, n->attributes());
    idx->owner()->RemoveValue(idx);
  }
  GenericStep(*n, step);
  return n;
}

ir::Node* ConvTranspose11(ConversionContext&, ir::Node* n, const Step& step) {
  const std::string pad = n->GetString("auto_pad", "NOTSET");
  if (pad == "SAME_UPPER" || pad == "SAME_LOWER") {
    Refuse("auto_pad " + pad + " splits the padding the other way round before opset 11");
  }
  GenericStep(*n, step);
  return n;
}

ir::Node* ScatterUp11(ConversionContext& ctx, ir::Node* n, const Step&) {
  return ctx.Rebuild(n, "ScatterElements", n->inputs(), n->outputs(), n->attributes());
}

ir::Node* ScatterElementsDown11(ConversionContext& ctx, ir::Node* n, const Step&) {
  std::vector<ir::Attribute> attrs = n->attributes();
  const int64_t axis = n->GetInt("axis", 0);
  if (axis < 0) {
    auto rank = TypeRank(n->input(0));
    if (!rank) Refuse("a negative axis needs the data's rank, which is unknown");
    SetAttr(attrs, IntAttr("axis", NormalizeAxis(axis, *rank, "axis")));
  }
  auto idx = ConstantInts(n->input(1));
  if (!idx || std::any_of(idx->begin(), idx->end(), [](int64_t i) { return i < 0; })) {
    Refuse(
        "ScatterElements does not exist before opset 11, and Scatter takes non-negative indices: they must be a "
        "constant");
  }
  return ctx.Rebuild(n, "Scatter", n->inputs(), n->outputs(), attrs);
}

ir::Node* RoiAlignUp16(ConversionContext&, ir::Node* n, const Step& step) {
  std::vector<ir::Attribute> attrs = n->attributes();
  SetAttr(attrs, StringAttr("coordinate_transformation_mode", "output_half_pixel"));
  n->mutable_attributes() = attrs;
  GenericStep(*n, step);
  return n;
}

ir::Node* RoiAlignDown16(ConversionContext&, ir::Node* n, const Step& step) {
  const std::string mode = n->GetString("coordinate_transformation_mode", "half_pixel");
  if (mode != "output_half_pixel") {
    Refuse("coordinate_transformation_mode '" + mode + "': " + step.ToName() + " uses output_half_pixel only");
  }
  n->mutable_attributes() = AttrsWithout(*n, {"coordinate_transformation_mode"});
  GenericStep(*n, step);
  return n;
}

ir::Node* GridSample20(ConversionContext&, ir::Node* n, const Step& step) {
  const std::string mode = n->GetString("mode", step.up ? "bilinear" : "linear");
  std::string renamed = mode;
  if (step.up) {
    if (mode == "bilinear") renamed = "linear";
    if (mode == "bicubic") renamed = "cubic";
  } else {
    if (mode == "linear") renamed = "bilinear";
    if (mode == "cubic") renamed = "bicubic";
    auto rank = TypeRank(n->input(0));
    if (!rank || *rank != 4)
      Refuse(step.ToName() + " samples 4-D inputs only, and this input's rank is " +
             (rank ? std::to_string(*rank) : std::string("unknown")));
  }
  std::vector<ir::Attribute> attrs = n->attributes();
  SetAttr(attrs, StringAttr("mode", renamed));
  n->mutable_attributes() = attrs;
  GenericStep(*n, step);
  return n;
}

ir::Node* DftUp20(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Value*> inputs = InputsResized(*n, 3);
  inputs[2] = ctx.Build(*n->owner()).AddInt64s(NodeBase(*n) + "_axis", {n->GetInt("axis", 1)}, true);
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), AttrsWithout(*n, {"axis"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* DftDown20(ConversionContext& ctx, ir::Node* n, const Step& step) {
  int64_t axis = -2;  // DFT-20's default
  if (ir::Value* a = n->input(2)) {
    auto c = ConstantInts(a);
    if (!c || c->size() != 1)
      Refuse("its axis ('" + a->name() + "') is not constant, and " + step.ToName() + " takes it as an attribute");
    axis = (*c)[0];
  }
  std::vector<ir::Attribute> attrs = n->attributes();
  SetAttr(attrs, IntAttr("axis", axis));
  std::vector<ir::Value*> inputs = InputsResized(*n, 2);
  ir::Node* r = ctx.Rebuild(n, n->op_type(), TrimInputs(inputs), n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* QuantDown13(ConversionContext&, ir::Node* n, const Step& step) {
  const ir::Value* scale = n->input(1);
  auto c = ConstantValue(scale);
  const bool per_tensor = c ? c->size() == 1 : (TypeRank(scale) && *TypeRank(scale) == 0);
  if (!per_tensor) Refuse("its scale may be per-axis, and " + step.ToName() + " takes one scale for the tensor");
  n->mutable_attributes() = AttrsWithout(*n, {"axis"});
  GenericStep(*n, step);
  return n;
}

ir::Node* ScanRefuse(ConversionContext&, ir::Node*, const Step&) {
  Refuse("Scan-8 (batch axis, sequence_lens) and Scan-9 differ in layout; no rewrite is implemented");
}

}  // namespace

void RegisterOpAttributeAdapters(AdapterRegistry& r) {
  r.Add({"MaxPool", 8, "maxpool-indices", nullptr, MaxPoolDown8});
  r.Add({"ConvTranspose", 11, "convtranspose-auto-pad", ConvTranspose11, ConvTranspose11});
  r.Add({"Scatter", 11, "scatter-elements", ScatterUp11, nullptr});
  r.Add({"ScatterElements", 11, "scatter-elements", nullptr, ScatterElementsDown11});
  r.Add({"RoiAlign", 16, "roialign-coordinates", RoiAlignUp16, RoiAlignDown16});
  r.Add({"GridSample", 20, "gridsample-mode", GridSample20, GridSample20});
  r.Add({"DFT", 20, "dft-axis", DftUp20, DftDown20});
  r.Add({"QuantizeLinear", 13, "quantize-axis", nullptr, QuantDown13});
  r.Add({"DequantizeLinear", 13, "quantize-axis", nullptr, QuantDown13});
  r.Add({"Scan", 9, "scan-8", ScanRefuse, ScanRefuse});
}

}  // namespace ferry::convert
