// Constant: outputs the tensor held by exactly one of its value attributes (value, sparse_value densified by the
// importer, value_float(s), value_int(s), value_string(s)).
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Constant : public OpKernel {
 public:
  explicit Constant(const ir::Node& node) {
    int found = 0;
    for (const char* name : {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
                             "value_string", "value_strings"}) {
      if (node.has_attr(name)) ++found;
    }
    if (found != 1) {
      throw InvalidModelError(node.Describe() + ": exactly one of the attributes value, sparse_value, value_float(s), " +
                              "value_int(s), value_string(s) must be set, got " + std::to_string(found));
    }
    if (const Tensor* t = node.GetTensor("value")) {
      value_ = *t;
    } else if (const Tensor* s = node.GetTensor("sparse_value")) {
      value_ = *s;
    } else if (node.has_attr("value_float")) {
      value_ = Tensor::FromVector<float>(DataType::kFloat, {}, {node.GetFloat("value_float", 0)});
    } else if (node.has_attr("value_floats")) {
      auto v = node.GetFloats("value_floats");
      value_ = Tensor::FromVector<float>(DataType::kFloat, {static_cast<int64_t>(v.size())}, v);
    } else if (node.has_attr("value_int")) {
      value_ = Tensor::FromVector<int64_t>(DataType::kInt64, {}, {node.GetInt("value_int", 0)});
    } else if (node.has_attr("value_ints")) {
      auto v = node.GetInts("value_ints");
      value_ = Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
    } else if (node.has_attr("value_string")) {
      value_ = Tensor::FromVector<std::string>(DataType::kString, {}, {node.GetString("value_string", "")});
    } else {
      auto v = node.GetStrings("value_strings");
      value_ = Tensor::FromVector<std::string>(DataType::kString, {static_cast<int64_t>(v.size())}, v);
    }
    if (!value_.defined()) throw InvalidModelError(node.Describe() + ": the value attribute holds no tensor");
  }

  // Its value is known (and no arena buffer is planned for it: Compute returns the attribute's).
  void Prepare(PrepareContext& ctx) const override { ctx.SetOutputValue(0, value_); }

  // The output shares the attribute's buffer; consumers never write their inputs.
  void Compute(KernelContext& ctx) const override { ctx.SetOutput(0, Value(value_)); }

 private:
  Tensor value_;
};

}  // namespace

void RegisterConstantKernels(KernelRegistry& r) {
  r.Add({.op = "Constant", .since = 1, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Constant>});
}

}  // namespace ferry::ref
