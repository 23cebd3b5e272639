// The partitioner (runtime::PlaceModel) through sessions and `ferry check`: fallback with reasons, segments,
// copy insertion (device boundaries, host inputs, initializers, subgraphs; none between host backends), strict
// mode, pinning, the placement report, and check/run agreement.
//
// Two test backends: "simdev", a backend with a device of its own ("sim:0") whose kernels refuse to read values
// that were not copied to (or produced on) the device, and whose CopyToHost refuses values that are not there,
// so a missing copy fails the run (addresses are never forgotten, so a check can miss, but never fail wrongly);
// and "hostpart", a host backend with Relu only.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "backends/backend.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/model_builder.h"
#include "tools/check.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;

// ---- test backends -----------------------------------------------------------------------------------------

// The "device memory" of simdev: buffers it allocated (copies in, kernel outputs).
struct SimMemory {
  std::mutex mu;
  std::set<const void*> buffers;
  void Add(const Value& v) {
    if (!v.is_tensor() || v.tensor().size() == 0) return;
    std::lock_guard lock(mu);
    buffers.insert(v.tensor().raw_data());
  }
  bool Has(const Value& v) {
    if (!v.is_tensor() || v.tensor().size() == 0) return true;
    std::lock_guard lock(mu);
    return buffers.count(v.tensor().raw_data()) > 0;
  }
};
SimMemory& Sim() {
  static SimMemory m;
  return m;
}

KernelFactory RefCreate(const std::string& op) {
  for (const auto& d : FindBackend("ref")->kernels().defs()) {
    if (d.op == op && d.domain.empty() && d.since <= 17 && 17 <= d.until) return d.create;
  }
  throw InternalError("ref has no " + op);
}

// Runs ref's kernel, after checking every device input lives in sim memory; records the outputs as sim memory.
class SimKernel : public OpKernel {
 public:
  SimKernel(std::unique_ptr<OpKernel> inner, std::vector<int> host_inputs)
      : inner_(std::move(inner)), host_inputs_(std::move(host_inputs)) {}
  void Compute(KernelContext& ctx) const override {
    for (int i = 0; i < ctx.input_count(); ++i) {
      const bool host = std::find(host_inputs_.begin(), host_inputs_.end(), i) != host_inputs_.end();
      const Value* v = ctx.input_value(i);
      if (v && !host && !Sim().Has(*v)) throw InternalError(ctx.Describe() + ": input " + std::to_string(i) + " is not on sim:0");
    }
    // Run ref's kernel into outputs of our own, record them as sim memory, hand them on.
    std::vector<const Value*> ins;
    for (int i = 0; i < ctx.input_count(); ++i) ins.push_back(ctx.input_value(i));
    std::vector<Value> outs(static_cast<size_t>(ctx.output_count()));
    KernelContext inner(ctx.node(), ins, outs, ctx.threads(),
                        [&ctx](const ir::Graph& body, std::vector<Value> in) { return ctx.RunSubgraph(body, std::move(in)); });
    // ref's kernel prepared for these very inputs (the simulated device keeps no prepared state of its own).
    std::vector<InputSpec> specs;
    for (const Value* v : ins) specs.push_back(InputSpec::Of(v, v && v->is_tensor() ? &v->tensor() : nullptr));
    PrepareContext prepare(ctx.node(), specs, KernelOptions{ctx.threads()});
    inner_->Prepare(prepare);
    const PreparedKernel prepared = prepare.Finish();
    inner.set_prepared(&prepared);
    inner_->Compute(inner);
    for (size_t i = 0; i < outs.size(); ++i) {
      Sim().Add(outs[i]);
      ctx.SetOutput(static_cast<int>(i), std::move(outs[i]));
    }
  }

 private:
  std::unique_ptr<OpKernel> inner_;
  std::vector<int> host_inputs_;
};

class SimDevBackend : public Backend {
 public:
  SimDevBackend() : registry_("simdev") {
    auto add = [&](const std::string& op, std::vector<DataType> types, std::vector<int> host_inputs = {}) {
      KernelFactory inner = RefCreate(op);
      registry_.Add({.op = op,
                     .types = {{"T", std::move(types)}},
                     .create = [inner, host_inputs](const ir::Node& n,
                                                    const KernelOptions&) -> std::unique_ptr<OpKernel> {
                       return std::make_unique<SimKernel>(inner(n, KernelOptions{}), host_inputs);
                     },
                     .host_inputs = host_inputs});
    };
    add("Relu", {DataType::kFloat});
    add("Add", {DataType::kFloat, DataType::kInt64});
    add("Reshape", {DataType::kFloat}, {1});
  }
  const std::string& name() const override { return name_; }
  std::string device() const override { return "sim:0"; }
  const KernelRegistry& kernels() const override { return registry_; }
  Value CopyToDevice(const Value& host) const override {
    Value v(host.tensor().Clone());
    Sim().Add(v);
    return v;
  }
  Value CopyToHost(const Value& device) const override {
    if (!Sim().Has(device)) throw InternalError("CopyToHost of a value not on sim:0");
    return Value(device.tensor().Clone());
  }

 private:
  std::string name_ = "simdev";
  KernelRegistry registry_;
};

class HostPartBackend : public Backend {
 public:
  HostPartBackend() : registry_("hostpart") {
    registry_.Add({.op = "Relu", .types = {{"T", {DataType::kFloat}}}, .create = RefCreate("Relu")});
  }
  const std::string& name() const override { return name_; }
  std::string device() const override { return "cpu"; }
  const KernelRegistry& kernels() const override { return registry_; }

 private:
  std::string name_ = "hostpart";
  KernelRegistry registry_;
};

void EnsureBackends() {
  static const bool registered = [] {
    RegisterBackend(std::make_unique<SimDevBackend>());
    RegisterBackend(std::make_unique<HostPartBackend>());
    return true;
  }();
  (void)registered;
}


// ---- models ------------------------------------------------------------------------------------------------

constexpr int32_t kF32 = onnx::TensorProto::FLOAT;

// x -> relu -> sig(Sigmoid) -> add(sig, relu) -> neg(Neg) -> y, all float32[2,3]. On simdev,ref: relu and add on
// simdev, sig and neg fall back to ref.
std::string ChainModel() {
  ModelBuilder b;
  b.Input("x", kF32, {2, 3}).Output("y", kF32, {2, 3});
  b.Node("Relu", {"x"}, {"r"}, "relu");
  b.Node("Sigmoid", {"r"}, {"s"}, "sig");
  b.Node("Add", {"s", "r"}, {"a"}, "add");
  b.Node("Neg", {"a"}, {"y"}, "neg");
  return b.Bytes();
}

// The shape of a Reshape computed on simdev (so it lives on the device) and read on the host (host_inputs).
std::string ReshapeModel() {
  ModelBuilder b;
  b.Input("x", kF32, {2, 3}).Output("y", kF32, {3, 2});
  b.Int64Initializer("shape0", {2}, {3, 2}).Int64Initializer("zero", {2}, {0, 0});
  b.Node("Add", {"shape0", "zero"}, {"shape"}, "shape_add");
  b.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  return b.Bytes();
}

// if(cond) then Relu(x) else Neg(x); the branches read x from the outer scope.
std::string IfModel() {
  ModelBuilder b;
  b.Input("cond", onnx::TensorProto::BOOL, {}).Input("x", kF32, {4}).Output("y", kF32, {4});
  auto& n = b.Node("If", {"cond"}, {"y"}, "if");
  auto branch = [&](const std::string& name, const std::string& op) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(name);
    auto* node = g->add_node();
    node->set_op_type(op);
    node->set_name(name + "_op");
    node->add_input("x");
    node->add_output(name + "_y");
    auto* out = g->add_output();
    out->set_name(name + "_y");
    auto* tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(kF32);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  };
  branch("then_branch", "Relu");
  branch("else_branch", "Neg");
  return b.Bytes();
}

std::unique_ptr<Session> Create(const std::string& bytes, SessionOptions o) {
  EnsureBackends();
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

// Level 0: these tests place the model as written (the optimizer would fold the test models' constant subgraphs
// away, and `ferry check`, which CheckAgreesWithRun compares with, judges the model as written).
SessionOptions On(std::vector<std::string> backends) {
  SessionOptions o;
  o.backends = std::move(backends);
  o.threads = 1;
  o.optimization_level = 0;
  return o;
}

Tensor Floats(Shape shape, std::vector<float> v) {
  Tensor t(DataType::kFloat, std::move(shape));
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

const NodePlacementInfo& NodeIn(const PlacementReport& r, const std::string& name) {
  for (const auto& n : r.nodes) {
    if (n.name == name) return n;
  }
  throw std::runtime_error("no node " + name);
}

void ExpectSameTensor(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_FLOAT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- fallback, segments, copies ----------------------------------------------------------------------------

TEST(Placement, FallbackWithReasonsSegmentsAndCopies) {
  auto session = Create(ChainModel(), On({"simdev", "ref"}));
  const PlacementReport& r = session->placement();
  EXPECT_EQ(NodeIn(r, "relu").backend, "simdev");
  EXPECT_EQ(NodeIn(r, "relu").kind, "native");
  EXPECT_EQ(NodeIn(r, "relu").reason, "native on simdev");
  EXPECT_EQ(NodeIn(r, "sig").backend, "ref");
  EXPECT_EQ(NodeIn(r, "sig").kind, "fallback");
  EXPECT_TRUE(Contains(NodeIn(r, "sig").reason, "simdev [kernel]")) << NodeIn(r, "sig").reason;
  EXPECT_TRUE(Contains(NodeIn(r, "sig").reason, "Sigmoid")) << NodeIn(r, "sig").reason;
  EXPECT_EQ(NodeIn(r, "add").backend, "simdev");
  EXPECT_EQ(NodeIn(r, "neg").backend, "ref");
  EXPECT_EQ(r.native, 2);
  EXPECT_EQ(r.fallback, 2);
  EXPECT_DOUBLE_EQ(r.fallback_ratio_nodes(), 0.5);
  EXPECT_DOUBLE_EQ(r.fallback_ratio_flops(), 0.5);  // four elementwise ops of 6 elements each

  ASSERT_EQ(r.segments.size(), 4u);
  EXPECT_EQ(r.segments[0].backend, "simdev");
  EXPECT_EQ(r.segments[0].device, "sim:0");
  EXPECT_EQ(r.segments[0].nodes, std::vector<std::string>{"relu"});
  EXPECT_EQ(r.segments[1].backend, "ref");
  EXPECT_EQ(r.segments[3].nodes, std::vector<std::string>{"neg"});

  // x to the device for relu; r back for sig; s to the device for add; a back for neg. y is made on the host.
  ASSERT_EQ(r.copies.size(), 4u);
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> expected = {
      {"x", "cpu", "sim:0", "relu"}, {"r", "sim:0", "cpu", "sig"}, {"s", "cpu", "sim:0", "add"}, {"a", "sim:0", "cpu", "neg"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const CopyInfo& c = r.copies[i];
    EXPECT_EQ(std::tie(c.value, c.from_device, c.to_device, c.before_node), expected[i]) << i;
    EXPECT_EQ(c.bytes, 24);
    EXPECT_FALSE(c.once);
  }
  EXPECT_EQ(r.copies_per_run(), 4);
  EXPECT_EQ(r.copy_bytes_per_run(), 96);

  // The run makes exactly those copies (simdev's kernels fail on a value that is not on its device).
  const Tensor x = Floats({2, 3}, {-1, 2, -3, 4, -5, 6});
  RunStats stats;
  auto out = session->RunValues({{"x", Value(x)}}, &stats);
  EXPECT_EQ(stats.copies, 4);
  EXPECT_EQ(stats.bytes_copied, 96);
  auto expected_out = Create(ChainModel(), On({"ref"}))->Run({{"x", x}});
  ExpectSameTensor(out[0].second.tensor(), expected_out[0].second);
}

TEST(Placement, NoCopiesBetweenHostBackends) {
  auto session = Create(ChainModel(), On({"hostpart", "ref"}));
  const PlacementReport& r = session->placement();
  EXPECT_EQ(NodeIn(r, "relu").backend, "hostpart");
  EXPECT_EQ(NodeIn(r, "add").backend, "ref");
  EXPECT_TRUE(r.copies.empty());
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_EQ(r.segments[1].nodes, (std::vector<std::string>{"sig", "add", "neg"}));
  RunStats stats;
  session->RunValues({{"x", Value(Floats({2, 3}, {1, 2, 3, 4, 5, 6}))}}, &stats);
  EXPECT_EQ(stats.copies, 0);
}

TEST(Placement, HostInputsAndInitializersAreCopiedRight) {
  auto session = Create(ReshapeModel(), On({"simdev", "ref"}));
  const PlacementReport& r = session->placement();
  EXPECT_EQ(NodeIn(r, "shape_add").backend, "simdev");
  EXPECT_EQ(NodeIn(r, "reshape").backend, "simdev");
  int once = 0;
  bool shape_to_host = false, y_to_host = false;
  for (const CopyInfo& c : r.copies) {
    if (c.once) {
      ++once;
      EXPECT_TRUE(c.value == "shape0" || c.value == "zero") << c.value;
      EXPECT_EQ(c.to_device, "sim:0");
    }
    if (c.value == "shape") {
      shape_to_host = c.to_device == "cpu" && c.before_node == "reshape";
      EXPECT_TRUE(Contains(c.reason, "host input 1")) << c.reason;
    }
    if (c.value == "y") y_to_host = c.to_device == "cpu" && c.before_node.empty() && c.reason == "graph output";
  }
  EXPECT_EQ(once, 2);
  EXPECT_TRUE(shape_to_host);
  EXPECT_TRUE(y_to_host);
  EXPECT_EQ(r.copies_per_run(), 3);  // x in, shape out, y out

  const Tensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  RunStats stats;
  auto out = session->RunValues({{"x", Value(x)}}, &stats);
  EXPECT_EQ(stats.copies, 3);
  EXPECT_EQ(out[0].second.tensor().shape(), (Shape{3, 2}));
  ExpectSameTensor(out[0].second.tensor(), Create(ReshapeModel(), On({"ref"}))->Run({{"x", x}})[0].second);
}

TEST(Placement, SubgraphsGetTheirOwnCopies) {
  auto session = Create(IfModel(), On({"simdev", "ref"}));
  const PlacementReport& r = session->placement();
  EXPECT_EQ(NodeIn(r, "if").backend, "ref");
  EXPECT_EQ(NodeIn(r, "then_branch_op").backend, "simdev");
  EXPECT_EQ(NodeIn(r, "then_branch_op").graph, "main/if:then_branch");
  EXPECT_EQ(NodeIn(r, "else_branch_op").backend, "ref");
  int in_branch = 0;
  for (const CopyInfo& c : r.copies) in_branch += c.graph == "main/if:then_branch";
  EXPECT_EQ(in_branch, 2);  // x to the device, the branch output back

  auto ref = Create(IfModel(), On({"ref"}));
  const Tensor x = Floats({4}, {-1, 2, -3, 4});
  for (bool cond : {true, false}) {
    Tensor c(DataType::kBool, {});
    c.data<bool>()[0] = cond;
    RunStats stats;
    auto out = session->RunValues({{"cond", Value(c)}, {"x", Value(x)}}, &stats);
    EXPECT_EQ(stats.copies, cond ? 2 : 0);
    ExpectSameTensor(out[0].second.tensor(), ref->Run({{"cond", c}, {"x", x}})[0].second);
  }
}

// ---- strict mode and pinning -------------------------------------------------------------------------------

TEST(Placement, NoFallbackListsEveryNodeThatWouldFallBack) {
  SessionOptions o = On({"simdev", "ref"});
  o.allow_fallback = false;
  try {
    Create(ChainModel(), o);
    ADD_FAILURE() << "expected an error";
  } catch (const UnsupportedError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(Contains(msg, "2 node(s) cannot run")) << msg;
    EXPECT_TRUE(Contains(msg, "'sig' (Sigmoid)")) << msg;
    EXPECT_TRUE(Contains(msg, "'neg' (Neg)")) << msg;
    EXPECT_TRUE(Contains(msg, "--no-fallback")) << msg;
    EXPECT_FALSE(Contains(msg, "'relu'")) << msg;
  }
  // Where nothing falls back, strict mode changes nothing.
  o.backends = {"ref"};
  EXPECT_NO_THROW(Create(ChainModel(), o));
}

TEST(Placement, PinsByOpTypeAndByNameAndTheirErrors) {
  SessionOptions o = On({"simdev", "ref"});
  o.pins = {{"Relu", "ref"}};
  auto s = Create(ChainModel(), o);
  EXPECT_EQ(NodeIn(s->placement(), "relu").backend, "ref");
  EXPECT_EQ(NodeIn(s->placement(), "relu").kind, "pinned");
  EXPECT_EQ(NodeIn(s->placement(), "relu").reason, "pinned by --pin Relu=ref");
  EXPECT_EQ(s->placement().pinned, 1);
  EXPECT_EQ(s->placement().segments.front().nodes, (std::vector<std::string>{"relu", "sig"}));

  o.pins = {{"Relu", "ref"}, {"relu", "simdev"}};  // the rule by name wins
  EXPECT_EQ(NodeIn(Create(ChainModel(), o)->placement(), "relu").backend, "simdev");

  // Pinned nodes are exempt from --no-fallback: the user chose.
  o.pins = {{"sig", "ref"}, {"neg", "ref"}};
  o.allow_fallback = false;
  EXPECT_NO_THROW(Create(ChainModel(), o));
  o.allow_fallback = true;

  o.pins = {{"sig", "simdev"}};
  try {
    Create(ChainModel(), o);
    ADD_FAILURE() << "expected an error";
  } catch (const UnsupportedError& e) {
    EXPECT_TRUE(Contains(e.what(), "pinned to simdev by --pin sig=simdev, which cannot run it: [kernel]")) << e.what();
  }
  o.pins = {{"nothing", "ref"}};
  try {
    Create(ChainModel(), o);
    ADD_FAILURE() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_TRUE(Contains(e.what(), "no node named 'nothing' and no node of that op type")) << e.what();
  }
  o.pins = {{"relu", "nosuch"}};
  EXPECT_THROW(Create(ChainModel(), o), InvalidArgumentError);
}

// Two pins of one node or op type to different backends are a contradiction, not "the first wins": the second
// was ignored without a word. The same pin twice is harmless.
TEST(Placement, ConflictingPinsAreRefused) {
  SessionOptions o = On({"simdev", "ref"});
  o.pins = {{"Relu", "ref"}, {"Relu", "simdev"}};
  try {
    Create(ChainModel(), o);
    ADD_FAILURE() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_TRUE(Contains(e.what(), "--pin Relu=ref and --pin Relu=simdev: one node or op type pinned to two backends"))
        << e.what();
  }
  o.pins = {{"Relu", "ref"}, {"Relu", "ref"}};
  EXPECT_EQ(NodeIn(Create(ChainModel(), o)->placement(), "relu").backend, "ref");
}

// ---- the report, and check agreeing with run ---------------------------------------------------------------

TEST(Placement, ReportTextAndJson) {
  auto session = Create(ChainModel(), On({"simdev", "ref"}));
  const std::string text = FormatPlacementText(session->placement());
  for (const char* part : {"4 nodes, 2 native, 2 fallback, 0 pinned", "fallback ratio 50.0% of nodes",
                           "copies per run 4, 96 B", "segments (4):", "'sig' (Sigmoid) -> ref [fallback]",
                           "'x' cpu -> sim:0 (24 B) for input 0 of node 'relu' (Relu)"}) {
    EXPECT_TRUE(Contains(text, part)) << part << "\n" << text;
  }
  EXPECT_FALSE(Contains(text, "'relu' (Relu) -> simdev")) << text;  // native nodes only when verbose
  EXPECT_TRUE(Contains(FormatPlacementText(session->placement(), true), "'relu' (Relu) -> simdev [native]"));
  auto j = nlohmann::json::parse(FormatPlacementJson(session->placement()));
  EXPECT_EQ(j["summary"]["copies_per_run"], 4);
  EXPECT_EQ(j["summary"]["copy_bytes_per_run"], 96);
  EXPECT_EQ(j["summary"]["fallback"], 2);
  EXPECT_EQ(j["nodes"].size(), 4u);
  EXPECT_EQ(j["segments"].size(), 4u);
  EXPECT_EQ(j["copies"][1]["from"], "sim:0");
}

std::string WriteTemp(const std::string& bytes, const std::string& name) {
  return testing::WriteTempFile(bytes, "placement_" + name + ".onnx");
}

// `ferry check` runs the same partitioner: for every option set, each node's verdict and backend in the check
// report equal the session's placement (or the session refuses the model and check calls those nodes unsupported).
TEST(Placement, CheckAgreesWithRun) {
  EnsureBackends();
  struct Case {
    std::vector<std::string> backends;
    bool allow_fallback;
    std::vector<std::pair<std::string, std::string>> pins;
  };
  const std::vector<Case> cases = {
      {{"simdev", "ref"}, true, {}},         {{"hostpart", "ref"}, true, {}},
      {{"simdev", "ref"}, false, {}},        {{"simdev", "ref"}, true, {{"Relu", "ref"}, {"add", "ref"}}},
      {{"simdev", "ref"}, true, {{"sig", "simdev"}}}, {{"ref"}, false, {}},
      {{"simdev", "hostpart", "ref"}, true, {}}};
  for (const std::string& model : {ChainModel(), ReshapeModel(), IfModel()}) {
    const std::string path = WriteTemp(model, "agree");
    for (const Case& c : cases) {
      SessionOptions so = On(c.backends);
      so.allow_fallback = c.allow_fallback;
      so.pins = c.pins;
      tools::CheckOptions co;
      co.backends = c.backends;
      co.allow_fallback = c.allow_fallback;
      co.pins = c.pins;
      std::unique_ptr<Session> session;
      try {
        session = Session::Create(path, so);
      } catch (const InvalidArgumentError&) {
        EXPECT_THROW(tools::CheckModel(path, co), InvalidArgumentError);  // a pin naming no node of this model
        continue;
      } catch (const Error&) {
      }
      tools::CheckReport report = tools::CheckModel(path, co);
      const std::string where = c.backends.front() + (c.allow_fallback ? "" : " strict") +
                                (c.pins.empty() ? "" : " pinned " + c.pins.front().first);
      if (!session) {
        EXPECT_GT(report.unsupported, 0) << where;
        continue;
      }
      EXPECT_EQ(report.unsupported, 0) << where;
      ASSERT_EQ(report.nodes.size(), session->placement().nodes.size()) << where;
      for (size_t i = 0; i < report.nodes.size(); ++i) {
        const tools::NodeCheck& n = report.nodes[i];
        const NodePlacementInfo& p = session->placement().nodes[i];
        EXPECT_EQ(n.name, p.name) << where;
        EXPECT_EQ(n.backend, p.backend) << where << " " << n.name;
        EXPECT_EQ(tools::VerdictName(n.verdict), p.kind) << where << " " << n.name;
        EXPECT_EQ(n.graph, p.graph) << where << " " << n.name;
      }
      EXPECT_NEAR(report.fallback_ratio_nodes(), session->placement().fallback_ratio_nodes(), 1e-12) << where;
    }
  }
}

}  // namespace
}  // namespace ferry
