// SequenceMap: runs `body` once per element of input_sequence. Additional inputs that are sequences (of the same
// length) contribute their i-th element, tensors are passed whole every time. Body output j over all iterations
// forms output sequence j.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class SequenceMap : public OpKernel {
 public:
  explicit SequenceMap(const ir::Node& node) : body_(node.GetGraph("body")) {
    if (!body_) throw InvalidModelError(node.Describe() + ": attribute 'body' is required");
    if (body_->inputs().size() != node.num_inputs()) {
      throw InvalidModelError(node.Describe() + ": body has " + std::to_string(body_->inputs().size()) +
                              " inputs, the node has " + std::to_string(node.num_inputs()));
    }
    if (body_->outputs().size() != node.num_outputs()) {
      throw InvalidModelError(node.Describe() + ": body has " + std::to_string(body_->outputs().size()) +
                              " outputs, the node has " + std::to_string(node.num_outputs()));
    }
  }

  // The inputs the node names; the outputs are sequences (what the body makes): dynamic. Whether a sequence or
  // optional input is a sequence, and the sequences' lengths, are the run's data.
  void Prepare(PrepareContext& ctx) const override {
    for (size_t i = 0; i < ctx.node().num_inputs(); ++i) {
      if (!ctx.node().input(i)) {
        throw InvalidModelError(ctx.Describe() + ": input " + std::to_string(i) + " is missing");
      }
    }
    if (ctx.input(0).is_tensor()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'input_sequence' must be a sequence, got a tensor (" +
                                 ctx.InputString(0) + ")");
    }
    for (int j = 0; j < ctx.output_count(); ++j) ctx.SetOutputDynamic(j);
  }

  void Compute(KernelContext& ctx) const override {
    const int num_in = ctx.input_count();
    std::vector<const Value*> ins(static_cast<size_t>(num_in));
    for (int i = 0; i < num_in; ++i) ins[static_cast<size_t>(i)] = ctx.input_value(i);
    if (!ins[0]->is_sequence()) {  // Prepare checked that every input is given
      throw InvalidArgumentError(ctx.Describe() + ": input 'input_sequence' must be a sequence, got " +
                                 ValueKindName(*ins[0]));
    }
    const size_t n = ins[0]->sequence().tensors.size();
    for (int i = 1; i < num_in; ++i) {
      const Value& v = *ins[static_cast<size_t>(i)];
      if (v.is_sequence() && v.sequence().tensors.size() != n) {
        throw InvalidArgumentError(ctx.Describe() + ": additional input " + std::to_string(i) + " is a sequence of " +
                                   std::to_string(v.sequence().tensors.size()) + " tensors, input_sequence has " +
                                   std::to_string(n));
      }
    }

    const size_t num_out = body_->outputs().size();
    std::vector<TensorSequence> outs(num_out);
    for (size_t j = 0; j < num_out; ++j) {
      outs[j].elem_type =
          StaticElemType(body_->outputs()[j], StaticElemType(ctx.node().output(j), DataType::kUndefined));
      outs[j].tensors.reserve(n);
    }
    for (size_t k = 0; k < n; ++k) {
      std::vector<Value> args;
      args.reserve(ins.size());
      for (const Value* v : ins) {
        if (v->is_sequence()) {
          args.emplace_back(v->sequence().tensors[k]);
        } else {
          args.push_back(*v);
        }
      }
      std::vector<Value> results = ctx.RunSubgraph(*body_, std::move(args));
      if (results.size() != num_out) {
        throw InternalError(ctx.Describe() + ": body returned " + std::to_string(results.size()) +
                            " values, expected " + std::to_string(num_out));
      }
      for (size_t j = 0; j < num_out; ++j) {
        if (!results[j].is_tensor()) {
          throw InvalidArgumentError(ctx.Describe() + ": body output " + std::to_string(j) + " must be a tensor, got " +
                                     ValueKindName(results[j]));
        }
        const Tensor& t = results[j].tensor();
        if (outs[j].elem_type == DataType::kUndefined) outs[j].elem_type = t.dtype();
        if (t.dtype() != outs[j].elem_type) {
          throw InvalidArgumentError(ctx.Describe() + ": body output " + std::to_string(j) + " has type " +
                                     std::string(DataTypeName(t.dtype())) + ", expected " +
                                     std::string(DataTypeName(outs[j].elem_type)));
        }
        outs[j].tensors.push_back(t.Clone());
      }
    }
    for (size_t j = 0; j < num_out && static_cast<int>(j) < ctx.output_count(); ++j) {
      ctx.SetOutput(static_cast<int>(j), Value(std::move(outs[j])));
    }
  }

 private:
  const ir::Graph* body_;
};

}  // namespace

void RegisterSequenceMapKernels(KernelRegistry& r) {
  r.Add({.op = "SequenceMap",
         .since = 17,
         .types = {{"S", dtypes::All()}, {"V", dtypes::All()}},
         .create = MakeKernel<SequenceMap>});
}

}  // namespace ferry::ref
