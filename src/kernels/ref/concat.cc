// Concat: joins its inputs along `axis` (all other dimensions must match). Each input is one 2-D strided copy
// [outer, dim*inner] into its column range of the output.
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::ref {

int64_t ReadConcatAxis(const ir::Node& node) {
  if (node.opset() >= 4) node.RequireAttr("axis");  // Concat-1's axis is optional (default 1)
  return node.GetInt("axis", 1);
}

namespace {

// Prepare's checks of the present inputs' types and shapes (in input order): at least one, not scalars, equal
// outside the axis; throws InvalidArgumentError otherwise. describe(k) names present input k in messages ("input 1 float32[2,3]"), what() the node. Returns the normalized axis; sets *out_shape.
template <typename What, typename DescribeInput>
int64_t CheckConcat(const std::vector<DataType>& dtypes, const std::vector<const Shape*>& shapes, int64_t axis_attr,
                    const What& what, const DescribeInput& describe, Shape* out_shape) {
  if (shapes.empty()) throw InvalidArgumentError(what() + ": needs at least one input");
  const Shape& first = *shapes[0];
  const int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) throw InvalidArgumentError(what() + ": cannot concatenate scalars");
  const int64_t axis = NormalizeAxis(axis_attr, rank, what());
  *out_shape = first;
  (*out_shape)[static_cast<size_t>(axis)] = 0;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& t = *shapes[k];
    bool ok = dtypes[k] == dtypes[0] && static_cast<int64_t>(t.size()) == rank;
    for (size_t d = 0; ok && d < first.size(); ++d) ok = static_cast<int64_t>(d) == axis || t[d] == first[d];
    if (!ok) {
      throw InvalidArgumentError(what() + ": " + describe(k) + " does not match " + describe(0) + " outside axis " +
                                 std::to_string(axis));
    }
    (*out_shape)[static_cast<size_t>(axis)] += t[static_cast<size_t>(axis)];
  }
  return axis;
}

class Concat : public OpKernel {
 public:
  explicit Concat(const ir::Node& node) : axis_(ReadConcatAxis(node)) {}

  // The inputs' agreement outside the axis; the copy's geometry: each input is one [outer, dim*inner] block.
  void Prepare(PrepareContext& ctx) const override {
    std::vector<int> present;
    std::vector<DataType> dtypes;
    std::vector<const Shape*> shapes;
    for (int i = 0; i < ctx.input_count(); ++i) {
      if (!ctx.has_input(i)) continue;
      const InputSpec& t = ctx.tensor_input(i);
      present.push_back(i);
      dtypes.push_back(t.dtype);
      shapes.push_back(&t.shape);
    }
    Shape out_shape;
    const int64_t axis = CheckConcat(
        dtypes, shapes, axis_, [&] { return ctx.Describe(); },
        [&](size_t k) { return ctx.InputString(present[k]); }, &out_shape);
    Plan p;
    for (size_t d = 0; d < out_shape.size(); ++d) {
      if (static_cast<int64_t>(d) < axis) p.outer *= out_shape[d];
      if (static_cast<int64_t>(d) > axis) p.inner *= out_shape[d];
    }
    p.axis = axis;
    ctx.SetOutput(0, dtypes[0], std::move(out_shape));
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const Plan& p = ctx.state<Plan>();
    Tensor& y = ctx.Output(0);
    const int64_t inner = p.inner;
    const int64_t out_block = y.dim(p.axis) * inner;
    int64_t offset = 0;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) continue;
      const int64_t block = t->dim(p.axis) * inner;
      const int64_t box[2] = {p.outer, block};
      const int64_t ds[2] = {out_block, 1};
      const int64_t ss[2] = {block, 1};
      CopyStrided(y.dtype(), y.raw_data(), offset, ds, t->raw_data(), 0, ss, box, ctx.threads());
      offset += block;
    }
  }

 private:
  struct Plan {
    int64_t axis = 0, outer = 1, inner = 1;
  };

  int64_t axis_ = 1;
};

}  // namespace

void RegisterConcatKernels(KernelRegistry& r) {
  r.Add({.op = "Concat", .since = 1, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Concat>});
}

}  // namespace ferry::ref
