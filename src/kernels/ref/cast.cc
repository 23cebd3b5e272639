// Cast (opsets 1, 6, 9, 13, 19, 21, 23, 24, 25) and CastLike (15, 19, 21, 23, 24, 25): element type conversion
// between every non-complex ONNX type.
//
// Rules (ONNX spec and its reference implementation / test data):
//  - float -> integer truncates toward zero and wraps to the target width (NaN and values outside int64 give
//    INT64_MIN first, as x86 does); this includes int4/uint4/int2/uint2, which wrap (-9 -> int4 7).
//  - -> bool: x != 0. bool -> number: 0/1.
//  - -> float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz): round to nearest even; `saturate` (default 1) clamps
//    out-of-range values and infinities to the largest finite value, else they become inf (e5m2) or NaN.
//  - -> float4e2m1: round to nearest even, always saturating; NaN -> 0x8.
//  - -> float8e8m0: `round_mode` up (default) / down / nearest, `saturate` as above; the sign is ignored.
//  - string -> number: plain or scientific notation; "INF", "+INF", "-INF", "NaN" in any case.
//  - number -> string: integers in decimal; floats as the shortest string that round-trips in the source
//    type, positional for 1e-4 <= |x| < 1e16 (with ".0" when integral) else scientific ("1e-05"), as numpy
//    prints; NaN -> "NaN", infinities -> "INF"/"-INF"; bool -> "True"/"False".
// The conversion itself (CastRange, CastElements) is declared in cast_convert.h: the cpu kernels call it too.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/float8.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/cast_convert.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// ---- strings ----------------------------------------------------------------------------------------------

bool EqualsNoCase(const std::string& s, const char* word) {
  size_t n = std::strlen(word);
  if (s.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != word[i]) return false;
  }
  return true;
}

// Parses a floating point literal; unparsable text gives NaN.
template <typename F>
F ParseFloating(const std::string& s) {
  const char* begin = s.c_str();
  char* end = nullptr;
  F v;
  if constexpr (std::is_same_v<F, float>) {
    v = std::strtof(begin, &end);
  } else {
    v = std::strtod(begin, &end);
  }
  if (end == begin) return std::numeric_limits<F>::quiet_NaN();
  return v;
}

// Parses an integer literal (falls back to a float literal truncated toward zero); unparsable text gives 0.
template <typename I>
I ParseInteger(const std::string& s) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(*b))) ++b;
  if (b < e && *b == '+') ++b;
  using Wide = std::conditional_t<std::is_signed_v<I>, int64_t, uint64_t>;
  Wide w = 0;
  auto [p, ec] = std::from_chars(b, e, w);
  if (ec == std::errc() && (p == e || std::isspace(static_cast<unsigned char>(*p)))) return static_cast<I>(w);
  double d = ParseFloating<double>(s);
  if (std::isnan(d)) return 0;
  return FloatToIntWrap<I>(d);
}

bool ParseBool(const std::string& s) {
  if (EqualsNoCase(s, "true")) return true;
  if (EqualsNoCase(s, "false")) return false;
  double d = ParseFloating<double>(s);
  return !std::isnan(d) && d != 0;
}

// numpy-style text for a finite non-zero value given its shortest scientific form ("d.ddde+XX").
std::string FormatFromScientific(const char* sci) {
  std::string s(sci);
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.erase(0, 1);
  size_t epos = s.find('e');
  int exp = std::atoi(s.c_str() + epos + 1);
  std::string digits;
  for (size_t i = 0; i < epos; ++i) {
    if (s[i] != '.') digits += s[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return out + buf;
}

// Shortest text that converts back to the same value of the source type. `same(parsed)` tells whether a
// parsed float equals the value in the source type (used for types narrower than float).
template <typename Same>
std::string FormatNarrowFloat(float v, Same same) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  for (int p = 0; p <= 9; ++p) {
    auto r = std::to_chars(buf, buf + sizeof(buf) - 1, v, std::chars_format::scientific, p);
    *r.ptr = '\0';
    if (same(std::strtof(buf, nullptr)) || p == 9) break;
  }
  return FormatFromScientific(buf);
}

template <typename F>
std::string FormatFloat(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf) - 1, v, std::chars_format::scientific);  // shortest round trip
  *r.ptr = '\0';
  return FormatFromScientific(buf);
}

template <typename S>
std::string ToText(const S& v) {
  if constexpr (std::is_same_v<S, std::string>) {
    return v;
  } else if constexpr (std::is_same_v<S, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    return FormatFloat(v);
  } else if constexpr (kIsHalf<S>) {
    return FormatNarrowFloat(static_cast<float>(v), [&](float f) { return S(f).bits == v.bits; });
  } else {
    return std::to_string(v);
  }
}

// ---- scalar conversion between the standard C++ element types ---------------------------------------------

template <typename D, typename S>
D Convert(const S& v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<D, std::string>) {
    return ToText(v);
  } else if constexpr (std::is_same_v<S, std::string>) {
    if constexpr (std::is_same_v<D, bool>) {
      return ParseBool(v);
    } else if constexpr (std::is_integral_v<D>) {
      return ParseInteger<D>(v);
    } else if constexpr (std::is_same_v<D, double>) {
      return ParseFloating<double>(v);
    } else {
      return static_cast<D>(ParseFloating<float>(v));
    }
  } else {
    return ConvertNumber<D>(v);
  }
}

template <typename S>
double ToDouble(const S& v) {
  if constexpr (std::is_same_v<S, std::string>) {
    return ParseFloating<double>(v);
  } else {
    return static_cast<double>(static_cast<Acc<S>>(v));
  }
}

template <typename S>
int64_t ToInt64(const S& v) {
  if constexpr (std::is_same_v<S, std::string>) {
    return ParseInteger<int64_t>(v);
  } else if constexpr (std::is_integral_v<S>) {
    return static_cast<int64_t>(v);
  } else {
    return FloatToIntWrap<int64_t>(static_cast<double>(static_cast<Acc<S>>(v)));
  }
}

bool IsSubByteInt(DataType t) {
  return t == DataType::kInt4 || t == DataType::kUint4 || t == DataType::kInt2 || t == DataType::kUint2;
}

// Writes get(i) for i in [begin, end) into `out` (type dst). get(i) returns a standard element value.
template <typename Get>
void StoreRange(DataType dst, void* out, int64_t begin, int64_t end, const CastOptions& opt, Get get) {
  if (const int per_byte = PackedPerByte(dst)) {
    const int64_t first = begin / per_byte, last = (end + per_byte - 1) / per_byte;
    if (last > first) std::memset(static_cast<uint8_t*>(out) + first, 0, static_cast<size_t>(last - first));
    const int bits = DataTypeBits(dst);
    if (dst == DataType::kFloat4E2M1) {
      for (int64_t i = begin; i < end; ++i) WriteSubByte(out, 4, i, DoubleToFloat4E2M1(ToDouble(get(i))));
    } else {
      for (int64_t i = begin; i < end; ++i) WriteSubByte(out, bits, i, IntToSubByte(dst, ToInt64(get(i))));
    }
    return;
  }
  if (IsSmallFloat(dst)) {
    uint8_t* p = static_cast<uint8_t*>(out);
    for (int64_t i = begin; i < end; ++i) p[i] = DoubleToSmallFloat(dst, ToDouble(get(i)), opt.saturate, opt.round);
    return;
  }
  Dispatch(AllTypes{}, dst, "Cast", [&](auto tag) {
    using D = decltype(tag);
    D* p = static_cast<D*>(out);
    for (int64_t i = begin; i < end; ++i) p[i] = Convert<D>(get(i));
  });
}

}  // namespace

int PackedPerByte(DataType t) {
  return IsSubByteInt(t) || t == DataType::kFloat4E2M1 ? 8 / DataTypeBits(t) : 0;
}

void CastRange(DataType src, const void* in, DataType dst, void* out, int64_t begin, int64_t end,
               const CastOptions& opt) {
  if (IsSubByteInt(src)) {
    const int bits = DataTypeBits(src);
    StoreRange(dst, out, begin, end, opt, [&](int64_t i) { return SubByteToInt(src, ReadSubByte(in, bits, i)); });
  } else if (src == DataType::kFloat4E2M1) {
    StoreRange(dst, out, begin, end, opt, [&](int64_t i) { return Float4E2M1ToFloat(ReadSubByte(in, 4, i)); });
  } else if (IsSmallFloat(src)) {
    const uint8_t* p = static_cast<const uint8_t*>(in);
    StoreRange(dst, out, begin, end, opt, [&](int64_t i) { return SmallFloatToFloat(src, p[i]); });
  } else {
    Dispatch(AllTypes{}, src, "Cast", [&](auto tag) {
      using S = decltype(tag);
      const S* p = static_cast<const S*>(in);
      StoreRange(dst, out, begin, end, opt, [p](int64_t i) -> const S& { return p[i]; });
    });
  }
}

void CastElements(int threads, DataType src, const void* in, DataType dst, void* out, int64_t n,
                  const CastOptions& opt) {
  // Chunks of whole 4-element blocks: a byte boundary of every packed type.
  constexpr int64_t kBlock = 4;
  ParallelFor(threads, (n + kBlock - 1) / kBlock, kElementwiseGrain / kBlock, [&](int64_t s, int64_t e) {
    CastRange(src, in, dst, out, s * kBlock, std::min(e * kBlock, n), opt);
  });
}

bool Castable(DataType t) {
  return IsKnownDataType(static_cast<int32_t>(t)) && t != DataType::kComplex64 && t != DataType::kComplex128;
}

CastOptions ReadCastOptions(const ir::Node& node) {
  CastOptions opt;
  opt.saturate = node.GetInt("saturate", 1) != 0;
  std::string mode = node.GetString("round_mode", "up");
  if (!ParseE8M0Rounding(mode.c_str(), &opt.round)) {
    throw InvalidModelError(node.Describe() + ": round_mode must be \"up\", \"down\" or \"nearest\", got \"" + mode +
                            "\"");
  }
  return opt;
}

namespace {

// Checks input 0 and declares the output: input 0's buffer when it already has type `to`.
void PrepareCast(PrepareContext& ctx, DataType to) {
  const InputSpec& in = ctx.tensor_input(0);
  if (!Castable(in.dtype)) {
    throw UnsupportedError(ctx.Describe() + ": cannot cast from " + std::string(DataTypeName(in.dtype)) + " (" +
                           ctx.InputString(0) + ")");
  }
  ctx.SetOutput(0, to, in.shape);
  if (in.dtype == to) ctx.output(0).view_of = 0;
}

void RunCast(KernelContext& ctx, const Tensor& in, DataType to, const CastOptions& opt) {
  if (in.dtype() == to) {
    ctx.SetOutput(0, Value(in));  // same type: share the buffer
    return;
  }
  Tensor& out = ctx.Output(0);
  CastElements(ctx.threads(), in.dtype(), in.raw_data(), to, out.raw_data(), in.size(), opt);
}

class Cast : public OpKernel {
 public:
  explicit Cast(const ir::Node& node) : opt_(ReadCastOptions(node)) {
    const ir::Attribute& a = node.RequireAttr("to");
    if (a.type == ir::AttrType::kString) {  // opset 1 names the type ("FLOAT", "INT64", ...)
      std::string name;
      for (char c : a.s) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto t = DataTypeFromName(name);
      if (!t) throw InvalidModelError(node.Describe() + ": unknown type name \"" + a.s + "\" in attribute 'to'");
      to_ = *t;
    } else {
      to_ = static_cast<DataType>(node.GetInt("to", 0));
    }
    if (!Castable(to_)) {
      throw InvalidModelError(node.Describe() + ": attribute 'to' = " + std::to_string(static_cast<int>(to_)) +
                              " is not a castable data type");
    }
  }
  void Prepare(PrepareContext& ctx) const override { PrepareCast(ctx, to_); }
  void Compute(KernelContext& ctx) const override { RunCast(ctx, ctx.required_input(0), to_, opt_); }

 private:
  CastOptions opt_;
  DataType to_;
};

class CastLike : public OpKernel {
 public:
  explicit CastLike(const ir::Node& node) : opt_(ReadCastOptions(node)) {}
  void Prepare(PrepareContext& ctx) const override {
    ctx.tensor_input(0);
    const InputSpec& target = ctx.tensor_input(1);
    if (!Castable(target.dtype)) {
      throw UnsupportedError(ctx.Describe() + ": cannot cast to " + std::string(DataTypeName(target.dtype)) + " (" +
                             ctx.InputString(1) + ")");
    }
    PrepareCast(ctx, target.dtype);
  }
  void Compute(KernelContext& ctx) const override {
    RunCast(ctx, ctx.required_input(0), ctx.required_input(1).dtype(), opt_);
  }

 private:
  CastOptions opt_;
};

std::vector<DataType> CastTypes() {
  std::vector<DataType> out;
  for (DataType t : dtypes::All()) {
    if (Castable(t)) out.push_back(t);
  }
  return out;
}

}  // namespace

void RegisterCastKernels(KernelRegistry& r) {
  // One kernel serves every version: each version only widens the type set (string 9, bfloat16 13, float8 +
  // saturate 19, int4/uint4 21, float4e2m1 23, float8e8m0 + round_mode 24, int2/uint2 25).
  r.Add({.op = "Cast", .since = 1, .types = {{"T1", CastTypes()}, {"T2", CastTypes()}}, .create = MakeKernel<Cast>});
  r.Add({.op = "CastLike",
         .since = 15,
         .types = {{"T1", CastTypes()}, {"T2", CastTypes()}},
         .create = MakeKernel<CastLike>});
}

}  // namespace ferry::ref
