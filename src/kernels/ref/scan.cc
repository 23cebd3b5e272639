// Scan: iterates `body` over slices of M scan inputs, carrying N state tensors and accumulating K scan outputs.
// Opset 8 has a leading batch axis (optional sequence_lens, per-input `directions`); opset 9+ has no batch axis
// and per-input/per-output axes and directions.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

const Tensor& RequireTensor(const KernelContext& ctx, const Value& v, const std::string& what) {
  if (!v.is_tensor())
    throw InvalidArgumentError(ctx.Describe() + ": " + what + " must be a tensor, got " + ValueKindName(v));
  return v.tensor();
}

std::vector<int64_t> ReadFlags(const ir::Node& node, const char* name, size_t count, int64_t def, bool directions) {
  std::vector<int64_t> v = node.GetInts(name);
  if (v.empty()) return std::vector<int64_t>(count, def);
  if (v.size() != count) {
    throw InvalidModelError(node.Describe() + ": attribute '" + name + "' has " + std::to_string(v.size()) +
                            " values, expected " + std::to_string(count));
  }
  if (directions) {
    for (int64_t d : v) {
      if (d != 0 && d != 1) {
        throw InvalidModelError(node.Describe() + ": attribute '" + name + "' values must be 0 or 1, got " +
                                std::to_string(d));
      }
    }
  }
  return v;
}

// Scan output axis `axis` of an output of rank `rank`, normalised; the node's description is built only for an
// axis out of range (an error of what the body made).
int64_t ScanOutputAxis(const KernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return NormalizeAxis(axis, rank, ctx.Describe() + ": scan_output_axes");
  return axis < 0 ? axis + rank : axis;
}

// Body outputs as tensors, checking the count.
void CheckResults(const KernelContext& ctx, const std::vector<Value>& results, size_t expected) {
  if (results.size() != expected) {
    throw InternalError(ctx.Describe() + ": body returned " + std::to_string(results.size()) + " values, expected " +
                        std::to_string(expected));
  }
}

// ---- opset 9+ -------------------------------------------------------------------------------------------------

class Scan9 : public OpKernel {
 public:
  explicit Scan9(const ir::Node& node) : body_(node.GetGraph("body")) {
    if (!body_) throw InvalidModelError(node.Describe() + ": attribute 'body' is required");
    const int64_t m = node.RequireAttr("num_scan_inputs").i;
    if (m < 1 || static_cast<size_t>(m) > node.num_inputs()) {
      throw InvalidModelError(node.Describe() + ": num_scan_inputs " + std::to_string(m) + " is out of range for " +
                              std::to_string(node.num_inputs()) + " inputs");
    }
    num_scan_in_ = static_cast<size_t>(m);
    num_state_ = node.num_inputs() - num_scan_in_;
    if (body_->inputs().size() != num_state_ + num_scan_in_) {
      throw InvalidModelError(node.Describe() + ": body has " + std::to_string(body_->inputs().size()) +
                              " inputs, expected " + std::to_string(num_state_ + num_scan_in_));
    }
    if (body_->outputs().size() < num_state_) {
      throw InvalidModelError(node.Describe() + ": body has fewer outputs than the " + std::to_string(num_state_) +
                              " state variables");
    }
    num_scan_out_ = body_->outputs().size() - num_state_;
    if (node.num_outputs() > num_state_ + num_scan_out_) {
      throw InvalidModelError(node.Describe() + ": node has more outputs than the body produces");
    }
    in_axes_ = ReadFlags(node, "scan_input_axes", num_scan_in_, 0, false);
    in_dirs_ = ReadFlags(node, "scan_input_directions", num_scan_in_, 0, true);
    out_axes_ = ReadFlags(node, "scan_output_axes", num_scan_out_, 0, false);
    out_dirs_ = ReadFlags(node, "scan_output_directions", num_scan_out_, 0, true);
  }

  // The outputs are what the body makes: dynamic. The scan inputs' axes and common sequence length, when they
  // are all tensors (a sequence or optional among them is data: Compute rejects it).
  void Prepare(PrepareContext& ctx) const override {
    for (size_t i = 0; i < num_state_ + num_scan_in_; ++i) {
      if (!ctx.node().input(i)) {
        throw InvalidModelError(ctx.Describe() + ": " + (i < num_state_ ? "state input " : "scan input ") +
                                std::to_string(i < num_state_ ? i : i - num_state_) + " is missing");
      }
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutputDynamic(i);
    Plan p;
    p.axes.resize(num_scan_in_);
    for (size_t j = 0; j < num_scan_in_; ++j) {
      const InputSpec& x = ctx.input(static_cast<int>(num_state_ + j));
      if (!x.is_tensor()) return;
      const int64_t rank = static_cast<int64_t>(x.shape.size());
      if (rank < 1) {
        throw InvalidArgumentError(ctx.Describe() + ": scan input " + std::to_string(j) + " must have rank >= 1");
      }
      p.axes[j] = NormalizeAxis(in_axes_[j], rank, ctx.Describe() + ": scan_input_axes");
      const int64_t len = x.shape[static_cast<size_t>(p.axes[j])];
      if (p.seq_len >= 0 && len != p.seq_len) {
        throw InvalidArgumentError(ctx.Describe() + ": scan input " + std::to_string(j) + " has sequence length " +
                                   std::to_string(len) + ", scan input 0 has " + std::to_string(p.seq_len));
      }
      p.seq_len = len;
    }
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    std::vector<Value> state(num_state_);
    for (size_t i = 0; i < num_state_; ++i) state[i] = *ctx.input_value(static_cast<int>(i));
    std::vector<const Tensor*> xs(num_scan_in_);
    for (size_t j = 0; j < num_scan_in_; ++j) {
      const Value* v = ctx.input_value(static_cast<int>(num_state_ + j));
      xs[j] = &RequireTensor(ctx, *v, "scan input " + std::to_string(j));
    }
    const Plan& plan = ctx.state<Plan>();  // made when every scan input is a tensor
    const std::vector<int64_t>& axes = plan.axes;
    const int64_t seq_len = plan.seq_len;

    std::vector<Tensor> outs(num_scan_out_);
    std::vector<int64_t> out_axes(num_scan_out_);
    for (int64_t t = 0; t < seq_len; ++t) {
      std::vector<Value> args;
      args.reserve(num_state_ + num_scan_in_);
      for (auto& s : state) args.push_back(std::move(s));
      for (size_t j = 0; j < num_scan_in_; ++j) {
        args.emplace_back(SliceAlongAxis(*xs[j], axes[j], in_dirs_[j] ? seq_len - 1 - t : t));
      }
      std::vector<Value> results = ctx.RunSubgraph(*body_, std::move(args));
      CheckResults(ctx, results, num_state_ + num_scan_out_);
      for (size_t i = 0; i < num_state_; ++i) state[i] = std::move(results[i]);
      for (size_t k = 0; k < num_scan_out_; ++k) {
        const std::string what = "scan output " + std::to_string(k);
        const Tensor& e = RequireTensor(ctx, results[num_state_ + k], what);
        if (t == 0) {
          out_axes[k] = ScanOutputAxis(ctx, out_axes_[k], e.rank() + 1);
          Shape shape = e.shape();
          shape.insert(shape.begin() + out_axes[k], seq_len);
          outs[k] = Tensor(e.dtype(), shape);
        } else {
          Shape expect = outs[k].shape();
          expect.erase(expect.begin() + out_axes[k]);
          if (e.dtype() != outs[k].dtype() || e.shape() != expect) {
            throw InvalidArgumentError(ctx.Describe() + ": " + what + " changed to " +
                                       std::string(DataTypeName(e.dtype())) + ShapeToString(e.shape()) +
                                       " in iteration " + std::to_string(t) + ", expected " +
                                       std::string(DataTypeName(outs[k].dtype())) + ShapeToString(expect));
          }
        }
        WriteAlongAxis(e, outs[k], out_axes[k], out_dirs_[k] ? seq_len - 1 - t : t);
      }
    }

    for (size_t i = 0; i < num_state_ && static_cast<int>(i) < ctx.output_count(); ++i) {
      // After zero iterations the states are the inputs: copy them rather than alias another node's buffers.
      ctx.SetOutput(static_cast<int>(i), seq_len <= 0 ? CloneValue(state[i]) : std::move(state[i]));
    }
    for (size_t k = 0; k < num_scan_out_; ++k) {
      const int out = static_cast<int>(num_state_ + k);
      if (out >= ctx.output_count()) break;
      if (seq_len <= 0) {
        const ir::Value* elem = body_->outputs()[num_state_ + k];
        Shape shape = StaticShapeOrZeros(elem);
        const int64_t axis = ScanOutputAxis(ctx, out_axes_[k], static_cast<int64_t>(shape.size()) + 1);
        shape.insert(shape.begin() + axis, 0);
        ctx.Output(out,
                   StaticElemType(elem, StaticElemType(ctx.node().output(static_cast<size_t>(out)), DataType::kFloat)),
                   shape);
      } else {
        ctx.SetOutput(out, std::move(outs[k]));
      }
    }
  }

 private:
  struct Plan {
    std::vector<int64_t> axes;  // per scan input, its scan axis
    int64_t seq_len = -1;       // the iterations
  };
  const ir::Graph* body_;
  size_t num_state_ = 0, num_scan_in_ = 0, num_scan_out_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

// ---- opset 8 --------------------------------------------------------------------------------------------------

class Scan8 : public OpKernel {
 public:
  explicit Scan8(const ir::Node& node) : body_(node.GetGraph("body")) {
    if (!body_) throw InvalidModelError(node.Describe() + ": attribute 'body' is required");
    const int64_t m = node.RequireAttr("num_scan_inputs").i;
    const size_t data_inputs = node.num_inputs() > 0 ? node.num_inputs() - 1 : 0;
    if (m < 1 || static_cast<size_t>(m) > data_inputs) {
      throw InvalidModelError(node.Describe() + ": num_scan_inputs " + std::to_string(m) + " is out of range for " +
                              std::to_string(data_inputs) + " state and scan inputs");
    }
    num_scan_in_ = static_cast<size_t>(m);
    num_state_ = data_inputs - num_scan_in_;
    if (body_->inputs().size() != num_state_ + num_scan_in_) {
      throw InvalidModelError(node.Describe() + ": body has " + std::to_string(body_->inputs().size()) +
                              " inputs, expected " + std::to_string(num_state_ + num_scan_in_));
    }
    if (body_->outputs().size() < num_state_) {
      throw InvalidModelError(node.Describe() + ": body has fewer outputs than the " + std::to_string(num_state_) +
                              " state variables");
    }
    num_scan_out_ = body_->outputs().size() - num_state_;
    if (node.num_outputs() > num_state_ + num_scan_out_) {
      throw InvalidModelError(node.Describe() + ": node has more outputs than the body produces");
    }
    dirs_ = ReadFlags(node, "directions", num_scan_in_, 0, true);
  }

  // The outputs are what the body makes: dynamic. The batch size and longest sequence, and the shape checks of
  // the state and scan inputs, when they are all tensors (a sequence or optional among them is data: Compute
  // rejects it); the dtype and length of sequence_lens (its values are data).
  void Prepare(PrepareContext& ctx) const override {
    for (size_t i = 0; i < num_state_ + num_scan_in_; ++i) {
      if (!ctx.node().input(1 + i)) {
        throw InvalidModelError(ctx.Describe() + ": " + (i < num_state_ ? "state input " : "scan input ") +
                                std::to_string(i < num_state_ ? i : i - num_state_) + " is missing");
      }
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutputDynamic(i);
    Plan p;
    auto check_batch = [&](const Shape& shape, const std::string& what) {
      if (shape.empty() || (p.batch >= 0 && shape[0] != p.batch)) {
        throw InvalidArgumentError(ctx.Describe() + ": " + what + " has shape " + ShapeToString(shape) +
                                   ", expected leading batch dimension " + std::to_string(p.batch));
      }
      p.batch = shape[0];
    };
    for (size_t i = 0; i < num_state_ + num_scan_in_; ++i) {
      if (!ctx.input(static_cast<int>(1 + i)).is_tensor()) return;
    }
    for (size_t i = 0; i < num_state_; ++i) {
      check_batch(ctx.input(static_cast<int>(1 + i)).shape, "state input " + std::to_string(i));
    }
    for (size_t j = 0; j < num_scan_in_; ++j) {
      const std::string what = "scan input " + std::to_string(j);
      const Shape& shape = ctx.input(static_cast<int>(1 + num_state_ + j)).shape;
      check_batch(shape, what);
      if (shape.size() < 2 || (p.max_seq >= 0 && shape[1] != p.max_seq)) {
        throw InvalidArgumentError(ctx.Describe() + ": " + what + " has shape " + ShapeToString(shape) +
                                   ", expected [batch, " + std::to_string(p.max_seq) + ", ...]");
      }
      p.max_seq = shape[1];
    }
    if (ctx.has_input(0)) {
      const InputSpec& sl = ctx.tensor_input(0);
      if (sl.dtype != DataType::kInt64 && sl.dtype != DataType::kInt32) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens': expected an int32 or int64 tensor, got " +
                                   std::string(DataTypeName(sl.dtype)));
      }
      if (ShapeElementCount(sl.shape) != p.batch) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' has " +
                                   std::to_string(ShapeElementCount(sl.shape)) + " values, expected batch size " +
                                   std::to_string(p.batch));
      }
    }
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    std::vector<const Tensor*> states(num_state_), xs(num_scan_in_);
    for (size_t i = 0; i < num_state_; ++i) {
      states[i] = &RequireTensor(ctx, *ctx.input_value(static_cast<int>(1 + i)), "state input " + std::to_string(i));
    }
    for (size_t j = 0; j < num_scan_in_; ++j) {
      xs[j] = &RequireTensor(ctx, *ctx.input_value(static_cast<int>(1 + num_state_ + j)),
                             "scan input " + std::to_string(j));
    }
    const Plan& plan = ctx.state<Plan>();  // made when every state and scan input is a tensor
    const int64_t batch = plan.batch, max_seq = plan.max_seq;
    std::vector<int64_t> lens(static_cast<size_t>(batch), max_seq);
    if (const Tensor* sl = ctx.input(0)) {
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t l = sl->dtype() == DataType::kInt64 ? sl->data<int64_t>()[b] : sl->data<int32_t>()[b];
        if (l < 0 || l > max_seq) {
          throw InvalidArgumentError(ctx.Describe() + ": sequence_lens value " + std::to_string(l) +
                                     " is outside [0, " + std::to_string(max_seq) + "]");
        }
        lens[static_cast<size_t>(b)] = l;
      }
    }

    // Per batch item: final states; per scan output: the elements of every (batch, step).
    std::vector<std::vector<Tensor>> final_states(static_cast<size_t>(batch), std::vector<Tensor>(num_state_));
    std::vector<Tensor> outs(num_scan_out_);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> state(num_state_);
      for (size_t i = 0; i < num_state_; ++i) state[i] = SliceAlongAxis(*states[i], 0, b);
      std::vector<Tensor> xb(num_scan_in_);
      for (size_t j = 0; j < num_scan_in_; ++j) xb[j] = SliceAlongAxis(*xs[j], 0, b);
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t t = 0; t < len; ++t) {
        std::vector<Value> args;
        args.reserve(num_state_ + num_scan_in_);
        for (auto& s : state) args.push_back(std::move(s));
        for (size_t j = 0; j < num_scan_in_; ++j)
          args.emplace_back(SliceAlongAxis(xb[j], 0, dirs_[j] ? len - 1 - t : t));
        std::vector<Value> results = ctx.RunSubgraph(*body_, std::move(args));
        CheckResults(ctx, results, num_state_ + num_scan_out_);
        for (size_t i = 0; i < num_state_; ++i) state[i] = std::move(results[i]);
        for (size_t k = 0; k < num_scan_out_; ++k) {
          const std::string what = "scan output " + std::to_string(k);
          const Tensor& e = RequireTensor(ctx, results[num_state_ + k], what);
          if (!outs[k].defined()) {
            Shape shape = e.shape();
            shape.insert(shape.begin(), {batch, max_seq});
            outs[k] = Tensor(e.dtype(), shape);
          } else {
            Shape expect(outs[k].shape().begin() + 2, outs[k].shape().end());
            if (e.dtype() != outs[k].dtype() || e.shape() != expect) {
              throw InvalidArgumentError(ctx.Describe() + ": " + what + " changed to " +
                                         std::string(DataTypeName(e.dtype())) + ShapeToString(e.shape()) +
                                         ", expected " + std::string(DataTypeName(outs[k].dtype())) +
                                         ShapeToString(expect));
            }
          }
          CopyElements(e, 0, outs[k], (b * max_seq + t) * e.size(), e.size());
        }
      }
      for (size_t i = 0; i < num_state_; ++i) {
        const Tensor& s = RequireTensor(ctx, state[i], "state output " + std::to_string(i));
        final_states[static_cast<size_t>(b)][i] = s;
      }
    }

    for (size_t i = 0; i < num_state_ && static_cast<int>(i) < ctx.output_count(); ++i) {
      if (batch == 0) {
        ctx.SetOutput(static_cast<int>(i), states[i]->Clone());
        continue;
      }
      std::vector<Tensor> parts(static_cast<size_t>(batch));
      for (int64_t b = 0; b < batch; ++b) parts[static_cast<size_t>(b)] = final_states[static_cast<size_t>(b)][i];
      Tensor stacked;
      try {  // states of different shapes (what the body made): the message names the node
        stacked = StackAlongNewAxis(parts, 0, std::string());
      } catch (const InvalidArgumentError& e) {
        throw InvalidArgumentError(ctx.Describe() + ": state output " + std::to_string(i) + e.what());
      }
      ctx.SetOutput(static_cast<int>(i), std::move(stacked));
    }
    for (size_t k = 0; k < num_scan_out_; ++k) {
      const int out = static_cast<int>(num_state_ + k);
      if (out >= ctx.output_count()) break;
      if (!outs[k].defined()) {  // no iteration ran
        const ir::Value* elem = body_->outputs()[num_state_ + k];
        Shape shape = StaticShapeOrZeros(elem);
        shape.insert(shape.begin(), {std::max<int64_t>(batch, 0), std::max<int64_t>(max_seq, 0)});
        ctx.Output(out,
                   StaticElemType(elem, StaticElemType(ctx.node().output(static_cast<size_t>(out)), DataType::kFloat)),
                   shape);
      } else {
        ctx.SetOutput(out, std::move(outs[k]));
      }
    }
  }

 private:
  struct Plan {
    int64_t batch = -1;    // the leading dimension of every state and scan input
    int64_t max_seq = -1;  // the scan inputs' second dimension
  };
  const ir::Graph* body_;
  size_t num_state_ = 0, num_scan_in_ = 0, num_scan_out_ = 0;
  std::vector<int64_t> dirs_;
};

}  // namespace

void RegisterScanKernels(KernelRegistry& r) {
  r.Add({.op = "Scan",
         .since = 8,
         .until = 8,
         .types = {{"I", {DataType::kInt64}}, {"V", dtypes::All()}},
         .create = MakeKernel<Scan8>});
  // Versions 9, 11, 16, 19, 21, 23, 24, ...: 11 allowed negative axes, later versions only added types.
  r.Add({.op = "Scan", .since = 9, .types = {{"V", dtypes::All()}}, .create = MakeKernel<Scan9>});
}

}  // namespace ferry::ref
