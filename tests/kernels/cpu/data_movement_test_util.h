// Helpers for the tests of the cpu data-movement kernels (Transpose, Concat, Gather, Slice, Where, Cast, Expand,
// Pad, the view ops): random tensors of any byte-sized type, a bit-exact comparison against ref (these kernels
// move or convert bits, so NaN payloads and -0 must survive exactly), a chosen ISA variant, error-category
// checks and the refused-configuration check.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/isa.h"
#include "testing/op_harness.h"

// Own namespace: other cpu test helpers define functions of the same names in ferry::testing.
namespace ferry::testing::glue {

inline int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Random bits for any byte-sized type (NaNs, infinities, denormals of float types included); for float types
// mostly ordinary values, so a mistaken conversion shows.
inline Tensor RandomBits(DataType dt, const Shape& shape, std::mt19937& rng) {
  if (dt == DataType::kFloat || dt == DataType::kDouble || dt == DataType::kFloat16 || dt == DataType::kBFloat16 ||
      dt == DataType::kInt32 || dt == DataType::kInt64 || dt == DataType::kInt8 || dt == DataType::kUint8 ||
      dt == DataType::kBool) {
    if (Pick(rng, 0, 1) == 0) return RandomTensor(dt, shape, rng, -100, 100, true);
  }
  if (dt == DataType::kBool) return RandomTensor(dt, shape, rng);
  Tensor t(dt, shape);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(Pick(rng, 0, 255));
  return t;
}

inline Tensor Int64s(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}
inline Tensor Int32s(const std::vector<int64_t>& v) {
  std::vector<int32_t> w(v.begin(), v.end());
  return Tensor::FromVector<int32_t>(DataType::kInt32, {static_cast<int64_t>(v.size())}, w);
}

// OneNodeModel(t) with every graph input's dims made symbolic, so shape inference cannot reject bad shapes
// before the kernel sees them.
inline std::string SymbolicDimsModel(const OpTest& t) {
  onnx::ModelProto m;
  m.ParseFromString(OneNodeModel(t));
  int n = 0;
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      d.set_dim_param("d" + std::to_string(n++));
    }
  }
  return m.SerializeAsString();
}

inline std::unique_ptr<Session> DataMovementSession(const OpTest& t, const std::vector<std::string>& backends,
                                                    bool strict, int threads, const std::string& isa = "",
                                                    bool symbolic_dims = false) {
  return SessionFor(symbolic_dims ? SymbolicDimsModel(t) : OneNodeModel(t), backends, strict, threads, isa);
}

// Runs `t` on ref and on cpu alone (fallback forbidden, t.threads threads, the given --isa) and compares every
// output bit for bit. With `kernel` non-empty, also checks which cpu kernel ran.
inline ::testing::AssertionResult BitExactOnCpu(const OpTest& t, const std::string& isa = "",
                                                const std::string& kernel = "") {
  std::vector<std::pair<std::string, Tensor>> want, got;
  try {
    want = DataMovementSession(t, {"ref"}, true, 1)->Run(Feeds(t));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << t.op << ": ref failed: " << e.what();
  }
  try {
    auto session = DataMovementSession(t, {"cpu"}, true, t.threads, isa);
    if (!kernel.empty() && session->placement().nodes.at(0).kernel != kernel) {
      return ::testing::AssertionFailure() << t.op << ": ran " << session->placement().nodes.at(0).kernel
                                           << ", want " << kernel;
    }
    got = session->Run(Feeds(t));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << t.op << ": cpu failed: " << e.what();
  }
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "output count differs";
  for (size_t i = 0; i < want.size(); ++i) {
    auto r = SameBits(got[i].second, want[i].second);
    if (!r) return ::testing::AssertionFailure() << t.op << " output " << i << " on cpu: " << r.message();
  }
  return ::testing::AssertionSuccess();
}

// `t` fails at run time on cpu (strict) with an error of the same category as on ref. The model's input dims
// are symbolic, so the error comes from the kernel, not from shape inference.
inline void ExpectSameErrorAsRef(const OpTest& t, ErrorCategory want_category) {
  for (const std::string backend : {"ref", "cpu"}) {
    std::unique_ptr<Session> session;
    try {
      session = DataMovementSession(t, {backend}, true, t.threads, "", true);
    } catch (const std::exception& e) {
      ADD_FAILURE() << t.op << " on " << backend << ": session creation failed: " << e.what();
      continue;
    }
    try {
      session->Run(Feeds(t));
      ADD_FAILURE() << t.op << " on " << backend << ": expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), want_category) << backend << ": " << e.what();
    }
  }
}

// Byte-sized types the copy kernels accept, for random picks.
inline const std::vector<DataType>& CopyTypes() {
  static const std::vector<DataType> types = {
      DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble, DataType::kInt8,
      DataType::kUint8, DataType::kInt16,   DataType::kInt32,    DataType::kInt64,  DataType::kBool,
      DataType::kUint64, DataType::kFloat8E4M3FN, DataType::kComplex64, DataType::kComplex128};
  return types;
}

// An ISA variant of a kernel: the --isa list that selects it and the kernel's name.
struct Variant {
  const char* isa;
  const char* kernel;
};
// True when this CPU has every extension of `isa` ("none" = always), so the variant can be tested here.
inline bool HostHas(const Variant& v) { return DetectHostIsa().contains(IsaSet::Parse(v.isa)); }

inline Shape RandomShape(std::mt19937& rng, int64_t rank, int64_t lo, int64_t hi) {
  Shape s(static_cast<size_t>(rank));
  for (auto& d : s) d = Pick(rng, lo, hi);
  return s;
}

}  // namespace ferry::testing::glue
