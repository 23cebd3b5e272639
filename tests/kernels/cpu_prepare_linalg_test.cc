// The cpu MatMul, FusedMatMul, Gemm, BatchNormalization, Softmax/LogSoftmax and Attention kernels on the
// create -> prepare -> run lifecycle (kernel.h): Prepare raises the shape errors (naming the model, the node and
// the input at fault), declares the outputs, records the scratchpad its primitive needs (what a run then holds on
// its thread) and builds the state Compute runs on; Compute without Prepare is a bug (InternalError), not a
// primitive built on the fly. Each kernel is created from the cpu registry and driven directly, without a session.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ferry/error.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"

namespace ferry {
namespace {

constexpr const char* kModel = "model 'linalg.onnx'";

const KernelRegistry& CpuRegistry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry("cpu");
    cpu::RegisterCpuKernels(*reg);
    return reg;
  }();
  return *r;
}

// Deterministic data: small values of both signs.
Tensor Ramp(Shape shape, float step = 0.37f) {
  Tensor t(DataType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = std::fmod(step * static_cast<float>(i), 2.0f) - 1.0f;
  return t;
}

// One node of one op, its kernel from the cpu registry, and the data a run reads per input.
class OneNode {
 public:
  OneNode(std::string op, std::string domain, int64_t opset)
      : op_(std::move(op)), domain_(std::move(domain)), opset_(opset) {}

  // A graph input (or, with `constant`, an initializer that no feed overrides) holding `t`, its shape declared
  // unless `dynamic`; an undefined `t` omits the input.
  OneNode& In(const std::string& name, Tensor t, bool constant = false, bool dynamic = false) {
    if (!t.defined()) {
      inputs_.push_back(nullptr);
      data_.emplace_back();
      constant_.push_back(false);
      return *this;
    }
    std::vector<ir::Dim> dims;
    for (int64_t d : t.shape()) dims.push_back(ir::Dim::Static(d));
    ir::Value* v = g_.AddValue(name, dynamic ? ir::TypeInfo::Tensor(t.dtype()) : ir::TypeInfo::Tensor(t.dtype(), dims));
    if (constant) v->set_initializer(std::make_shared<const Tensor>(t));
    inputs_.push_back(v);
    data_.push_back(constant ? *v->initializer() : t);
    constant_.push_back(constant);
    return *this;
  }
  OneNode& Attr(ir::Attribute a) {
    attrs_.push_back(std::move(a));
    return *this;
  }

  // Makes the node and creates its kernel (once).
  OpKernel& kernel() {
    if (kernel_) return *kernel_;
    ir::Value* y = g_.AddValue("y");
    node_ = g_.AddNode("n1", op_, domain_, inputs_, {y}, attrs_);
    node_->set_opset(opset_);
    std::vector<DataType> types;
    for (const Tensor& t : data_) types.push_back(t.defined() ? t.dtype() : DataType::kUndefined);
    const SupportResult s = CpuRegistry().Query(*node_, types);
    if (!s.supported()) throw UnsupportedError("cpu does not run " + op_ + ": " + s.reason);
    kernel_ = s.kernel->create(*node_, KernelOptions{.threads = threads_});
    return *kernel_;
  }
  const ir::Node& node() {
    kernel();
    return *node_;
  }

  // Prepares for the inputs' shapes, the constants' data known (`constants_known`) or not.
  PreparedKernel Prepare(bool constants_known = true) {
    OpKernel& k = kernel();
    specs_.clear();
    for (size_t i = 0; i < data_.size(); ++i) {
      if (!data_[i].defined()) {
        specs_.emplace_back();
        continue;
      }
      values_.emplace_back(std::make_unique<Value>(data_[i]));
      specs_.push_back(InputSpec::Of(values_.back().get(), constant_[i] && constants_known ? &data_[i] : nullptr));
    }
    PrepareContext ctx(*node_, specs_, KernelOptions{.threads = threads_}, kModel);
    k.Prepare(ctx);
    return ctx.Finish();
  }

  // Runs the kernel once on `prepared` (nullptr: unprepared), input `override_index` replaced by `override_value`
  // when given; returns Y.
  Tensor Run(const PreparedKernel* prepared, int override_index = -1, const Tensor* override_value = nullptr) {
    OpKernel& k = kernel();
    std::vector<Value> in;
    in.reserve(data_.size());
    for (size_t i = 0; i < data_.size(); ++i) {
      const bool over = static_cast<int>(i) == override_index && override_value;
      in.push_back(over ? Value(*override_value) : data_[i].defined() ? Value(data_[i]) : Value());
    }
    std::vector<const Value*> ptrs;
    for (size_t i = 0; i < in.size(); ++i) ptrs.push_back(data_[i].defined() ? &in[i] : nullptr);
    std::vector<Value> out(1);
    KernelContext ctx(*node_, ptrs, out, threads_, nullptr);
    ctx.set_prepared(prepared);
    k.Compute(ctx);
    return out[0].tensor();
  }

  // Runs on a fresh thread (whose scratch buffers start empty) and returns the oneDNN scratchpad it then holds.
  int64_t ScratchpadOfARun(const PreparedKernel& prepared) {
    kernel();
    int64_t held = -1;
    std::thread t([&] {
      Run(&prepared);
      held = cpu::ScratchpadBytesOnThisThread();
    });
    t.join();
    return held;
  }

  const Tensor& data(size_t i) const { return data_[i]; }

  // What the session does once every kernel reading constant input `i` holds its own copy: the run then reads a
  // tensor without data, and Prepare sees none. False (nothing changed) when the kernel keeps no copy.
  bool Release(size_t i) {
    if (!kernel().ReleaseConstantInput(i)) return false;
    data_[i] = Tensor::Wrap(data_[i].dtype(), data_[i].shape(), nullptr, nullptr);
    constant_[i] = false;
    return true;
  }

 private:
  ir::Graph g_;
  std::string op_, domain_;
  int64_t opset_;
  int threads_ = 1;
  std::vector<ir::Value*> inputs_;
  std::vector<Tensor> data_;
  std::vector<bool> constant_;
  std::vector<ir::Attribute> attrs_;
  ir::Node* node_ = nullptr;
  std::unique_ptr<OpKernel> kernel_;
  std::vector<InputSpec> specs_;
  std::vector<std::unique_ptr<Value>> values_;
};

// The message of the error Prepare throws (of type E), or "" when it throws none.
template <typename E>
std::string PrepareError(OneNode& n) {
  try {
    n.Prepare();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

void ExpectMentions(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_FALSE(message.empty()) << "Prepare raised no error";
  for (const std::string& p : parts) EXPECT_NE(message.find(p), std::string::npos) << p << " not in: " << message;
}

void ExpectDeclares(const PreparedKernel& p, const Shape& shape) {
  ASSERT_GE(p.outputs.size(), 1u);
  EXPECT_TRUE(p.outputs[0].is_tensor());
  EXPECT_EQ(p.outputs[0].dtype, DataType::kFloat);
  EXPECT_EQ(p.outputs[0].shape, shape);
  EXPECT_NE(p.state, nullptr);
}

void ExpectNear(const Tensor& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.size(); ++i) {
    const float w = want[static_cast<size_t>(i)];
    EXPECT_NEAR(got.data<float>()[i], w, tol * (1.0f + std::fabs(w))) << "element " << i;
  }
}

// Y = A · B for A [batch·M, K] and B [K, N] (B shared by the batch), or per batch with B [batch, K, N].
std::vector<float> NaiveMatMul(const Tensor& a, const Tensor& b, int64_t batch, int64_t m, int64_t k, int64_t n,
                               bool b_batched) {
  std::vector<float> y(static_cast<size_t>(batch * m * n), 0.0f);
  for (int64_t s = 0; s < batch; ++s) {
    const float* ap = a.data<float>() + s * m * k;
    const float* bp = b.data<float>() + (b_batched ? s * k * n : 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t x = 0; x < k; ++x) acc += ap[i * k + x] * bp[x * n + j];
        y[static_cast<size_t>(s * m * n + i * n + j)] = acc;
      }
    }
  }
  return y;
}

TEST(CpuPrepareLinalg, MatMulShapeErrorsAreRaisedByPrepare) {
  OneNode mm("MatMul", "", 13);
  mm.In("a", Ramp({2, 3})).In("b", Ramp({4, 5}));
  ExpectMentions(PrepareError<InvalidArgumentError>(mm),
                 {kModel, "node 'n1' (MatMul)", "input 0 'a' float32[2,3]", "input 1 'b' float32[4,5]"});
  OneNode batched("MatMul", "", 13);
  batched.In("a", Ramp({2, 2, 3})).In("b", Ramp({3, 3, 4}));
  ExpectMentions(PrepareError<InvalidArgumentError>(batched),
                 {"node 'n1' (MatMul)", "input 0 'a' float32[2,2,3]", "input 1 'b' float32[3,3,4]"});
}

TEST(CpuPrepareLinalg, MatMulDeclaresYAndRunsOnItsPlan) {
  {  // B shared by the batch: one 2-D product
    OneNode mm("MatMul", "", 13);
    mm.In("a", Ramp({2, 7, 30})).In("b", Ramp({30, 5}, 0.11f));
    const PreparedKernel p = mm.Prepare();
    ExpectDeclares(p, {2, 7, 5});
    ExpectNear(mm.Run(&p), NaiveMatMul(mm.data(0), mm.data(1), 1, 14, 30, 5, false));
    EXPECT_EQ(mm.ScratchpadOfARun(p), p.workspace.bytes());
  }
  {  // batched B
    OneNode mm("MatMul", "", 13);
    mm.In("a", Ramp({3, 4, 6})).In("b", Ramp({3, 6, 2}, 0.23f));
    const PreparedKernel p = mm.Prepare();
    ExpectDeclares(p, {3, 4, 2});
    ExpectNear(mm.Run(&p), NaiveMatMul(mm.data(0), mm.data(1), 3, 4, 6, 2, true));
    EXPECT_EQ(mm.ScratchpadOfARun(p), p.workspace.bytes());
  }
  {  // K = 0: zeros, no primitive and no scratchpad
    OneNode mm("MatMul", "", 13);
    mm.In("a", Ramp({3, 0})).In("b", Ramp({0, 4}));
    const PreparedKernel p = mm.Prepare();
    ExpectDeclares(p, {3, 4});
    EXPECT_EQ(p.workspace.bytes(), 0);
    ExpectNear(mm.Run(&p), std::vector<float>(12, 0.0f));
  }
}

TEST(CpuPrepareLinalg, ComputeWithoutPrepareIsAnInternalError) {
  OneNode mm("MatMul", "", 13);
  mm.In("a", Ramp({2, 3})).In("b", Ramp({3, 4}));
  EXPECT_THROW(mm.Run(nullptr), InternalError);
  OneNode gemm("Gemm", "", 13);
  gemm.In("a", Ramp({2, 3})).In("b", Ramp({3, 4}));
  EXPECT_THROW(gemm.Run(nullptr), InternalError);
  OneNode bn("BatchNormalization", "", 15);
  bn.In("x", Ramp({1, 2, 3})).In("s", Ramp({2})).In("b", Ramp({2})).In("m", Ramp({2})).In("v", Ramp({2}, 0.0f));
  EXPECT_THROW(bn.Run(nullptr), InternalError);
  OneNode sm("Softmax", "", 13);
  sm.In("x", Ramp({2, 3}));
  EXPECT_THROW(sm.Run(nullptr), InternalError);
}

TEST(CpuPrepareLinalg, ConstantBRunsPackedOrFedAlike) {
  // B an initializer: Prepare sees its data (a constant) or not (a graph input a feed may override); either way a
  // run on the initializer and (for the latter) a run on a fed B give the product.
  for (bool known : {true, false}) {
    SCOPED_TRACE(known ? "B known to Prepare" : "B known only at run time");
    OneNode mm("MatMul", "", 13);
    mm.In("a", Ramp({32, 64})).In("b", Ramp({64, 48}, 0.13f), true);
    const PreparedKernel p = mm.Prepare(known);
    ExpectDeclares(p, {32, 48});
    ExpectNear(mm.Run(&p), NaiveMatMul(mm.data(0), mm.data(1), 1, 32, 64, 48, false));
    EXPECT_EQ(mm.ScratchpadOfARun(p), p.workspace.bytes());
    if (!known) {
      const Tensor fed = Ramp({64, 48}, 0.29f);
      ExpectNear(mm.Run(&p, 1, &fed), NaiveMatMul(mm.data(0), fed, 1, 32, 64, 48, false));
    }
    OneNode gemm("Gemm", "", 13);
    gemm.In("a", Ramp({32, 64})).In("b", Ramp({48, 64}, 0.13f), true).Attr(ir::IntAttr("transB", 1));
    const PreparedKernel g = gemm.Prepare(known);
    ExpectDeclares(g, {32, 48});
    Tensor bt = Ramp({64, 48});  // B transposed
    for (int64_t x = 0; x < 64; ++x) {
      for (int64_t j = 0; j < 48; ++j) bt.data<float>()[x * 48 + j] = gemm.data(1).data<float>()[j * 64 + x];
    }
    ExpectNear(gemm.Run(&g), NaiveMatMul(gemm.data(0), bt, 1, 32, 64, 48, false));
    if (!known) {
      const Tensor fed = Ramp({48, 64}, 0.31f);
      for (int64_t x = 0; x < 64; ++x) {
        for (int64_t j = 0; j < 48; ++j) bt.data<float>()[x * 48 + j] = fed.data<float>()[j * 64 + x];
      }
      ExpectNear(gemm.Run(&g, 1, &fed), NaiveMatMul(gemm.data(0), bt, 1, 32, 64, 48, false));
    }
  }
}

TEST(CpuPrepareLinalg, ReleasedConstantBRunsPackedWithTheWorkspaceARunHolds) {
  // Prepare sees no data for a released B (the executor passes none) but a run reads the packed copy: the
  // workspace is that primitive's scratchpad alone.
  OneNode mm("MatMul", "", 13);
  mm.In("a", Ramp({32, 64})).In("b", Ramp({64, 48}, 0.13f), true);
  const std::vector<float> want = NaiveMatMul(mm.data(0), mm.data(1), 1, 32, 64, 48, false);
  OneNode gemm("Gemm", "", 13);
  gemm.In("a", Ramp({32, 64})).In("b", Ramp({64, 48}, 0.13f), true).In("c", Ramp({48}), true);
  std::vector<float> want_gemm = want;
  for (size_t i = 0; i < want_gemm.size(); ++i) want_gemm[i] += gemm.data(2).data<float>()[i % 48];
  if (!mm.Release(1) || !gemm.Release(1)) GTEST_SKIP() << "oneDNN keeps the plain layout here: nothing packed";
  const PreparedKernel p = mm.Prepare(false), g = gemm.Prepare(false);
  ExpectDeclares(p, {32, 48});
  ExpectDeclares(g, {32, 48});
  ExpectNear(mm.Run(&p), want);
  ExpectNear(gemm.Run(&g), want_gemm);
  EXPECT_EQ(mm.ScratchpadOfARun(p), p.workspace.bytes());
  EXPECT_EQ(gemm.ScratchpadOfARun(g), g.workspace.bytes());
}

TEST(CpuPrepareLinalg, FusedMatMulCOfTheWrongShapeIsRaisedByPrepare) {
  OneNode f("FusedMatMul", "ai.ferry", 1);
  f.In("a", Ramp({2, 3})).In("b", Ramp({3, 4})).In("c", Ramp({3})).Attr(ir::StringAttr("activation", "Relu"));
  ExpectMentions(PrepareError<InvalidArgumentError>(f),
                 {kModel, "node 'n1' (ai.ferry::FusedMatMul)", "input C has shape [3], expected [4]",
                  "input 2 'c' float32[3]"});
  OneNode ok("FusedMatMul", "ai.ferry", 1);
  ok.In("a", Ramp({2, 3})).In("b", Ramp({3, 4})).In("c", Ramp({4})).Attr(ir::StringAttr("activation", "Relu"));
  const PreparedKernel p = ok.Prepare();
  ExpectDeclares(p, {2, 4});
  std::vector<float> want = NaiveMatMul(ok.data(0), ok.data(1), 1, 2, 3, 4, false);
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(0.0f, want[i] + ok.data(2).data<float>()[i % 4]);
  ExpectNear(ok.Run(&p), want);
}

TEST(CpuPrepareLinalg, GemmShapeErrorsAreRaisedByPrepare) {
  OneNode inner("Gemm", "", 13);
  inner.In("a", Ramp({2, 3})).In("b", Ramp({4, 4})).In("c", Ramp({4}));
  ExpectMentions(PrepareError<InvalidArgumentError>(inner),
                 {kModel, "node 'n1' (Gemm)", "inner dimensions do not match", "input 0 'a' float32[2,3]",
                  "input 1 'b' float32[4,4]"});
  OneNode c("Gemm", "", 13);
  c.In("a", Ramp({2, 3})).In("b", Ramp({3, 4})).In("c", Ramp({3}));
  ExpectMentions(PrepareError<InvalidArgumentError>(c),
                 {"node 'n1' (Gemm)", "cannot be broadcast to [2,4]", "input 2 'c' float32[3]"});
  OneNode rank("Gemm", "", 13);
  rank.In("a", Ramp({2, 2, 3})).In("b", Ramp({3, 4}));
  ExpectMentions(PrepareError<InvalidArgumentError>(rank), {"must be 2-D", "input 0 'a' float32[2,2,3]"});
  // alpha = 0 or K = 0 do not excuse a C that does not broadcast.
  OneNode alpha0("Gemm", "", 13);
  alpha0.In("a", Ramp({2, 3})).In("b", Ramp({3, 4})).In("c", Ramp({2, 3})).Attr(ir::FloatAttr("alpha", 0.0f));
  ExpectMentions(PrepareError<InvalidArgumentError>(alpha0), {"input 2 'c' float32[2,3]"});
}

TEST(CpuPrepareLinalg, GemmAlphaZeroAndEmptyDimsDeclareYWithoutAPrimitive) {
  {  // alpha = 0: Y = beta · C, A (NaN included) unread
    OneNode g("Gemm", "", 13);
    Tensor a = Ramp({3, 4});
    a.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    g.In("a", a).In("b", Ramp({4, 5}), true).In("c", Ramp({5})).Attr(ir::FloatAttr("alpha", 0.0f));
    g.Attr(ir::FloatAttr("beta", 0.5f));
    const PreparedKernel p = g.Prepare();
    ExpectDeclares(p, {3, 5});
    EXPECT_EQ(p.workspace.bytes(), 0);
    std::vector<float> want(15);
    for (size_t i = 0; i < want.size(); ++i) want[i] = 0.5f * g.data(2).data<float>()[i % 5];
    ExpectNear(g.Run(&p), want);
  }
  {  // alpha = 0 without C: zeros
    OneNode g("Gemm", "", 13);
    g.In("a", Ramp({3, 4})).In("b", Ramp({4, 5})).Attr(ir::FloatAttr("alpha", 0.0f));
    const PreparedKernel p = g.Prepare();
    ExpectDeclares(p, {3, 5});
    ExpectNear(g.Run(&p), std::vector<float>(15, 0.0f));
  }
  {  // K = 0: Y = beta · C broadcast from [M, 1]
    OneNode g("Gemm", "", 13);
    g.In("a", Ramp({3, 0})).In("b", Ramp({0, 5})).In("c", Ramp({3, 1})).Attr(ir::FloatAttr("beta", -2.0f));
    const PreparedKernel p = g.Prepare();
    ExpectDeclares(p, {3, 5});
    EXPECT_EQ(p.workspace.bytes(), 0);
    std::vector<float> want(15);
    for (size_t i = 0; i < want.size(); ++i) want[i] = -2.0f * g.data(2).data<float>()[i / 5];
    ExpectNear(g.Run(&p), want);
  }
  for (const auto& [a, b] : {std::pair{Shape{0, 4}, Shape{4, 5}}, std::pair{Shape{3, 4}, Shape{4, 0}}}) {
    OneNode g("Gemm", "", 13);  // empty Y
    g.In("a", Ramp(a)).In("b", Ramp(b), true);
    const PreparedKernel p = g.Prepare();
    ExpectDeclares(p, {a[0], b[1]});
    EXPECT_EQ(p.workspace.bytes(), 0);
    EXPECT_EQ(g.Run(&p).shape(), (Shape{a[0], b[1]}));
  }
}

TEST(CpuPrepareLinalg, GemmBiasAndSumPathsRunOnTheirPlans) {
  for (float alpha : {1.0f, 0.5f}) {  // 1: C [N] is the primitive's bias; 0.5: C goes through the sum post-op
    SCOPED_TRACE("alpha " + std::to_string(alpha));
    OneNode g("Gemm", "", 13);
    g.In("a", Ramp({40, 24})).In("b", Ramp({24, 33}, 0.17f)).In("c", Ramp({33}, 0.41f));
    g.Attr(ir::FloatAttr("alpha", alpha));
    const PreparedKernel p = g.Prepare();
    ExpectDeclares(p, {40, 33});
    std::vector<float> want = NaiveMatMul(g.data(0), g.data(1), 1, 40, 24, 33, false);
    for (size_t i = 0; i < want.size(); ++i) want[i] = alpha * want[i] + g.data(2).data<float>()[i % 33];
    ExpectNear(g.Run(&p), want);
    EXPECT_EQ(g.ScratchpadOfARun(p), p.workspace.bytes());
  }
}

TEST(CpuPrepareLinalg, BatchNormalizationChecksInPrepare) {
  OneNode bad("BatchNormalization", "", 15);  // 's' of unknown shape at creation (else the kernel is refused)
  bad.In("x", Ramp({2, 3, 4})).In("s", Ramp({4}), false, true).In("b", Ramp({3})).In("m", Ramp({3}));
  bad.In("v", Ramp({3}));
  ExpectMentions(PrepareError<InvalidArgumentError>(bad),
                 {kModel, "node 'n1' (BatchNormalization)", "input 'scale' has 4 elements, expected C = 3",
                  "input 1 's' float32[4]"});
  OneNode bn("BatchNormalization", "", 15);
  Tensor var = Ramp({3});
  for (int64_t i = 0; i < 3; ++i) var.data<float>()[i] = 0.5f + static_cast<float>(i);
  bn.In("x", Ramp({2, 3, 4, 5})).In("s", Ramp({3}, 0.7f)).In("b", Ramp({3}, 0.3f)).In("m", Ramp({3}, 0.9f));
  bn.In("v", var);
  const PreparedKernel p = bn.Prepare();
  ExpectDeclares(p, {2, 3, 4, 5});
  std::vector<float> want(120);
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t c = (i / 20) % 3;
    auto at = [&](size_t k) { return bn.data(k).data<float>()[c]; };
    want[i] = (bn.data(0).data<float>()[i] - at(3)) / std::sqrt(at(4) + 1e-5f) * at(1) + at(2);
  }
  ExpectNear(bn.Run(&p), want);
  EXPECT_EQ(bn.ScratchpadOfARun(p), p.workspace.bytes());
}

TEST(CpuPrepareLinalg, SoftmaxChecksTheAxisInPrepare) {
  OneNode bad("Softmax", "", 13);
  bad.In("x", Ramp({2, 3})).Attr(ir::IntAttr("axis", 2));
  ExpectMentions(PrepareError<InvalidArgumentError>(bad), {kModel, "node 'n1' (Softmax)"});
  OneNode empty("Softmax", "", 13);  // as ref: an empty input has nothing to normalise, whatever the axis
  empty.In("x", Ramp({0, 3})).Attr(ir::IntAttr("axis", 5));
  const PreparedKernel e = empty.Prepare();
  ExpectDeclares(e, {0, 3});
  EXPECT_EQ(empty.Run(&e).shape(), (Shape{0, 3}));
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    SCOPED_TRACE(op);
    OneNode sm(op, "", 13);
    sm.In("x", Ramp({2, 3, 4})).Attr(ir::IntAttr("axis", 1));
    const PreparedKernel p = sm.Prepare();
    ExpectDeclares(p, {2, 3, 4});
    const Tensor y = sm.Run(&p);
    std::vector<float> want(24);
    const float* x = sm.data(0).data<float>();
    for (int64_t o = 0; o < 2; ++o) {
      for (int64_t i = 0; i < 4; ++i) {
        float sum = 0;
        for (int64_t c = 0; c < 3; ++c) sum += std::exp(x[o * 12 + c * 4 + i]);
        for (int64_t c = 0; c < 3; ++c) {
          const float v = std::exp(x[o * 12 + c * 4 + i]) / sum;
          want[static_cast<size_t>(o * 12 + c * 4 + i)] = std::string(op) == "Softmax" ? v : std::log(v);
        }
      }
    }
    ExpectNear(y, want);
  }
}

TEST(CpuPrepareLinalg, AttentionChecksShapesInPrepare) {
  OneNode bad("Attention", "ai.ferry", 1);
  bad.In("q", Ramp({2, 5, 8})).In("k", Ramp({2, 6, 7})).In("v", Ramp({2, 6, 4}));
  std::string message;
  try {
    message = PrepareError<InvalidArgumentError>(bad);
  } catch (const UnsupportedError& e) {
    GTEST_SKIP() << e.what();  // a CPU without AVX2: Attention runs on ref
  }
  ExpectMentions(message, {kModel, "node 'n1' (ai.ferry::Attention)", "K's head dim differs from Q's"});
  OneNode at("Attention", "ai.ferry", 1);
  at.In("q", Ramp({2, 5, 8})).In("k", Ramp({2, 6, 8}, 0.19f)).In("v", Ramp({2, 6, 4}, 0.53f));
  at.Attr(ir::FloatAttr("scale", 0.5f));
  const PreparedKernel p = at.Prepare();
  ExpectDeclares(p, {2, 5, 4});
  std::vector<float> want(40);
  const float *q = at.data(0).data<float>(), *k = at.data(1).data<float>(), *v = at.data(2).data<float>();
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 5; ++i) {
      float s[6], sum = 0;
      for (int64_t j = 0; j < 6; ++j) {
        s[j] = 0;
        for (int64_t d = 0; d < 8; ++d) s[j] += q[(b * 5 + i) * 8 + d] * k[(b * 6 + j) * 8 + d];
        s[j] = std::exp(0.5f * s[j]);
        sum += s[j];
      }
      for (int64_t c = 0; c < 4; ++c) {
        float acc = 0;
        for (int64_t j = 0; j < 6; ++j) acc += s[j] / sum * v[(b * 6 + j) * 4 + c];
        want[static_cast<size_t>((b * 5 + i) * 4 + c)] = acc;
      }
    }
  }
  ExpectNear(at.Run(&p), want);
}

}  // namespace
}  // namespace ferry
