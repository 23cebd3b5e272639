// The cross-backend op test harness (STYLE.md practice 13): build a one-node model, run it on `ref` (the oracle)
// and on the backend under test with fallback forbidden (so the kernel under test really ran), and compare every
// output with a per-case tolerance. Random inputs can carry edge values (NaN, ±inf, ±0, denormals, huge values).
//
//   OpTest t{.op = "Conv", .inputs = {In("x", RandomTensor(...)), Const("w", ...)}, .attributes = {Ints("pads", ...)}};
//   EXPECT_TRUE(MatchesRef(t, "cpu"));
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <memory>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/float16.h"
#include "ferry/session.h"
#include "ir/tensor_proto.h"

namespace ferry::testing {

struct OpInput {
  std::string name;  // "" = an omitted optional input
  Tensor value;
  bool constant = false;  // an initializer: the kernel sees it at creation (weight pre-packing)
};

inline OpInput In(std::string name, Tensor t) { return {std::move(name), std::move(t), false}; }
inline OpInput Const(std::string name, Tensor t) { return {std::move(name), std::move(t), true}; }
inline OpInput Omitted() { return {"", Tensor(), false}; }

inline onnx::AttributeProto Int(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}
inline onnx::AttributeProto Float(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
inline onnx::AttributeProto Ints(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}
inline onnx::AttributeProto Floats(const std::string& name, const std::vector<float>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
  return a;
}
inline onnx::AttributeProto Str(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

struct OpTest {
  std::string op;
  std::string domain;  // "" = ai.onnx
  int64_t opset = 17;
  std::vector<OpInput> inputs;
  std::vector<onnx::AttributeProto> attributes;
  int num_outputs = 1;
  double rtol = 1e-5, atol = 1e-6;  // |got - want| <= atol + rtol * |want|
  int threads = 1;                  // threads for the backend under test (ref always runs with 1)
};

// The one-node model of `t`: non-constant inputs are graph inputs (rank and dtype declared, dims static),
// constant ones initializers; outputs are y0, y1, ...
inline std::string OneNodeModel(const OpTest& t) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  auto* imp = m.add_opset_import();
  imp->set_domain(t.domain);
  imp->set_version(t.opset);
  auto* g = m.mutable_graph();
  g->set_name("one_node");
  auto* n = g->add_node();
  n->set_op_type(t.op);
  n->set_domain(t.domain);
  n->set_name("node");
  for (const OpInput& in : t.inputs) {
    n->add_input(in.name);
    if (in.name.empty()) continue;
    if (in.constant) {
      ir::TensorToProto(in.value, in.name, g->add_initializer());
      continue;
    }
    auto* vi = g->add_input();
    vi->set_name(in.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(in.value.dtype()));
    auto* shape = tt->mutable_shape();
    for (int64_t d : in.value.shape()) shape->add_dim()->set_dim_value(d);
  }
  for (int i = 0; i < t.num_outputs; ++i) {
    n->add_output("y" + std::to_string(i));
    g->add_output()->set_name("y" + std::to_string(i));
  }
  for (const auto& a : t.attributes) *n->add_attribute() = a;
  return m.SerializeAsString();
}

// A session over one node of `op` whose inputs are graph inputs declared by element type only (no shape), for
// tests that build their own tensors. An input named "" is omitted. `configure` adds attributes.
struct NodeInput {
  std::string name;
  DataType dtype = DataType::kUndefined;
};
inline std::unique_ptr<Session> OneNodeSession(const std::string& op, const std::vector<NodeInput>& inputs,
                                               const std::vector<std::string>& outputs, int64_t opset,
                                               const std::function<void(onnx::NodeProto&)>& configure,
                                               const SessionOptions& options) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("n0");
  for (const NodeInput& in : inputs) {
    n->add_input(in.name);
    if (in.name.empty()) continue;
    auto* vi = g->add_input();
    vi->set_name(in.name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(in.dtype));
  }
  for (const std::string& name : outputs) {
    n->add_output(name);
    g->add_output()->set_name(name);
  }
  if (configure) configure(*n);
  const std::string bytes = m.SerializeAsString();
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
}

// Options for tests of one backend's kernels: that backend only, no fallback, `threads` threads.
inline SessionOptions OnlyBackend(const std::string& backend, int threads) {
  SessionOptions o;
  o.backends = {backend};
  o.allow_fallback = false;
  o.threads = threads;
  return o;
}

inline std::vector<std::pair<std::string, Tensor>> Feeds(const OpTest& t) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const OpInput& in : t.inputs) {
    if (!in.name.empty() && !in.constant) feeds.emplace_back(in.name, in.value);
  }
  return feeds;
}

// A session over the model `bytes` on `backends` (fallback forbidden when `strict`), `threads` threads, --isa `isa`.
inline std::unique_ptr<Session> SessionFor(const std::string& bytes, const std::vector<std::string>& backends,
                                           bool strict, int threads, const std::string& isa = "") {
  SessionOptions o;
  o.backends = backends;
  o.allow_fallback = !strict;
  o.threads = threads;
  o.isa = isa;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

// Runs `t` on `backends` (fallback forbidden when `strict`) and returns its outputs.
inline std::vector<std::pair<std::string, Tensor>> RunOn(const OpTest& t, const std::vector<std::string>& backends,
                                                         bool strict, int threads) {
  return SessionFor(OneNodeModel(t), backends, strict, threads)->Run(Feeds(t));
}

// Every output bit for bit (strings compared as strings).
inline ::testing::AssertionResult SameBits(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << DataTypeName(got.dtype()) << ", want "
                                         << DataTypeName(want.dtype());
  }
  if (got.shape() != want.shape()) {
    return ::testing::AssertionFailure() << "shape " << ShapeToString(got.shape()) << ", want "
                                         << ShapeToString(want.shape());
  }
  if (got.dtype() == DataType::kString) {
    for (int64_t i = 0; i < got.size(); ++i) {
      if (got.strings()[i] != want.strings()[i]) return ::testing::AssertionFailure() << "string " << i << " differs";
    }
    return ::testing::AssertionSuccess();
  }
  const auto* g = static_cast<const uint8_t*>(got.raw_data());
  const auto* w = static_cast<const uint8_t*>(want.raw_data());
  for (size_t i = 0; i < got.nbytes(); ++i) {
    if (g[i] != w[i]) {
      return ::testing::AssertionFailure() << "byte " << i << " of " << got.nbytes() << " differs: got "
                                           << int(g[i]) << ", want " << int(w[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// `t` is refused by the cpu kernel with a message containing `reason` (fallback forbidden), and with cpu,ref it
// falls back to ref (recorded with that reason) and gives ref's result bit for bit.
inline void ExpectRefusedAndFallsBack(const OpTest& t, const std::string& reason) {
  const std::string bytes = OneNodeModel(t);
  try {
    SessionFor(bytes, {"cpu"}, true, 1);
    ADD_FAILURE() << t.op << ": expected the cpu kernel to refuse the node";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
  auto session = SessionFor(bytes, {"cpu", "ref"}, false, 1);
  ASSERT_EQ(session->placement().nodes.size(), 1u);
  EXPECT_EQ(session->placement().nodes[0].backend, "ref");
  EXPECT_EQ(session->placement().nodes[0].kind, "fallback");
  EXPECT_NE(session->placement().nodes[0].reason.find(reason), std::string::npos)
      << session->placement().nodes[0].reason;
  const auto got = session->Run(Feeds(t));
  const auto want = RunOn(t, {"ref"}, true, 1);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(SameBits(got[i].second, want[i].second));
}

inline double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return t.data<double>()[i];
    case DataType::kFloat16: return static_cast<float>(t.data<Float16>()[i]);
    case DataType::kBFloat16: return static_cast<float>(t.data<BFloat16>()[i]);
    case DataType::kInt8: return t.data<int8_t>()[i];
    case DataType::kUint8: return t.data<uint8_t>()[i];
    case DataType::kInt16: return t.data<int16_t>()[i];
    case DataType::kUint16: return t.data<uint16_t>()[i];
    case DataType::kInt32: return t.data<int32_t>()[i];
    case DataType::kUint32: return t.data<uint32_t>()[i];
    case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kUint64: return static_cast<double>(t.data<uint64_t>()[i]);
    case DataType::kBool: return t.data<bool>()[i] ? 1 : 0;
    default: throw std::runtime_error("op_harness: no comparison for " + std::string(DataTypeName(t.dtype())));
  }
}

// Compares two tensors: same dtype and shape, every element within tolerance (NaN matches NaN, ±inf must match).
inline ::testing::AssertionResult TensorsClose(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << DataTypeName(got.dtype()) << ", want "
                                         << DataTypeName(want.dtype());
  }
  if (got.shape() != want.shape()) {
    return ::testing::AssertionFailure() << "shape " << ShapeToString(got.shape()) << ", want "
                                         << ShapeToString(want.shape());
  }
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = ElementAsDouble(got, i), w = ElementAsDouble(want, i);
    bool ok;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::isfinite(g) && std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok && bad++ == 0) first << "element " << i << ": got " << g << ", want " << w;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements differ; first " << first.str();
}

// The check: `backend` (strict) against `ref`, output by output.
inline ::testing::AssertionResult MatchesRef(const OpTest& t, const std::string& backend) {
  std::vector<std::pair<std::string, Tensor>> want, got;
  try {
    want = RunOn(t, {"ref"}, true, 1);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << t.op << ": ref failed: " << e.what();
  }
  try {
    got = RunOn(t, {backend}, true, t.threads);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << t.op << ": " << backend << " failed: " << e.what();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    auto r = TensorsClose(got[i].second, want[i].second, t.rtol, t.atol);
    if (!r) return ::testing::AssertionFailure() << t.op << " output " << i << " on " << backend << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

// Values in [lo, hi); with `edges`, about one element in 16 is an edge value: NaN, ±inf, ±0, a denormal, ±1e30.
inline Tensor RandomTensor(DataType dt, Shape shape, std::mt19937& rng, double lo = -1, double hi = 1,
                           bool edges = false) {
  Tensor t(dt, std::move(shape));
  if (!IsFloatingPoint(dt)) edges = false;
  std::uniform_real_distribution<double> dist(lo, hi);
  std::uniform_int_distribution<int> pick(0, 15), which(0, 6);
  const double edge_values[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(), 0.0, -0.0, 1e-40, 1e30};
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = dist(rng);
    if (edges && pick(rng) == 0) v = edge_values[which(rng)] * (which(rng) == 6 ? -1 : 1);
    switch (dt) {
      case DataType::kFloat: t.data<float>()[i] = static_cast<float>(v); break;
      case DataType::kDouble: t.data<double>()[i] = v; break;
      case DataType::kFloat16: t.data<Float16>()[i] = Float16(static_cast<float>(v)); break;
      case DataType::kBFloat16: t.data<BFloat16>()[i] = BFloat16(static_cast<float>(v)); break;
      case DataType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(std::lround(v)); break;
      case DataType::kInt64: t.data<int64_t>()[i] = std::llround(v); break;
      case DataType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(std::lround(v)); break;
      case DataType::kUint8: t.data<uint8_t>()[i] = static_cast<uint8_t>(std::lround(v)); break;
      case DataType::kBool: t.data<bool>()[i] = v > (lo + hi) / 2; break;
      default: throw std::runtime_error("op_harness: no random values for " + std::string(DataTypeName(dt)));
    }
  }
  return t;
}

}  // namespace ferry::testing
