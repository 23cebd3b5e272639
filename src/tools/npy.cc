#include "tools/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>

#include "core/regular_file.h"
#include "ferry/error.h"
#include "ferry/float16.h"

namespace ferry::tools {

static_assert(std::endian::native == std::endian::little, "npy.cc assumes a little-endian host");

namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// NumPy itself refuses headers over 10000 bytes by default; allow more, but never an unbounded allocation.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;
constexpr size_t kHeaderAlignment = 64;

[[noreturn]] void Fail(std::string_view source, const std::string& problem) {
  throw InvalidArgumentError("npy file '" + std::string(source) + "': " + problem);
}

enum class Kind { kPlain, kBool, kUnicode, kBytes };

struct Header {
  DataType dtype = DataType::kUndefined;
  Kind kind = Kind::kPlain;
  size_t itemsize = 0;  // bytes per element in the file
  bool swap = false;    // big-endian data
  Shape shape;
  int64_t count = 0;
  size_t data_offset = 0;
  uint64_t data_bytes = 0;
};

// ---- header parsing: a tiny parser for the Python dict literal NumPy writes ----

class DictParser {
 public:
  DictParser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool Consume(char c) {
    SkipSpace();
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  void Expect(char c, std::string_view what) {
    if (!Consume(c)) Error("expected '" + std::string(1, c) + "' " + std::string(what));
  }
  std::string String() {
    SkipSpace();
    char q = Peek();
    if (q != '\'' && q != '"') Error("expected a quoted string");
    size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos) Error("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    if (s.find('\\') != std::string::npos) Error("escape sequences in header strings are not supported");
    pos_ = end + 1;
    return s;
  }
  bool Bool() {
    SkipSpace();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    Error("expected True or False");
  }
  int64_t Int() {
    SkipSpace();
    if (Peek() == '-') Error("negative dimension in shape");
    if (Peek() < '0' || Peek() > '9') Error("expected an integer in shape");
    uint64_t v = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      uint64_t digit = static_cast<uint64_t>(Peek() - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
        Error("shape dimension does not fit in int64");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    if (Peek() == 'L' || Peek() == 'l') ++pos_;  // Python 2 long literal
    return static_cast<int64_t>(v);
  }
  Shape Tuple() {
    Expect('(', "to open the shape tuple");
    Shape shape;
    if (Consume(')')) return shape;
    while (true) {
      shape.push_back(Int());
      if (Consume(')')) break;
      Expect(',', "between shape dimensions");
      if (Consume(')')) break;  // trailing comma, as in "(5,)"
    }
    return shape;
  }
  [[noreturn]] void Error(const std::string& problem) const {
    Fail(source_, "bad header: " + problem + " at offset " + std::to_string(pos_) + " of header '" +
                      std::string(text_.substr(0, 200)) + "'");
  }

 private:
  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
};

// Parses a dtype descriptor such as "<f4", "|b1", "<U12", ">i8", "|S5".
void ParseDescr(const std::string& descr, std::string_view source, Header& h) {
  auto bad = [&](const std::string& why) { Fail(source, "unsupported dtype '" + descr + "': " + why); };
  if (descr.empty()) bad("empty descriptor");
  size_t i = 0;
  char order = '=';
  if (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') order = descr[i++];
  if (i >= descr.size()) bad("no type code");
  char code = descr[i++];
  std::string_view digits = std::string_view(descr).substr(i);
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    bad("expected a type code followed by a byte size");
  }
  uint64_t n = std::stoull(std::string(digits));
  h.swap = order == '>';
  switch (code) {
    case 'f':
      h.dtype = n == 2 ? DataType::kFloat16 : n == 4 ? DataType::kFloat : n == 8 ? DataType::kDouble
                                                                                    : DataType::kUndefined;
      break;
    case 'i':
      h.dtype = n == 1 ? DataType::kInt8 : n == 2 ? DataType::kInt16 : n == 4 ? DataType::kInt32
                                           : n == 8 ? DataType::kInt64 : DataType::kUndefined;
      break;
    case 'u':
      h.dtype = n == 1 ? DataType::kUint8 : n == 2 ? DataType::kUint16 : n == 4 ? DataType::kUint32
                                            : n == 8 ? DataType::kUint64 : DataType::kUndefined;
      break;
    case 'c':
      h.dtype = n == 8 ? DataType::kComplex64 : n == 16 ? DataType::kComplex128 : DataType::kUndefined;
      break;
    case 'b':
      if (n == 1) {
        h.dtype = DataType::kBool;
        h.kind = Kind::kBool;
      }
      break;
    case 'U':
      h.dtype = DataType::kString;
      h.kind = Kind::kUnicode;
      if (n > (uint64_t{1} << 40)) bad("string length is absurd");
      h.itemsize = static_cast<size_t>(n) * 4;
      return;
    case 'S':
      h.dtype = DataType::kString;
      h.kind = Kind::kBytes;
      if (n > (uint64_t{1} << 40)) bad("string length is absurd");
      h.itemsize = static_cast<size_t>(n);
      return;
    case 'O':
      bad("object arrays (pickled Python objects) are not supported");
    default:
      break;
  }
  if (h.dtype == DataType::kUndefined) bad("no Ferry type for this code and size");
  h.itemsize = static_cast<size_t>(n);
  if (h.itemsize > 1 && h.kind != Kind::kBool && order == '|') bad("'|' byte order on a multi-byte type");
}

// Parses the fixed preamble (magic, version, header length) and the dict. `prefix` must hold at least the
// preamble; `total_size` is the size of the whole file.
struct Preamble {
  int major = 0;
  size_t header_start = 0;
  size_t header_len = 0;
};

Preamble ParsePreamble(std::span<const uint8_t> prefix, uint64_t total_size, std::string_view source) {
  if (total_size < 8 || prefix.size() < 8 || std::memcmp(prefix.data(), kMagic, sizeof(kMagic)) != 0) {
    Fail(source, total_size < 8 ? "not a .npy file (only " + std::to_string(total_size) + " bytes)"
                                : "not a .npy file (bad magic string)");
  }
  Preamble p;
  p.major = prefix[6];
  int minor = prefix[7];
  if (p.major < 1 || p.major > 3 || minor != 0) {
    Fail(source, "unsupported .npy format version " + std::to_string(p.major) + "." + std::to_string(minor));
  }
  size_t len_bytes = p.major == 1 ? 2 : 4;
  p.header_start = 8 + len_bytes;
  if (total_size < p.header_start || prefix.size() < p.header_start) Fail(source, "truncated header length");
  uint64_t len = 0;
  for (size_t i = 0; i < len_bytes; ++i) len |= static_cast<uint64_t>(prefix[8 + i]) << (8 * i);
  if (len > kMaxHeaderBytes) Fail(source, "header length " + std::to_string(len) + " is absurd");
  if (total_size < p.header_start + len) {
    Fail(source, "truncated header: " + std::to_string(len) + " header bytes announced, file has " +
                     std::to_string(total_size - p.header_start));
  }
  p.header_len = static_cast<size_t>(len);
  return p;
}

Header ParseHeader(const Preamble& p, std::string_view text, uint64_t total_size, std::string_view source) {
  DictParser dict(text, source);
  dict.Expect('{', "to open the header dict");
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  while (!dict.Consume('}')) {
    std::string key = dict.String();
    dict.Expect(':', "after a key");
    if (key == "descr") {
      dict.SkipSpace();
      if (dict.Peek() == '[') dict.Error("structured dtypes are not supported");
      if (descr) dict.Error("duplicate key 'descr'");
      descr = dict.String();
    } else if (key == "fortran_order") {
      if (fortran) dict.Error("duplicate key 'fortran_order'");
      fortran = dict.Bool();
    } else if (key == "shape") {
      if (shape) dict.Error("duplicate key 'shape'");
      shape = dict.Tuple();
    } else {
      dict.Error("unexpected key '" + key + "'");
    }
    if (dict.Consume('}')) break;
    dict.Expect(',', "between header entries");
  }
  dict.SkipSpace();
  if (!dict.AtEnd()) dict.Error("trailing characters after the header dict");
  if (!descr || !fortran || !shape) {
    Fail(source, std::string("bad header: missing key '") + (!descr ? "descr" : !fortran ? "fortran_order" : "shape") +
                     "'");
  }
  if (*fortran) {
    Fail(source, "Fortran-order (column-major) arrays are not supported; save with np.ascontiguousarray");
  }

  Header h;
  ParseDescr(*descr, source, h);
  h.shape = std::move(*shape);
  h.count = 1;
  for (int64_t d : h.shape) {
    if (__builtin_mul_overflow(h.count, d, &h.count)) {
      Fail(source, "shape " + ShapeToString(h.shape) + " has more elements than fit in int64");
    }
  }
  h.data_offset = p.header_start + p.header_len;
  if (__builtin_mul_overflow(static_cast<uint64_t>(h.count), static_cast<uint64_t>(h.itemsize), &h.data_bytes)) {
    Fail(source, "shape " + ShapeToString(h.shape) + " of '" + *descr + "' needs more bytes than fit in 64 bits");
  }
  uint64_t have = total_size - h.data_offset;
  if (have < h.data_bytes) {
    Fail(source, "truncated data: shape " + ShapeToString(h.shape) + " of '" + *descr + "' needs " +
                     std::to_string(h.data_bytes) + " bytes, the file has " + std::to_string(have));
  }
  if (have > h.data_bytes) {
    Fail(source, "size mismatch: shape " + ShapeToString(h.shape) + " of '" + *descr + "' needs " +
                     std::to_string(h.data_bytes) + " bytes, the file has " + std::to_string(have) +
                     " (trailing bytes)");
  }
  return h;
}

Header ParseAll(std::span<const uint8_t> bytes, std::string_view source) {
  Preamble p = ParsePreamble(bytes, bytes.size(), source);
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + p.header_start), p.header_len);
  return ParseHeader(p, text, bytes.size(), source);
}

Tensor AllocateTensor(const Header& h, std::string_view source) {
  try {
    return Tensor(h.dtype, h.shape);
  } catch (const InvalidArgumentError&) {
    throw;
  } catch (const Error& e) {
    Fail(source, std::string("cannot allocate the tensor: ") + e.what());
  }
}

// Fixes up plain/bool data already copied into `t`: byte order and bool normalisation.
void FixupInPlace(const Header& h, Tensor& t) {
  auto* p = static_cast<uint8_t*>(t.raw_data());
  size_t n = static_cast<size_t>(h.count);
  if (h.kind == Kind::kBool) {
    for (size_t i = 0; i < n; ++i) p[i] = p[i] != 0;
    return;
  }
  if (!h.swap || h.itemsize == 1) return;
  // Complex numbers swap each component separately.
  size_t unit = (h.dtype == DataType::kComplex64 || h.dtype == DataType::kComplex128) ? h.itemsize / 2 : h.itemsize;
  size_t units = static_cast<size_t>(h.data_bytes) / unit;
  for (size_t i = 0; i < units; ++i) std::reverse(p + i * unit, p + (i + 1) * unit);
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

void DecodeStrings(const Header& h, std::span<const uint8_t> data, Tensor& t, std::string_view source) {
  std::string* out = t.strings();
  for (int64_t e = 0; e < h.count; ++e) {
    const uint8_t* item = data.data() + static_cast<size_t>(e) * h.itemsize;
    if (h.kind == Kind::kBytes) {
      size_t len = h.itemsize;
      while (len > 0 && item[len - 1] == 0) --len;  // NumPy strips trailing NULs
      out[e].assign(reinterpret_cast<const char*>(item), len);
      continue;
    }
    size_t chars = h.itemsize / 4;
    auto code_point = [&](size_t i) {
      const uint8_t* c = item + 4 * i;
      return h.swap ? (uint32_t{c[0]} << 24 | uint32_t{c[1]} << 16 | uint32_t{c[2]} << 8 | c[3])
                    : (uint32_t{c[3]} << 24 | uint32_t{c[2]} << 16 | uint32_t{c[1]} << 8 | c[0]);
    };
    while (chars > 0 && code_point(chars - 1) == 0) --chars;
    std::string s;
    s.reserve(chars);
    for (size_t i = 0; i < chars; ++i) {
      uint32_t cp = code_point(i);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        Fail(source, "string element " + std::to_string(e) + " holds an invalid code point " + std::to_string(cp));
      }
      AppendUtf8(s, cp);
    }
    out[e] = std::move(s);
  }
}

Tensor Decode(const Header& h, std::span<const uint8_t> data, std::string_view source) {
  Tensor t = AllocateTensor(h, source);
  if (h.kind == Kind::kUnicode || h.kind == Kind::kBytes) {
    DecodeStrings(h, data, t, source);
  } else {
    if (h.data_bytes > 0) std::memcpy(t.raw_data(), data.data(), static_cast<size_t>(h.data_bytes));
    FixupInPlace(h, t);
  }
  return t;
}

// ---- writing ----

// Decodes UTF-8 strictly into code points.
std::vector<uint32_t> Utf8ToCodePoints(const std::string& s, int64_t element) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  auto bad = [&]() -> void {
    throw InvalidArgumentError("cannot write string element " + std::to_string(element) +
                               " to .npy: it is not valid UTF-8");
  };
  size_t i = 0;
  while (i < s.size()) {
    auto b0 = static_cast<uint8_t>(s[i]);
    size_t len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xe ? 3 : (b0 >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) bad();
    uint32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1fu) : len == 3 ? (b0 & 0x0fu) : (b0 & 0x07u);
    for (size_t k = 1; k < len; ++k) {
      auto b = static_cast<uint8_t>(s[i + k]);
      if ((b & 0xc0) != 0x80) bad();
      cp = (cp << 6) | (b & 0x3fu);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) bad();
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string BuildHeader(const std::string& descr, const Shape& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1) dict += ",";
  dict += "), }";
  int major = 1;
  size_t preamble = 10;
  if (dict.size() + 1 + preamble + kHeaderAlignment > 65535) {
    major = 2;
    preamble = 12;
  }
  size_t total = preamble + dict.size() + 1;  // +1 for the final '\n'
  size_t padded = (total + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(reinterpret_cast<const char*>(kMagic), sizeof(kMagic));
  out += static_cast<char>(major);
  out += '\0';
  size_t len = dict.size();
  for (size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + dict;
}

// The descriptor and, when the tensor's bytes cannot be written as they are, the converted payload.
struct Encoded {
  std::string descr;
  bool direct = true;  // write tensor.raw_data() as is
  std::vector<uint8_t> payload;
};

Encoded Encode(const Tensor& t) {
  Encoded e;
  size_t n = static_cast<size_t>(t.size());
  auto unpack_subbyte = [&](int bits, bool is_signed) {
    e.direct = false;
    e.payload.resize(n);
    const auto* src = static_cast<const uint8_t*>(t.raw_data());
    int per_byte = 8 / bits;
    uint32_t mask = (1u << bits) - 1;
    for (size_t i = 0; i < n; ++i) {
      uint32_t v = (src[i / per_byte] >> ((i % per_byte) * bits)) & mask;
      if (is_signed && (v >> (bits - 1))) v |= ~mask;  // sign-extend
      e.payload[i] = static_cast<uint8_t>(v);
    }
  };
  switch (t.dtype()) {
    case DataType::kFloat: e.descr = "<f4"; break;
    case DataType::kDouble: e.descr = "<f8"; break;
    case DataType::kFloat16: e.descr = "<f2"; break;
    case DataType::kInt8: e.descr = "|i1"; break;
    case DataType::kInt16: e.descr = "<i2"; break;
    case DataType::kInt32: e.descr = "<i4"; break;
    case DataType::kInt64: e.descr = "<i8"; break;
    case DataType::kUint8: e.descr = "|u1"; break;
    case DataType::kUint16: e.descr = "<u2"; break;
    case DataType::kUint32: e.descr = "<u4"; break;
    case DataType::kUint64: e.descr = "<u8"; break;
    case DataType::kBool: e.descr = "|b1"; break;
    case DataType::kComplex64: e.descr = "<c8"; break;
    case DataType::kComplex128: e.descr = "<c16"; break;
    case DataType::kBFloat16: {
      // NumPy has no bfloat16: widen to float32, which holds every bfloat16 value exactly.
      e.descr = "<f4";
      e.direct = false;
      e.payload.resize(n * 4);
      const auto* src = t.data<BFloat16>();
      for (size_t i = 0; i < n; ++i) {
        float f = static_cast<float>(src[i]);
        std::memcpy(e.payload.data() + 4 * i, &f, 4);
      }
      break;
    }
    case DataType::kInt4: e.descr = "|i1"; unpack_subbyte(4, true); break;
    case DataType::kUint4: e.descr = "|u1"; unpack_subbyte(4, false); break;
    case DataType::kInt2: e.descr = "|i1"; unpack_subbyte(2, true); break;
    case DataType::kUint2: e.descr = "|u1"; unpack_subbyte(2, false); break;
    case DataType::kString: {
      std::vector<std::vector<uint32_t>> cps(n);
      size_t width = 1;  // NumPy's minimum, as for np.array([''])
      for (size_t i = 0; i < n; ++i) {
        cps[i] = Utf8ToCodePoints(t.strings()[i], static_cast<int64_t>(i));
        width = std::max(width, cps[i].size());
      }
      if (width > (size_t{1} << 30) || (n > 0 && width * 4 > (size_t{1} << 46) / n)) {
        throw InvalidArgumentError("string tensor is too large to write as .npy");
      }
      e.descr = "<U" + std::to_string(width);
      e.direct = false;
      e.payload.assign(n * width * 4, 0);
      for (size_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < cps[i].size(); ++k) std::memcpy(e.payload.data() + (i * width + k) * 4, &cps[i][k], 4);
      }
      break;
    }
    default:
      throw InvalidArgumentError("cannot write a " + std::string(DataTypeName(t.dtype())) +
                                 " tensor as .npy: NumPy has no such type");
  }
  return e;
}

}  // namespace

Tensor ParseNpy(std::span<const uint8_t> bytes, std::string_view source) {
  Header h = ParseAll(bytes, source);
  return Decode(h, bytes.subspan(h.data_offset), source);
}

Tensor ReadNpy(const std::string& path) {
  // Only a regular file is read, and anything else is refused without blocking (core/regular_file.h).
  RegularFile file = RegularFile::Open(path);
  if (!file.ok()) Fail(path, file.error());
  const uint64_t total = file.size();
  auto read_exact = [&](uint64_t offset, void* dst, uint64_t bytes, const char* what) {
    if (bytes == 0) return;
    const std::string err = file.ReadAt(offset, dst, static_cast<size_t>(bytes));
    if (!err.empty()) Fail(path, std::string("cannot read ") + what + ": " + err);
  };

  std::vector<uint8_t> prefix(static_cast<size_t>(std::min<uint64_t>(total, 12)));
  read_exact(0, prefix.data(), prefix.size(), "the preamble");
  Preamble p = ParsePreamble(prefix, total, path);
  std::string text(p.header_len, '\0');
  read_exact(p.header_start, text.data(), text.size(), "the header");
  Header h = ParseHeader(p, text, total, path);  // the data size is checked against the file's before allocating

  if (h.kind == Kind::kUnicode || h.kind == Kind::kBytes) {
    std::vector<uint8_t> data(static_cast<size_t>(h.data_bytes));
    read_exact(h.data_offset, data.data(), h.data_bytes, "the data");
    return Decode(h, data, path);
  }
  Tensor t = AllocateTensor(h, path);
  read_exact(h.data_offset, t.raw_data(), h.data_bytes, "the data");
  FixupInPlace(h, t);
  return t;
}

std::vector<uint8_t> EncodeNpy(const Tensor& tensor) {
  if (!tensor.defined()) throw InvalidArgumentError("cannot write an undefined tensor as .npy");
  Encoded e = Encode(tensor);
  std::string header = BuildHeader(e.descr, tensor.shape());
  std::vector<uint8_t> out(header.begin(), header.end());
  if (e.direct) {
    const auto* p = static_cast<const uint8_t*>(tensor.raw_data());
    out.insert(out.end(), p, p + tensor.nbytes());
  } else {
    out.insert(out.end(), e.payload.begin(), e.payload.end());
  }
  return out;
}

void WriteNpy(const std::string& path, const Tensor& tensor) {
  if (!tensor.defined()) throw InvalidArgumentError("cannot write an undefined tensor to '" + path + "'");
  Encoded e = Encode(tensor);
  std::string header = BuildHeader(e.descr, tensor.shape());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InvalidArgumentError("npy file '" + path + "': cannot open for writing");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (e.direct) {
    out.write(static_cast<const char*>(tensor.raw_data()), static_cast<std::streamsize>(tensor.nbytes()));
  } else {
    out.write(reinterpret_cast<const char*>(e.payload.data()), static_cast<std::streamsize>(e.payload.size()));
  }
  out.close();
  if (!out) throw InvalidArgumentError("npy file '" + path + "': write failed");
}

}  // namespace ferry::tools
