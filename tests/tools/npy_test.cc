#include "tools/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/float16.h"
#include "ferry/tensor.h"

namespace ferry::tools {
namespace {

std::vector<uint8_t> Bytes(std::string_view s) { return {s.begin(), s.end()}; }

// A hand-built file: magic, version, little-endian header length, header text, data.
std::vector<uint8_t> MakeFile(std::string_view header, std::string_view data, int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  size_t len = header.size();
  int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;
  out += data;
  return Bytes(out);
}

std::string ErrorOf(std::span<const uint8_t> bytes) {
  try {
    ParseNpy(bytes, "case.npy");
  } catch (const InvalidArgumentError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "no error";
}

template <typename T>
Tensor Iota(DataType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<T>()[i] = static_cast<T>(i * 3 - 5);
  return t;
}

void ExpectSameBytes(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

std::string Header(const std::vector<uint8_t>& file) {
  size_t len = file[8] | (file[9] << 8);
  return std::string(file.begin() + 10, file.begin() + 10 + static_cast<std::ptrdiff_t>(len));
}

TEST(Npy, RoundTripsEveryNumericType) {
  Shape shape = {2, 3, 4};
  std::vector<std::pair<Tensor, std::string>> cases = {
      {Iota<float>(DataType::kFloat, shape), "<f4"},
      {Iota<double>(DataType::kDouble, shape), "<f8"},
      {Iota<int8_t>(DataType::kInt8, shape), "|i1"},
      {Iota<int16_t>(DataType::kInt16, shape), "<i2"},
      {Iota<int32_t>(DataType::kInt32, shape), "<i4"},
      {Iota<int64_t>(DataType::kInt64, shape), "<i8"},
      {Iota<uint8_t>(DataType::kUint8, shape), "|u1"},
      {Iota<uint16_t>(DataType::kUint16, shape), "<u2"},
      {Iota<uint32_t>(DataType::kUint32, shape), "<u4"},
      {Iota<uint64_t>(DataType::kUint64, shape), "<u8"},
      {Iota<float>(DataType::kComplex64, {2, 3, 2}), "<c8"},
      {Iota<double>(DataType::kComplex128, {2, 3, 2}), "<c16"},
  };
  Tensor half(DataType::kFloat16, shape);
  for (int64_t i = 0; i < half.size(); ++i) half.data<Float16>()[i] = Float16(static_cast<float>(i) * 0.25f - 1);
  cases.emplace_back(half, "<f2");
  Tensor flags(DataType::kBool, shape);
  for (int64_t i = 0; i < flags.size(); ++i) flags.data<uint8_t>()[i] = i % 3 == 0;
  cases.emplace_back(flags, "|b1");

  for (const auto& [tensor, descr] : cases) {
    SCOPED_TRACE(std::string(DataTypeName(tensor.dtype())));
    std::vector<uint8_t> file = EncodeNpy(tensor);
    EXPECT_EQ(file.size() % 64, tensor.nbytes() % 64);  // header padded to 64 bytes
    EXPECT_NE(Header(file).find("'descr': '" + descr + "'"), std::string::npos) << Header(file);
    ExpectSameBytes(ParseNpy(file), tensor);
  }
}

TEST(Npy, HeaderMatchesNumpy) {
  // np.save of np.zeros((2, 3), np.float32) writes exactly this header.
  Tensor t(DataType::kFloat, {2, 3});
  std::vector<uint8_t> file = EncodeNpy(t);
  std::string header = Header(file);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(" \n") + 1),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ((10 + header.size()) % 64, 0u);
  EXPECT_NE(Header(EncodeNpy(Tensor(DataType::kFloat, {5}))).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(Header(EncodeNpy(Tensor(DataType::kFloat, {}))).find("'shape': ()"), std::string::npos);
}

TEST(Npy, ScalarsAndEmptyTensors) {
  Tensor scalar(DataType::kDouble, {});
  scalar.data<double>()[0] = 2.5;
  ExpectSameBytes(ParseNpy(EncodeNpy(scalar)), scalar);
  for (const Shape& shape : {Shape{0}, Shape{3, 0, 2}, Shape{0, 1000000000000}}) {
    Tensor empty(DataType::kInt64, shape);
    Tensor back = ParseNpy(EncodeNpy(empty));
    EXPECT_EQ(back.shape(), shape);
    EXPECT_EQ(back.size(), 0);
  }
}

TEST(Npy, StringsRoundTripAsUnicode) {
  Tensor t = Tensor::FromVector<std::string>(DataType::kString, {2, 2},
                                             {"hello", "", "gr\xc3\xbc\xc3\x9f" "e", "\xf0\x9f\x98\x80 x"});
  std::vector<uint8_t> file = EncodeNpy(t);
  EXPECT_NE(Header(file).find("'descr': '<U5'"), std::string::npos) << Header(file);
  Tensor back = ParseNpy(file);
  ASSERT_EQ(back.dtype(), DataType::kString);
  ASSERT_EQ(back.shape(), t.shape());
  for (int64_t i = 0; i < t.size(); ++i) EXPECT_EQ(back.strings()[i], t.strings()[i]);
  // An all-empty tensor is written as '<U1', like np.array(['']).
  Tensor blank(DataType::kString, {3});
  EXPECT_NE(Header(EncodeNpy(blank)).find("'<U1'"), std::string::npos);
  EXPECT_EQ(ParseNpy(EncodeNpy(blank)).strings()[2], "");
}

TEST(Npy, ReadsNumpyUnicodeAndBytesStrings) {
  // np.array(['ab', 'c']) -> '<U2'; trailing NULs are padding.
  std::string u("a\0\0\0b\0\0\0c\0\0\0\0\0\0\0", 16);
  Tensor t = ParseNpy(MakeFile("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }\n", u));
  ASSERT_EQ(t.dtype(), DataType::kString);
  EXPECT_EQ(t.strings()[0], "ab");
  EXPECT_EQ(t.strings()[1], "c");
  // Big-endian UCS-4.
  std::string be("\0\0\0x\0\0\x01\x00", 8);
  Tensor b = ParseNpy(MakeFile("{'descr': '>U2', 'fortran_order': False, 'shape': (1,), }\n", be));
  EXPECT_EQ(b.strings()[0], "x\xc4\x80");
  // Byte strings.
  Tensor s =
      ParseNpy(MakeFile("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }\n", std::string("xy\0pqr", 6)));
  EXPECT_EQ(s.strings()[0], "xy");
  EXPECT_EQ(s.strings()[1], "pqr");
  // Invalid code point.
  std::string bad("\xff\xff\xff\x7f", 4);
  EXPECT_NE(ErrorOf(MakeFile("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }\n", bad))
                .find("invalid code point"),
            std::string::npos);
}

TEST(Npy, RefusesInvalidUtf8OnWrite) {
  Tensor t = Tensor::FromVector<std::string>(DataType::kString, {1}, {"ok\xff"});
  EXPECT_THROW(EncodeNpy(t), InvalidArgumentError);
}

TEST(Npy, WidensTypesNumpyLacks) {
  Tensor bf(DataType::kBFloat16, {3});
  bf.data<BFloat16>()[0] = BFloat16(1.5f);
  bf.data<BFloat16>()[1] = BFloat16(-2.0f);
  bf.data<BFloat16>()[2] = BFloat16(3.140625f);
  Tensor f = ParseNpy(EncodeNpy(bf));
  ASSERT_EQ(f.dtype(), DataType::kFloat);
  EXPECT_EQ(f.data<float>()[0], 1.5f);
  EXPECT_EQ(f.data<float>()[1], -2.0f);
  EXPECT_EQ(f.data<float>()[2], 3.140625f);

  Tensor i4(DataType::kInt4, {3});
  i4.data<uint8_t>()[0] = 0x97;  // elements 0 (low nibble) = 7, 1 = -7 (0x9)
  i4.data<uint8_t>()[1] = 0x08;  // element 2 = -8
  Tensor i8 = ParseNpy(EncodeNpy(i4));
  ASSERT_EQ(i8.dtype(), DataType::kInt8);
  EXPECT_EQ(i8.data<int8_t>()[0], 7);
  EXPECT_EQ(i8.data<int8_t>()[1], -7);
  EXPECT_EQ(i8.data<int8_t>()[2], -8);

  Tensor u2(DataType::kUint2, {5});
  u2.data<uint8_t>()[0] = 0b11100100;  // 0, 1, 2, 3
  u2.data<uint8_t>()[1] = 0b00000010;  // 2
  Tensor u8 = ParseNpy(EncodeNpy(u2));
  ASSERT_EQ(u8.dtype(), DataType::kUint8);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(u8.data<uint8_t>()[i], i);
  EXPECT_EQ(u8.data<uint8_t>()[4], 2);

  EXPECT_THROW(EncodeNpy(Tensor(DataType::kFloat8E4M3FN, {2})), InvalidArgumentError);
  EXPECT_THROW(EncodeNpy(Tensor()), InvalidArgumentError);
}

TEST(Npy, ReadsAllFormatVersionsAndByteOrders) {
  std::string data("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  for (int major : {1, 2, 3}) {
    Tensor t = ParseNpy(MakeFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", data, major));
    EXPECT_EQ(t.data<int32_t>()[1], 2) << "version " << major;
  }
  // Keys in another order, double quotes, no trailing comma, Python 2 long.
  Tensor t = ParseNpy(MakeFile("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i4\"}", data));
  EXPECT_EQ(t.shape(), Shape{2});
  Tensor be = ParseNpy(MakeFile("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n",
                                std::string("\x00\x00\x00\x01\x00\x00\x01\x00", 8)));
  EXPECT_EQ(be.data<int32_t>()[0], 1);
  EXPECT_EQ(be.data<int32_t>()[1], 256);
  Tensor bef = ParseNpy(MakeFile("{'descr': '>f8', 'fortran_order': False, 'shape': (), }\n",
                                 std::string("\x3f\xf8\x00\x00\x00\x00\x00\x00", 8)));
  EXPECT_EQ(bef.data<double>()[0], 1.5);
  // Bools other than 0/1 are normalised.
  Tensor b = ParseNpy(
      MakeFile("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n", std::string("\x05\x00", 2)));
  EXPECT_EQ(b.data<uint8_t>()[0], 1);
  EXPECT_EQ(b.data<uint8_t>()[1], 0);
}

TEST(Npy, RejectsBadFiles) {
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  const std::string data(8, '\0');
  struct Case {
    std::vector<uint8_t> bytes;
    std::string expect;
  };
  std::vector<Case> cases = {
      {Bytes(""), "not a .npy file"},
      {Bytes("\x93NUMP"), "not a .npy file"},
      {Bytes("PK\x03\x04 this is a zip file"), "bad magic"},
      {MakeFile(ok_header, data, 4), "unsupported .npy format version 4.0"},
      {Bytes(std::string("\x93NUMPY\x01\x00", 8)), "truncated header length"},
      {Bytes(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18)), "truncated header"},
      {Bytes(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12)), "header length"},
      {MakeFile(ok_header, data.substr(0, 7)), "truncated data"},
      {MakeFile(ok_header, data + "x"), "trailing bytes"},
      {MakeFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", data), "Fortran"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False}", data), "missing key 'shape'"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data), "unexpected key"},
      {MakeFile("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data), "duplicate"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data), "negative"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", data), "bad header"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } junk", data), "trailing characters"},
      {MakeFile("'descr': '<f4'", data), "bad header"},
      {MakeFile("{'descr': '<f4, 'fortran_order': False, 'shape': (2,) }", data), "bad header"},
      {MakeFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,) }", data), "structured"},
      {MakeFile("{'descr': '|O', 'fortran_order': False, 'shape': (2,) }", data), "unsupported dtype"},
      {MakeFile("{'descr': '|O8', 'fortran_order': False, 'shape': (2,) }", data), "object arrays"},
      {MakeFile("{'descr': '<f3', 'fortran_order': False, 'shape': (2,) }", data), "unsupported dtype"},
      {MakeFile("{'descr': '<V8', 'fortran_order': False, 'shape': (1,) }", data), "unsupported dtype"},
      {MakeFile("{'descr': '|f4', 'fortran_order': False, 'shape': (2,) }", data), "byte order"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,) }", data), "int64"},
      // Absurd shapes: must be refused from the file size, before any allocation.
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000, 1000000) }", data),
       "truncated data"},
      {MakeFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296) }", data),
       "more elements than fit in int64"},
      {MakeFile("{'descr': '<c16', 'fortran_order': False, 'shape': (4611686018427387904,) }", data),
       "more bytes than fit"},
      {MakeFile("{'descr': '<U99999999999999', 'fortran_order': False, 'shape': (1,) }", data), "absurd"},
  };
  for (const auto& c : cases) {
    std::string error = ErrorOf(c.bytes);
    EXPECT_NE(error.find(c.expect), std::string::npos)
        << "expected '" << c.expect << "' in: " << error << "\nfor: " << std::string(c.bytes.begin(), c.bytes.end());
    EXPECT_NE(error.find("case.npy"), std::string::npos) << error;
  }
}

TEST(Npy, EveryTruncationOfAValidFileIsRejected) {
  Tensor t = Iota<int16_t>(DataType::kInt16, {3, 5});
  std::vector<uint8_t> file = EncodeNpy(t);
  for (size_t n = 0; n < file.size(); ++n) {
    std::span<const uint8_t> prefix(file.data(), n);
    EXPECT_THROW(ParseNpy(prefix), InvalidArgumentError) << "prefix of " << n << " bytes";
  }
  // Flipping any single header byte must never crash (it may still parse, e.g. a space becoming a tab).
  size_t header_end = file.size() - t.nbytes();
  for (size_t i = 0; i < header_end; ++i) {
    std::vector<uint8_t> bad = file;
    bad[i] ^= 0x5a;
    try {
      ParseNpy(bad);
    } catch (const InvalidArgumentError&) {
    }
  }
}

TEST(Npy, FilesOnDisk) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ferry_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "x.npy").string();
  Tensor t = Iota<float>(DataType::kFloat, {4, 4});
  WriteNpy(path, t);
  ExpectSameBytes(ReadNpy(path), t);
  Tensor s = Tensor::FromVector<std::string>(DataType::kString, {2}, {"a", "bcd"});
  WriteNpy(path, s);
  Tensor sb = ReadNpy(path);
  EXPECT_EQ(sb.strings()[1], "bcd");
  // Truncated on disk: error names the path.
  {
    std::vector<uint8_t> bytes = EncodeNpy(t);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size() - 3));
  }
  try {
    ReadNpy(path);
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated data"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadNpy((dir / "missing.npy").string()), InvalidArgumentError);
  EXPECT_THROW(WriteNpy((dir / "no_such_dir" / "y.npy").string(), t), InvalidArgumentError);
  std::filesystem::remove_all(dir);
}

#ifdef FERRY_SOURCE_DIR
TEST(Npy, ReadsFilesWrittenByNumpy) {
  // models/quickstart_cnn_input.npy was written by np.save (scripts/make_quickstart_model.py).
  std::string path = std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn_input.npy";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  Tensor t = ReadNpy(path);
  EXPECT_EQ(t.dtype(), DataType::kFloat);
  EXPECT_EQ(t.shape(), (Shape{1, 3, 32, 32}));
  // Writing it back gives NumPy's exact bytes (same header layout and padding).
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(EncodeNpy(t), original);
}
#endif

}  // namespace
}  // namespace ferry::tools
