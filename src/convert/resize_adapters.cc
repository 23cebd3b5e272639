// Upsample and Resize across their versions.
//   Upsample-9: scales(attribute) == scales(input, constant).
//   Upsample-10 is deprecated; Resize-10 (X, scales) is the same op (asymmetric coordinates, nearest rounding
//     down when upsampling and up when downsampling), so Upsample becomes Resize going up and Resize-10 becomes
//     Upsample-9 going down (Upsample's scales are constant and >= 1).
//   Resize-11: inputs (X, roi, scales[, sizes]) and coordinate_transformation_mode / nearest_mode. Resize-10 is
//     Resize-11 with mode 'asymmetric' and, for nearest, nearest_mode 'floor' when every scale is >= 1 or 'ceil'
//     when every scale is <= 1 (needs constant scales). Going down cubic, other coordinate modes and other
//     nearest modes cannot be expressed; sizes become scales when the input's dims are static and each ratio is
//     exact in float.
//   Resize-13: roi and scales became optional (11 wants them, empty when unused); tf_half_pixel_for_nn is gone.
//   Resize-18: antialias, axes and keep_aspect_ratio_policy; going down only their defaults cross, or `axes`
//     expanded to every axis (scale 1 / the input's size on the others) when scales or sizes are constant.
//   Resize-19: coordinate_transformation_mode half_pixel_symmetric is new.
#include <algorithm>
#include <cmath>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

std::vector<float> ToFloats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

ir::Node* UpsampleUp9(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Value* scales = ctx.Build(*n->owner()).AddFloats(NodeBase(*n) + "_scales", n->GetFloats("scales"));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0), scales}, n->outputs(), AttrsWithout(*n, {"scales"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* UpsampleDown9(ConversionContext& ctx, ir::Node* n, const Step& step) {
  auto s = ConstantFloats(n->input(1));
  if (!s) Refuse("its scales are not constant, and " + step.ToName() + " takes them as an attribute");
  std::vector<ir::Attribute> attrs = n->attributes();
  attrs.push_back(FloatsAttr("scales", ToFloats(*s)));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* UpsampleToResize(ConversionContext& ctx, ir::Node* n, const Step&) {
  std::vector<ir::Attribute> attrs = {StringAttr("mode", n->GetString("mode", "nearest"))};
  return ctx.Rebuild(n, "Resize", {n->input(0), n->input(1)}, n->outputs(), attrs);
}

ir::Node* ResizeToUpsample(ConversionContext& ctx, ir::Node* n, const Step&) {
  auto s = ConstantFloats(n->input(1));
  if (!s || std::any_of(s->begin(), s->end(), [](double v) { return v < 1; })) {
    Refuse("Resize does not exist before opset 10, and Upsample takes constant scales >= 1 only");
  }
  std::vector<ir::Attribute> attrs = {StringAttr("mode", n->GetString("mode", "nearest"))};
  return ctx.Rebuild(n, "Upsample", {n->input(0), n->input(1)}, n->outputs(), attrs);
}

ir::Node* ResizeUp11(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Graph& g = *n->owner();
  std::vector<ir::Attribute> attrs = n->attributes();
  SetAttr(attrs, StringAttr("coordinate_transformation_mode", "asymmetric"));
  if (n->GetString("mode", "nearest") == "nearest") {
    auto s = ConstantFloats(n->input(1));
    if (!s)
      Refuse("nearest rounding of Resize-10 depends on whether each scale is >= 1, and the scales are not constant");
    const bool up = std::all_of(s->begin(), s->end(), [](double v) { return v >= 1; });
    const bool down = std::all_of(s->begin(), s->end(), [](double v) { return v <= 1; });
    if (!up && !down)
      Refuse(
          "Resize-10 rounds down on upsampled axes and up on downsampled ones, which one "
          "nearest_mode cannot say");
    SetAttr(attrs, StringAttr("nearest_mode", up ? "floor" : "ceil"));
  }
  ir::Value* roi = ctx.Build(g).AddFloats(NodeBase(*n) + "_roi", {});
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0), roi, n->input(1)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* ResizeDown11(ConversionContext& ctx, ir::Node* n, const Step& step) {
  const std::string mode = n->GetString("mode", "nearest");
  const std::string coord = n->GetString("coordinate_transformation_mode", "half_pixel");
  if (mode != "nearest" && mode != "linear") Refuse("mode '" + mode + "' does not exist in " + step.ToName());
  if (coord != "asymmetric") {
    Refuse("coordinate_transformation_mode '" + coord + "': " + step.ToName() + " uses asymmetric coordinates only");
  }
  ir::Value* scales_in = n->input(2);
  ir::Value* sizes_in = n->input(3);
  auto scales = ConstantFloats(scales_in);
  ir::Value* scales_out = scales_in;
  if (!scales_in || (scales && scales->empty())) {
    auto sizes = ConstantInts(sizes_in);
    auto dims = TypeStaticShape(n->input(0));
    if (!sizes || !dims || sizes->size() != dims->size()) {
      Refuse("it is given sizes, and " + step.ToName() + " takes scales: that needs constant sizes and static dims");
    }
    std::vector<double> s;
    for (size_t i = 0; i < dims->size(); ++i) {
      const float f = static_cast<float>(static_cast<double>((*sizes)[i]) / static_cast<double>((*dims)[i]));
      if (static_cast<double>(f) * static_cast<double>((*dims)[i]) != static_cast<double>((*sizes)[i])) {
        Refuse("size " + std::to_string((*sizes)[i]) + " over " + std::to_string((*dims)[i]) +
               " is not a scale exact in float");
      }
      s.push_back(f);
    }
    scales = s;
    scales_out = ctx.Build(*n->owner()).AddFloats(NodeBase(*n) + "_scales", ToFloats(s));
  }
  if (mode == "nearest") {
    if (!scales) Refuse("nearest rounding of " + step.ToName() + " depends on the scales, which are not constant");
    const std::string nearest = n->GetString("nearest_mode", "round_prefer_floor");
    const bool up = std::all_of(scales->begin(), scales->end(), [](double v) { return v >= 1; });
    const bool down = std::all_of(scales->begin(), scales->end(), [](double v) { return v <= 1; });
    const bool same = std::all_of(scales->begin(), scales->end(), [](double v) { return v == 1; });
    if (!same && !(up && nearest == "floor") && !(down && nearest == "ceil")) {
      Refuse("nearest_mode '" + nearest + "' with these scales: " + step.ToName() +
             " rounds down when upsampling and up when downsampling");
    }
  }
  std::vector<ir::Attribute> attrs = {StringAttr("mode", mode)};
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0), scales_out}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

bool IsEmptyConstant(const ir::Value* v) {
  auto t = ConstantValue(v);
  return t && t->size() == 0;
}

ir::Node* ResizeUp13(ConversionContext& ctx, ir::Node* n, const Step& step) {
  if (n->GetString("coordinate_transformation_mode", "half_pixel") == "tf_half_pixel_for_nn") {
    Refuse("coordinate_transformation_mode 'tf_half_pixel_for_nn' exists before opset 13 only");
  }
  std::vector<ir::Value*> inputs = InputsResized(*n, 4);
  // Empty roi / scales were placeholders that 13 lets one leave out.
  if (IsEmptyConstant(inputs[1])) inputs[1] = nullptr;
  if (inputs[3] && IsEmptyConstant(inputs[2])) inputs[2] = nullptr;
  ir::Node* r = ctx.Rebuild(n, n->op_type(), TrimInputs(inputs), n->outputs(), n->attributes());
  GenericStep(*r, step);
  return r;
}

ir::Node* ResizeDown13(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Value*> inputs = InputsResized(*n, 4);
  if (!inputs[1]) inputs[1] = ctx.Build(*n->owner()).AddFloats(NodeBase(*n) + "_roi", {});
  if (!inputs[2]) inputs[2] = ctx.Build(*n->owner()).AddFloats(NodeBase(*n) + "_scales", {});
  ir::Node* r = ctx.Rebuild(n, n->op_type(), TrimInputs(inputs), n->outputs(), n->attributes());
  GenericStep(*r, step);
  return r;
}

ir::Node* ResizeDown18(ConversionContext& ctx, ir::Node* n, const Step& step) {
  if (n->GetInt("antialias", 0) != 0) Refuse("antialias=1 exists from opset 18 only");
  const std::string policy = n->GetString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") Refuse("keep_aspect_ratio_policy '" + policy + "' exists from opset 18 only");
  std::vector<ir::Attribute> attrs = AttrsWithout(*n, {"antialias", "keep_aspect_ratio_policy", "axes"});
  std::vector<ir::Value*> inputs = InputsResized(*n, 4);
  if (const ir::Attribute* ax = n->attr("axes")) {
    auto rank = TypeRank(n->input(0));
    if (!rank) Refuse("axes over an input of unknown rank");
    std::vector<size_t> axes;
    for (int64_t a : ax->ints) axes.push_back(static_cast<size_t>(NormalizeAxis(a, *rank, "axis")));
    ir::Graph& g = *n->owner();
    const auto r = static_cast<size_t>(*rank);
    if (inputs[2] && !IsEmptyConstant(inputs[2])) {
      auto s = ConstantFloats(inputs[2]);
      if (!s || s->size() != axes.size())
        Refuse("with axes, the scales must be a constant to be written for every axis");
      std::vector<float> full(r, 1.0f);
      for (size_t i = 0; i < axes.size(); ++i) full[axes[i]] = static_cast<float>((*s)[i]);
      inputs[2] = ctx.Build(g).AddFloats(NodeBase(*n) + "_scales", full);
    }
    if (inputs[3]) {
      auto s = ConstantInts(inputs[3]);
      auto dims = TypeStaticShape(n->input(0));
      if (!s || s->size() != axes.size() || !dims) {
        Refuse("with axes, the sizes must be a constant and the input's dims static to be written for every axis");
      }
      std::vector<int64_t> full = *dims;
      for (size_t i = 0; i < axes.size(); ++i) full[axes[i]] = (*s)[i];
      inputs[3] = ctx.Build(g).AddInt64s(NodeBase(*n) + "_sizes", full);
    }
    if (inputs[1] && !IsEmptyConstant(inputs[1])) {
      if (n->GetString("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize") {
        inputs[1] = nullptr;  // roi only matters for tf_crop_and_resize
      } else {
        auto roi = ConstantFloats(inputs[1]);
        if (!roi || roi->size() != 2 * axes.size()) {
          Refuse("with axes, the roi must be a constant to be written for every axis");
        }
        std::vector<float> full(2 * r, 0.0f);
        for (size_t i = 0; i < r; ++i) full[r + i] = 1.0f;
        for (size_t i = 0; i < axes.size(); ++i) {
          full[axes[i]] = static_cast<float>((*roi)[i]);
          full[r + axes[i]] = static_cast<float>((*roi)[axes.size() + i]);
        }
        inputs[1] = ctx.Build(g).AddFloats(NodeBase(*n) + "_roi", full);
      }
    }
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), TrimInputs(inputs), n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* ResizeDown19(ConversionContext&, ir::Node* n, const Step& step) {
  if (n->GetString("coordinate_transformation_mode", "half_pixel") == "half_pixel_symmetric") {
    Refuse("coordinate_transformation_mode 'half_pixel_symmetric' exists from opset 19 only");
  }
  GenericStep(*n, step);
  return n;
}

}  // namespace

void RegisterResizeAdapters(AdapterRegistry& r) {
  r.Add({"Upsample", 9, "upsample-scales", UpsampleUp9, UpsampleDown9});
  r.Add({"Upsample", 10, "upsample-resize", UpsampleToResize, nullptr});
  r.Add({"Resize", 10, "upsample-resize", nullptr, ResizeToUpsample});
  r.Add({"Resize", 11, "resize-11", ResizeUp11, ResizeDown11});
  r.Add({"Resize", 13, "resize-13", ResizeUp13, ResizeDown13});
  r.Add({"Resize", 18, "resize-18", nullptr, ResizeDown18});
  r.Add({"Resize", 19, "resize-19", nullptr, ResizeDown19});
}

}  // namespace ferry::convert
