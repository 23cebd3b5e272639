// Loop: runs `body` while (i < M) && cond. Inputs: M (optional trip count), cond (optional), N loop-carried
// values (tensors, sequences or optionals). Body: (iteration_num, cond, carried...) -> (cond, carried..., K scan
// elements). Outputs: the N final carried values, then K scan outputs stacking each iteration's element along a
// new axis 0. Prepare checks M and cond; every output is dynamic (what the body makes).
#include <limits>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Loop : public OpKernel {
 public:
  explicit Loop(const ir::Node& node) : body_(node.GetGraph("body")) {
    if (!body_) throw InvalidModelError(node.Describe() + ": attribute 'body' is required");
    num_carried_ = node.num_inputs() > 2 ? node.num_inputs() - 2 : 0;
    if (body_->inputs().size() != num_carried_ + 2) {
      throw InvalidModelError(node.Describe() + ": body has " + std::to_string(body_->inputs().size()) +
                              " inputs, expected 2 + " + std::to_string(num_carried_) + " loop-carried values");
    }
    if (body_->outputs().size() < num_carried_ + 1) {
      throw InvalidModelError(node.Describe() + ": body has " + std::to_string(body_->outputs().size()) +
                              " outputs, expected at least 1 + " + std::to_string(num_carried_));
    }
    num_scan_ = body_->outputs().size() - 1 - num_carried_;
    if (node.num_outputs() > num_carried_ + num_scan_) {
      throw InvalidModelError(node.Describe() + ": node has " + std::to_string(node.num_outputs()) +
                              " outputs, the body produces only " + std::to_string(num_carried_) +
                              " loop-carried values and " + std::to_string(num_scan_) + " scan outputs");
    }
  }

  // Checks M and cond; the outputs are what the body makes (dynamic).
  void Prepare(PrepareContext& ctx) const override {
    if (ctx.has_input(0)) {
      const InputSpec& m = ctx.tensor_input(0);
      if (m.dtype != DataType::kInt64 || ShapeElementCount(m.shape) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'M' must be an int64 tensor with one element, got " +
                                   std::string(DataTypeName(m.dtype)) + ShapeToString(m.shape));
      }
    }
    if (ctx.has_input(1)) {
      const InputSpec& c = ctx.tensor_input(1);
      if (c.dtype != DataType::kBool || ShapeElementCount(c.shape) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'cond' must be a bool tensor with one element, got " +
                                   std::string(DataTypeName(c.dtype)) + ShapeToString(c.shape));
      }
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutputDynamic(i);
  }

  void Compute(KernelContext& ctx) const override {
    int64_t max_trips = std::numeric_limits<int64_t>::max();
    if (const Tensor* m = ctx.input(0)) max_trips = m->data<int64_t>()[0];
    const Tensor* cond_in = ctx.input(1);
    bool cond = true;
    if (cond_in) cond = cond_in->data<bool>()[0];

    std::vector<Value> carried(num_carried_);
    for (size_t i = 0; i < num_carried_; ++i) {
      if (const Value* v = ctx.input_value(static_cast<int>(i + 2))) carried[i] = *v;
    }
    std::vector<std::vector<Tensor>> scans(num_scan_);

    int64_t iter = 0;
    for (; iter < max_trips && cond; ++iter) {
      std::vector<Value> args;
      args.reserve(num_carried_ + 2);
      args.emplace_back(Tensor::FromVector<int64_t>(DataType::kInt64, {}, {iter}));
      Tensor c(DataType::kBool, {});
      c.data<bool>()[0] = cond;
      args.emplace_back(std::move(c));
      for (auto& v : carried) args.push_back(std::move(v));

      std::vector<Value> results = ctx.RunSubgraph(*body_, std::move(args));
      if (results.size() != 1 + num_carried_ + num_scan_) {
        throw InternalError(ctx.Describe() + ": body returned " + std::to_string(results.size()) +
                            " values, expected " + std::to_string(1 + num_carried_ + num_scan_));
      }
      // Without a cond input the body's cond output is ignored (ONNX: a plain for loop).
      if (cond_in) {
        if (!results[0].is_tensor()) {
          throw InvalidArgumentError(ctx.Describe() + ": body output 'cond' must be a bool tensor, got " +
                                     ValueKindName(results[0]));
        }
        cond = ReadCond(ctx, results[0].tensor(), "body output 'cond'");
      }
      for (size_t i = 0; i < num_carried_; ++i) carried[i] = std::move(results[1 + i]);
      for (size_t k = 0; k < num_scan_; ++k) {
        Value& v = results[1 + num_carried_ + k];
        if (!v.is_tensor()) {
          throw UnsupportedError(ctx.Describe() + ": scan output " + std::to_string(k) + " of the body is " +
                                 ValueKindName(v) + "; only tensors can be accumulated");
        }
        if (!scans[k].empty() &&
            (v.tensor().shape() != scans[k][0].shape() || v.tensor().dtype() != scans[k][0].dtype())) {
          throw InvalidArgumentError(ctx.Describe() + ": scan output " + std::to_string(k) + " changed from " +
                                     std::string(DataTypeName(scans[k][0].dtype())) +
                                     ShapeToString(scans[k][0].shape()) + " to " +
                                     std::string(DataTypeName(v.tensor().dtype())) + ShapeToString(v.tensor().shape()) +
                                     " in iteration " + std::to_string(iter));
        }
        scans[k].push_back(std::move(v.tensor()));
      }
    }

    for (size_t i = 0; i < num_carried_ && static_cast<int>(i) < ctx.output_count(); ++i) {
      // After zero iterations the outputs are the inputs: copy them rather than alias another node's buffers.
      ctx.SetOutput(static_cast<int>(i), iter == 0 ? CloneValue(carried[i]) : std::move(carried[i]));
    }
    for (size_t k = 0; k < num_scan_; ++k) {
      const int out = static_cast<int>(num_carried_ + k);
      if (out >= ctx.output_count()) break;
      if (scans[k].empty()) {
        const ir::Value* elem = body_->outputs()[1 + num_carried_ + k];
        DataType dt =
            StaticElemType(elem, StaticElemType(ctx.node().output(static_cast<size_t>(out)), DataType::kFloat));
        Shape shape = StaticShapeOrZeros(elem);
        shape.insert(shape.begin(), 0);
        ctx.Output(out, dt, shape);
      } else {
        ctx.SetOutput(out, StackAlongNewAxis(scans[k], 0, ctx.Describe() + ": scan output " + std::to_string(k)));
      }
    }
  }

 private:
  // The body's cond output (data: checked as each iteration returns it).
  static bool ReadCond(const KernelContext& ctx, const Tensor& t, const char* what) {
    if (t.dtype() != DataType::kBool || t.size() != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": " + what + " must be a bool tensor with one element, got " +
                                 std::string(DataTypeName(t.dtype())) + ShapeToString(t.shape()));
    }
    return t.data<bool>()[0];
  }

  const ir::Graph* body_;
  size_t num_carried_ = 0;
  size_t num_scan_ = 0;
};

}  // namespace

void RegisterLoopKernels(KernelRegistry& r) {
  // Versions 1, 11, 13, 16, 19, 21, 23, 24, ...: 11 made M/cond semantics precise, 13+ allow sequences and 16+
  // optionals as loop-carried values; one implementation serves them all.
  r.Add({.op = "Loop",
         .since = 1,
         .types = {{"I", {DataType::kInt64}}, {"B", {DataType::kBool}}, {"V", dtypes::All()}},
         .create = MakeKernel<Loop>});
}

}  // namespace ferry::ref
