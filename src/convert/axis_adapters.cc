// Opset 11 allowed negative axes (counted from the back) throughout, and negative indices in Gather and OneHot.
//   Equivalence: axis a < 0 of a rank-r tensor is axis a + r; the older form is the same node with the axis made
//   non-negative, which needs the rank. Negative indices cannot be rewritten statically unless they are a
//   constant, so going down Gather/OneHot indices must be constant and non-negative. Going up nothing changes.
#include <algorithm>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

int64_t RankOrRefuse(const ir::Value* v, const std::string& what) {
  auto r = TypeRank(v);
  if (!r) Refuse("a negative " + what + " needs the input's rank, which is unknown");
  return *r;
}

// Makes integer attribute `name` non-negative (rank + `extra` counts the dims it ranges over).
void FixAxisAttr(ir::Node& n, const std::string& name, int64_t extra = 0) {
  const ir::Attribute* a = n.attr(name);
  if (!a || a->type != ir::AttrType::kInt || a->i >= 0) return;
  const int64_t rank = RankOrRefuse(n.input(0), name) + extra;
  std::vector<ir::Attribute> attrs = n.attributes();
  SetAttr(attrs, IntAttr(name, NormalizeAxis(a->i, rank, name)));
  n.mutable_attributes() = attrs;
}

void FixAxesAttr(ir::Node& n, const std::string& name, int64_t extra = 0) {
  const ir::Attribute* a = n.attr(name);
  if (!a || a->type != ir::AttrType::kInts) return;
  if (std::all_of(a->ints.begin(), a->ints.end(), [](int64_t x) { return x >= 0; })) return;
  const int64_t rank = RankOrRefuse(n.input(0), name) + extra;
  std::vector<int64_t> axes = a->ints;
  for (int64_t& x : axes) x = NormalizeAxis(x, rank, name);
  std::vector<ir::Attribute> attrs = n.attributes();
  SetAttr(attrs, IntsAttr(name, axes));
  n.mutable_attributes() = attrs;
}

void RequireNonNegativeIndices(const ir::Node& n, size_t input) {
  const ir::Value* v = n.input(input);
  auto c = ConstantInts(v);
  if (!c) {
    Refuse("its indices ('" + (v ? v->name() : std::string()) +
           "') are not constant, and only opset 11 defines "
           "negative indices");
  }
  if (std::any_of(c->begin(), c->end(), [](int64_t x) { return x < 0; })) {
    Refuse("its constant indices are negative, which only opset 11 defines");
  }
}

ir::Node* AxisDown(ConversionContext&, ir::Node* n, const Step& step) {
  FixAxisAttr(*n, "axis");
  GenericStep(*n, step);
  return n;
}

ir::Node* FlattenDown(ConversionContext&, ir::Node* n, const Step& step) {
  FixAxisAttr(*n, "axis", 1);  // Flatten's axis ranges over [-r, r]
  GenericStep(*n, step);
  return n;
}

ir::Node* AxesDown(ConversionContext&, ir::Node* n, const Step& step) {
  FixAxesAttr(*n, "axes");
  GenericStep(*n, step);
  return n;
}

ir::Node* UnsqueezeDown(ConversionContext&, ir::Node* n, const Step& step) {
  // Unsqueeze's axes count dims of the output: rank(input) + len(axes).
  FixAxesAttr(*n, "axes", static_cast<int64_t>(n->GetInts("axes").size()));
  GenericStep(*n, step);
  return n;
}

ir::Node* GatherDown(ConversionContext&, ir::Node* n, const Step& step) {
  FixAxisAttr(*n, "axis");
  RequireNonNegativeIndices(*n, 1);
  GenericStep(*n, step);
  return n;
}

ir::Node* OneHotDown(ConversionContext&, ir::Node* n, const Step& step) {
  // OneHot-9 knows axis = -1 (innermost); other negative axes count dims of the output (rank + 1).
  if (n->GetInt("axis", -1) < -1) FixAxisAttr(*n, "axis", 1);
  RequireNonNegativeIndices(*n, 0);
  GenericStep(*n, step);
  return n;
}

ir::Node* ScanDown(ConversionContext&, ir::Node* n, const Step& step) {
  for (const char* name : {"scan_input_axes", "scan_output_axes"}) {
    for (int64_t a : n->GetInts(name)) {
      if (a < 0) Refuse(std::string(name) + " holds a negative axis, which only opset 11 defines");
    }
  }
  GenericStep(*n, step);
  return n;
}

ir::Node* SliceDown(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Value* axes = n->input(3);
  if (axes) {
    auto c = ConstantInts(axes);
    if (!c) Refuse("its axes ('" + axes->name() + "') are not constant, and only opset 11 defines negative axes");
    if (std::any_of(c->begin(), c->end(), [](int64_t x) { return x < 0; })) {
      const int64_t rank = RankOrRefuse(n->input(0), "axis");
      for (int64_t& x : *c) x = NormalizeAxis(x, rank, "axis");
      std::vector<ir::Value*> inputs = n->inputs();
      inputs[3] = ctx.Build(*n->owner()).AddInt64s(NodeBase(*n) + "_axes", *c);
      n = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), n->attributes());
    }
  }
  GenericStep(*n, step);
  return n;
}

}  // namespace

void RegisterAxisAdapters(AdapterRegistry& r) {
  for (const char* op : {"ArgMax", "ArgMin", "Concat", "Compress", "Split"}) {
    r.Add({op, 11, "negative-axis", nullptr, AxisDown});
  }
  r.Add({"Flatten", 11, "negative-axis", nullptr, FlattenDown});
  r.Add({"Gather", 11, "negative-axis", nullptr, GatherDown});
  r.Add({"OneHot", 11, "negative-axis", nullptr, OneHotDown});
  r.Add({"Scan", 11, "negative-axis", nullptr, ScanDown});
  r.Add({"Slice", 11, "negative-axis", nullptr, SliceDown});
  r.Add({"Squeeze", 11, "negative-axis", nullptr, AxesDown});
  r.Add({"Unsqueeze", 11, "negative-axis", nullptr, UnsqueezeDown});
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"}) {
    r.Add({op, 11, "negative-axis", nullptr, AxesDown});
  }
}

}  // namespace ferry::convert
