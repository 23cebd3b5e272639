#include "tools/compare_stats.h"

#include <cmath>
#include <functional>

#include "core/parse_number.h"
#include "ferry/error.h"
#include "ferry/float16.h"

namespace ferry::tools {
namespace {

// Element i of a numeric tensor as double; empty for the dtypes compared otherwise.
std::function<double(int64_t)> Reader(const Tensor& t) {
  switch (t.dtype()) {
    case DataType::kFloat: return [&t](int64_t i) { return double(t.data<float>()[i]); };
    case DataType::kDouble: return [&t](int64_t i) { return t.data<double>()[i]; };
    case DataType::kFloat16: return [&t](int64_t i) { return double(Float16::ToFloat(t.data<uint16_t>()[i])); };
    case DataType::kBFloat16:
      return [&t](int64_t i) { return double(float(BFloat16::FromBits(t.data<uint16_t>()[i]))); };
    case DataType::kComplex64: return [&t](int64_t i) { return double(t.data<float>()[i]); };
    case DataType::kComplex128: return [&t](int64_t i) { return t.data<double>()[i]; };
    case DataType::kInt8: return [&t](int64_t i) { return double(t.data<int8_t>()[i]); };
    case DataType::kInt16: return [&t](int64_t i) { return double(t.data<int16_t>()[i]); };
    case DataType::kInt32: return [&t](int64_t i) { return double(t.data<int32_t>()[i]); };
    case DataType::kInt64: return [&t](int64_t i) { return double(t.data<int64_t>()[i]); };
    case DataType::kUint8: return [&t](int64_t i) { return double(t.data<uint8_t>()[i]); };
    case DataType::kUint16: return [&t](int64_t i) { return double(t.data<uint16_t>()[i]); };
    case DataType::kUint32: return [&t](int64_t i) { return double(t.data<uint32_t>()[i]); };
    case DataType::kUint64: return [&t](int64_t i) { return double(t.data<uint64_t>()[i]); };
    case DataType::kBool: return [&t](int64_t i) { return t.data<bool>()[i] ? 1.0 : 0.0; };
    default: return {};
  }
}

bool Tolerant(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kComplex64 || t == DataType::kComplex128;
}

std::vector<int64_t> Coordinate(int64_t flat, const Shape& shape, bool complex) {
  std::vector<int64_t> c(shape.size() + (complex ? 1 : 0));
  if (complex) {
    c.back() = flat % 2;
    flat /= 2;
  }
  for (size_t k = shape.size(); k-- > 0;) {
    const int64_t d = std::max<int64_t>(1, shape[k]);
    c[k] = flat % d;
    flat /= d;
  }
  return c;
}

}  // namespace

ErrorStats CompareStats(const Tensor& a, const Tensor& b, const CompareTolerance& tol) {
  ErrorStats s;
  if (a.dtype() != b.dtype()) {
    s.problem = "dtype " + std::string(DataTypeName(a.dtype())) + " vs " + std::string(DataTypeName(b.dtype()));
    return s;
  }
  if (a.shape() != b.shape()) {
    s.problem = "shape " + ShapeToString(a.shape()) + " vs " + ShapeToString(b.shape());
    return s;
  }
  s.elements = b.size();
  if (b.dtype() == DataType::kString) {
    for (int64_t i = 0; i < b.size(); ++i) {
      if (a.strings()[i] == b.strings()[i]) continue;
      if (s.worst_index < 0) s.worst_index = i;
      ++s.mismatched;
    }
    if (s.worst_index >= 0) s.worst_coord = Coordinate(s.worst_index, b.shape(), false);
    return s;
  }
  const auto ra = Reader(a), rb = Reader(b);
  if (!ra) {
    s.problem = "dtype " + std::string(DataTypeName(b.dtype())) + " is not compared";
    return s;
  }
  const bool complex = b.dtype() == DataType::kComplex64 || b.dtype() == DataType::kComplex128;
  const bool tolerant = Tolerant(b.dtype());
  const int64_t n = b.size() * (complex ? 2 : 1);
  double sum_abs = 0, dot = 0, norm_a = 0, norm_b = 0;
  int64_t finite = 0, one_sided = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double x = ra(i), y = rb(i);
    const bool nan_x = std::isnan(x), nan_y = std::isnan(y), inf_x = std::isinf(x), inf_y = std::isinf(y);
    s.nan_a += nan_x;
    s.nan_b += nan_y;
    s.inf_a += inf_x;
    s.inf_b += inf_y;
    if (nan_x || nan_y || inf_x || inf_y) {
      const bool same = (nan_x && nan_y) || (!nan_x && !nan_y && x == y);
      if (!same) {
        ++s.mismatched;
        if (one_sided < 0) one_sided = i;
      }
      continue;
    }
    const double d = std::fabs(x - y);
    ++finite;
    sum_abs += d;
    dot += x * y;
    norm_a += x * x;
    norm_b += y * y;
    if (y != 0) s.max_rel = std::max(s.max_rel, d / std::fabs(y));
    if (d > s.max_abs || (s.worst_index < 0 && d > 0)) {
      s.max_abs = d;
      s.worst_index = i;
    }
    if (tolerant ? d > tol.atol + tol.rtol * std::fabs(y) : d != 0) ++s.mismatched;
  }
  s.mean_abs = finite ? sum_abs / static_cast<double>(finite) : 0;
  if (norm_a == 0 && norm_b == 0) s.cosine = 1;
  else if (norm_a == 0 || norm_b == 0) s.cosine = 0;
  else s.cosine = dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
  if (one_sided >= 0) s.worst_index = one_sided;
  if (s.worst_index >= 0) {
    s.worst_a = ra(s.worst_index);
    s.worst_b = rb(s.worst_index);
    s.worst_coord = Coordinate(s.worst_index, b.shape(), complex);
  }
  return s;
}

double BreachScore(const ErrorStats& s) {
  if (!s.problem.empty()) return 1e300;
  if (s.mismatched == 0) return 0;
  const double share = static_cast<double>(s.mismatched) / static_cast<double>(std::max<int64_t>(1, s.elements));
  const double one_sided = static_cast<double>(s.nan_a != s.nan_b || s.inf_a != s.inf_b);
  return one_sided * 1e100 + share + s.max_abs;
}

std::pair<std::string, CompareTolerance> ParsePerOutputTolerance(const std::string& text, double fallback_rtol) {
  const size_t eq = text.rfind('=');
  const auto bad = [&](const std::string& why) {
    return InvalidArgumentError("--per-output: expected NAME=ATOL[,RTOL], got '" + text + "' (" + why + ")");
  };
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) throw bad("no NAME=");
  const std::string values = text.substr(eq + 1);
  const size_t comma = values.find(',');
  CompareTolerance tol;
  tol.rtol = fallback_rtol;
  const auto number = [&](const std::string& v) {
    const std::optional<double> d = ParseDouble(v);  // finite only
    if (!d || *d < 0) throw bad("'" + v + "' is not a tolerance >= 0");
    return *d;
  };
  tol.atol = number(values.substr(0, comma));
  if (comma != std::string::npos) tol.rtol = number(values.substr(comma + 1));
  return {text.substr(0, eq), tol};
}

}  // namespace ferry::tools
