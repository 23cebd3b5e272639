#include "tools/tensor_compare.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "ferry/float16.h"

namespace ferry::tools {
namespace {

// Element i as double, for the types compared with a tolerance.
double AsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return t.data<double>()[i];
    case DataType::kFloat16: return static_cast<float>(Float16::FromBits(t.data<uint16_t>()[i]));
    case DataType::kBFloat16: return static_cast<float>(BFloat16::FromBits(t.data<uint16_t>()[i]));
    case DataType::kComplex64: return t.data<float>()[i];
    case DataType::kComplex128: return t.data<double>()[i];
    default: return 0;
  }
}

bool Tolerant(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kComplex64 || t == DataType::kComplex128;
}

}  // namespace

std::string CompareTensors(const Tensor& a, const Tensor& e, const Tolerance& tol) {
  if (a.dtype() != e.dtype()) {
    return "dtype: expected " + std::string(DataTypeName(e.dtype())) + ", got " + std::string(DataTypeName(a.dtype()));
  }
  if (a.shape() != e.shape()) return "shape: expected " + ShapeToString(e.shape()) + ", got " + ShapeToString(a.shape());
  if (e.dtype() == DataType::kString) {
    for (int64_t i = 0; i < e.size(); ++i) {
      if (a.strings()[i] != e.strings()[i]) {
        return "element " + std::to_string(i) + ": expected \"" + e.strings()[i] + "\", got \"" + a.strings()[i] + "\"";
      }
    }
    return "";
  }
  if (Tolerant(e.dtype())) {
    int64_t n = e.size();
    if (e.dtype() == DataType::kComplex64 || e.dtype() == DataType::kComplex128) n *= 2;
    int64_t bad = 0, first = -1;
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      double x = AsDouble(a, i), y = AsDouble(e, i);
      bool ok;
      if (std::isnan(y) || std::isnan(x)) ok = std::isnan(x) && std::isnan(y);
      else if (std::isinf(y) || std::isinf(x)) ok = x == y;
      else ok = std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y);
      if (!ok) {
        if (first < 0) first = i;
        ++bad;
        if (std::isfinite(x) && std::isfinite(y)) worst = std::max(worst, std::fabs(x - y));
      }
    }
    if (bad == 0) return "";
    std::ostringstream os;
    os.precision(9);
    os << bad << " of " << n << " elements differ (rtol " << tol.rtol << ", atol " << tol.atol << "); first at "
       << first << ": expected " << AsDouble(e, first) << ", got " << AsDouble(a, first) << "; max abs diff "
       << worst;
    return os.str();
  }
  if (e.nbytes() && std::memcmp(a.raw_data(), e.raw_data(), e.nbytes()) != 0) {
    size_t esize = std::max<size_t>(1, static_cast<size_t>(DataTypeBits(e.dtype()) / 8));
    const auto* pa = static_cast<const unsigned char*>(a.raw_data());
    const auto* pe = static_cast<const unsigned char*>(e.raw_data());
    size_t i = 0;
    while (i < e.nbytes() && pa[i] == pe[i]) ++i;
    std::ostringstream os;
    os << "values differ (exact comparison for " << DataTypeName(e.dtype()) << "); first at element " << i / esize;
    if (e.dtype() == DataType::kInt64) os << ": expected " << e.data<int64_t>()[i / 8] << ", got " << a.data<int64_t>()[i / 8];
    if (e.dtype() == DataType::kInt32) os << ": expected " << e.data<int32_t>()[i / 4] << ", got " << a.data<int32_t>()[i / 4];
    if (e.dtype() == DataType::kBool || e.dtype() == DataType::kUint8 || e.dtype() == DataType::kInt8) {
      os << ": expected " << int(pe[i]) << ", got " << int(pa[i]);
    }
    return os.str();
  }
  return "";
}

std::string CompareValues(const Value& a, const Value& e, const Tolerance& tol) {
  if (e.is_none()) return a.is_none() ? "" : "expected an empty optional, got a value";
  if (a.is_none()) return "expected a value, got none";
  if (e.is_tensor()) {
    if (!a.is_tensor()) return "expected a tensor, got a sequence";
    return CompareTensors(a.tensor(), e.tensor(), tol);
  }
  if (!a.is_sequence()) return "expected a sequence, got a tensor";
  const auto& as = a.sequence().tensors;
  const auto& es = e.sequence().tensors;
  if (as.size() != es.size()) {
    return "sequence length: expected " + std::to_string(es.size()) + ", got " + std::to_string(as.size());
  }
  for (size_t i = 0; i < es.size(); ++i) {
    std::string r = CompareTensors(as[i], es[i], tol);
    if (!r.empty()) return "sequence element " + std::to_string(i) + ": " + r;
  }
  return "";
}

}  // namespace ferry::tools
