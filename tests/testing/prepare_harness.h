// Helpers of the kernel lifecycle tests (tests/kernels/{cpu,ref}_prepare_*_test.cc): the backends' registries,
// one node in its own graph whose kernel a test creates, prepares (PrepareContext, the model described as
// 'm.onnx') and runs (KernelContext with the prepared state) as the executor does, and checks of what Prepare
// declared or threw.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/evaluate_node.h"
#include "kernels/kernel.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/registry.h"

namespace ferry::testing {

inline const KernelRegistry& RefRegistry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry("ref");
    ref::RegisterRefKernels(*reg);
    return reg;
  }();
  return *r;
}

inline const KernelRegistry& CpuRegistry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry("cpu");
    cpu::RegisterCpuKernels(*reg);
    return reg;
  }();
  return *r;
}

// The cpu kernel definition named `name` (predicates not asked: the tests call its factory directly).
inline const KernelDef& CpuDef(const std::string& name) {
  const auto& defs = CpuRegistry().defs();
  const auto it = std::find_if(defs.begin(), defs.end(), [&](const KernelDef& d) { return d.name == name; });
  if (it == defs.end()) throw std::runtime_error("no cpu kernel " + name);
  return *it;
}

// The message `body` throws as `E`, or "" (a test failure) when it throws nothing or something else.
template <typename E, typename Fn>
std::string ErrorOf(Fn&& body) {
  try {
    body();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "threw nothing";
  return "";
}

inline bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// `what` is an error message holding every one of `parts`.
inline void ExpectNames(const std::string& what, const std::vector<std::string>& parts) {
  EXPECT_FALSE(what.empty()) << "expected an error";
  for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' in: " << what;
}

// Prepare declared output i a tensor of this dtype and shape.
inline void ExpectOutput(const PreparedKernel& p, int i, DataType dtype, const Shape& shape) {
  ASSERT_LT(static_cast<size_t>(i), p.outputs.size());
  const OutputSpec& o = p.outputs[static_cast<size_t>(i)];
  EXPECT_TRUE(o.is_tensor()) << "output " << i;
  EXPECT_EQ(o.dtype, dtype) << "output " << i;
  EXPECT_EQ(o.shape, shape) << "output " << i;
}

// One input of a RefNode as a test gives it: a tensor (its data known before the run when `constant`), or absent.
struct RefIn {
  const Tensor* t = nullptr;
  bool constant = false;
};

// One node in its own graph with its ref kernel (the registry's choice for the inputs' dtypes); the inputs are
// given again to each Prepare and Run.
struct RefNode {
  ir::Graph g;
  ir::Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;

  RefNode(const std::string& op, int64_t opset, const std::vector<RefIn>& inputs, int outputs,
          std::vector<ir::Attribute> attrs = {}) {
    std::vector<ir::Value*> ins, outs;
    std::vector<DataType> types;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ins.push_back(inputs[i].t ? g.AddValue("in" + std::to_string(i)) : nullptr);
      types.push_back(inputs[i].t ? inputs[i].t->dtype() : DataType::kUndefined);
    }
    for (int i = 0; i < outputs; ++i) outs.push_back(g.AddValue("out" + std::to_string(i)));
    node = g.AddNode(op + "_node", op, "", ins, outs, std::move(attrs));
    node->set_opset(opset);
    const SupportResult s = RefRegistry().Query(*node, types);
    if (!s.supported()) throw UnsupportedError("ref cannot run " + op + ": " + s.reason);
    kernel = s.kernel->create(*node, KernelOptions{.threads = 1});
  }

  PreparedKernel Prepare(const std::vector<RefIn>& inputs) const {
    std::vector<InputSpec> specs;
    for (const RefIn& in : inputs) {
      InputSpec s;
      if (in.t) {
        s.kind = InputSpec::Kind::kTensor;
        s.dtype = in.t->dtype();
        s.shape = in.t->shape();
        s.data = in.constant ? in.t : nullptr;
      }
      specs.push_back(s);
    }
    PrepareContext ctx(*node, specs, KernelOptions{.threads = 1}, "model 'm.onnx'");
    kernel->Prepare(ctx);
    return ctx.Finish();
  }

  std::vector<Value> Run(const PreparedKernel& prepared, const std::vector<RefIn>& inputs) const {
    std::vector<Value> values;
    values.reserve(inputs.size());
    for (const RefIn& in : inputs) values.push_back(in.t ? Value(*in.t) : Value());
    std::vector<const Value*> ptrs;
    for (size_t i = 0; i < inputs.size(); ++i) ptrs.push_back(inputs[i].t ? &values[i] : nullptr);
    std::vector<Value> outputs(node->num_outputs());
    KernelContext ctx(*node, ptrs, outputs, 1, nullptr);
    ctx.set_prepared(&prepared);
    kernel->Compute(ctx);
    return outputs;
  }
};

// One node 'n' with one output 'out' whose inputs are graph inputs (fed: their data unknown to Prepare) or initializers
// (`constant`: Prepare sees their data); an input with an empty name is omitted. Tests name the cpu kernel to
// create (CpuDef).
struct CpuNode {
  struct In {
    std::string name;
    Tensor value;
    bool constant = false;
  };
  ir::Graph g;
  ir::Node* node = nullptr;
  std::vector<In> inputs;

  // An ai.onnx node (opset `opset`).
  CpuNode(const std::string& op, int64_t opset, std::vector<In> ins, std::vector<ir::Attribute> attrs = {})
      : CpuNode(op, "", opset, std::move(ins), std::move(attrs)) {}
  // A node of `domain`: ai.onnx opset 17, or opset 1 of another domain.
  CpuNode(const std::string& op, const std::string& domain, std::vector<In> ins, std::vector<ir::Attribute> attrs)
      : CpuNode(op, domain, domain.empty() ? 17 : 1, std::move(ins), std::move(attrs)) {}

  CpuNode(const std::string& op, const std::string& domain, int64_t opset, std::vector<In> ins,
          std::vector<ir::Attribute> attrs)
      : inputs(std::move(ins)) {
    std::vector<ir::Value*> values;
    for (const In& in : inputs) {
      if (in.name.empty()) {
        values.push_back(nullptr);
      } else if (in.constant) {
        values.push_back(g.AddInitializer(in.name, std::make_shared<const Tensor>(in.value)));
      } else {
        ir::Value* v = g.AddValue(in.name, ir::StaticTensorType(in.value.dtype(), in.value.shape()));
        g.mutable_inputs().push_back(v);
        values.push_back(v);
      }
    }
    node = g.AddNode("n", op, domain, values, {g.AddValue("out")}, std::move(attrs));
    node->set_opset(opset);
  }

  // The specs Prepare sees: every input's dtype and shape, the data of the constant ones.
  std::vector<InputSpec> Specs() const {
    std::vector<InputSpec> specs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      InputSpec s;
      if (!inputs[k].name.empty()) {
        s.kind = InputSpec::Kind::kTensor;
        s.dtype = inputs[k].value.dtype();
        s.shape = inputs[k].value.shape();
        if (inputs[k].constant) s.data = node->input(k)->initializer();
      }
      specs.push_back(std::move(s));
    }
    return specs;
  }

  // Creates the cpu kernel `name` for the node and prepares it.
  PreparedKernel Prepare(const std::string& name, int threads = 1) const {
    const KernelOptions options{threads, false};
    const std::unique_ptr<OpKernel> kernel = CpuDef(name).create(*node, options);
    return PrepareWith(*kernel, options);
  }

  // Y from the cpu kernel `name`, prepared with Specs() (fed inputs' data unknown) and then run on every input's
  // data: the executor's order.
  Value Run(const std::string& name) const {
    const KernelOptions options{1, false};
    const std::unique_ptr<OpKernel> kernel = CpuDef(name).create(*node, options);
    const PreparedKernel prepared = PrepareWith(*kernel, options);
    std::vector<Value> values = Values();
    const std::vector<const Value*> ptrs = Pointers(values);
    std::vector<Value> outputs(1);
    KernelContext ctx(*node, ptrs, outputs, 1, nullptr);
    ctx.set_prepared(&prepared);
    kernel->Compute(ctx);
    return outputs[0];
  }

  // Y from `registry`'s kernel for the node (created, prepared and run by EvaluateNode).
  Tensor Evaluate(const KernelRegistry& registry) const {
    const std::vector<Value> values = Values();
    const std::vector<const Value*> ptrs = Pointers(values);
    return EvaluateNode(registry, *node, ptrs)[0].tensor();
  }

 private:
  PreparedKernel PrepareWith(const OpKernel& kernel, const KernelOptions& options) const {
    const std::vector<InputSpec> specs = Specs();
    PrepareContext ctx(*node, specs, options, "model 'm.onnx'");
    kernel.Prepare(ctx);
    return ctx.Finish();
  }
  std::vector<Value> Values() const {
    std::vector<Value> values;
    for (const In& in : inputs) values.push_back(in.name.empty() ? Value() : Value(in.value));
    return values;
  }
  std::vector<const Value*> Pointers(const std::vector<Value>& values) const {
    std::vector<const Value*> ptrs;
    for (size_t k = 0; k < values.size(); ++k) ptrs.push_back(inputs[k].name.empty() ? nullptr : &values[k]);
    return ptrs;
  }
};

}  // namespace ferry::testing
