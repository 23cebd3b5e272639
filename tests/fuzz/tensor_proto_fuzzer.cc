// The TensorProto readers behind `--input x.pb`, the ONNX test data and initializers: the bytes as a TensorProto
// (dims, data types, every typed data field, raw_data sizes, int4/float8 packing, strings, external data against
// the scratch directory), as a SparseTensorProto, and as Sequence and Optional protos, plus the file path reader
// `ferry run --input` uses. A tensor that loads must survive TensorToProto and load again, equal.
#include <cstring>
#include <span>

#include "fuzz_util.h"
#include "ir/tensor_proto.h"
#include <onnx/onnx_pb.h>  // must precede onnx-data_pb.h: it defines ONNX_API
#include <onnx/onnx-data_pb.h>
#include "tools/run_inputs.h"

namespace {

void RoundTrip(const ferry::Tensor& t) {
  onnx::TensorProto again;
  ferry::ir::TensorToProto(t, "t", &again);
  const ferry::Tensor back = ferry::ir::TensorFromProto(again, {});
  if (back.dtype() != t.dtype() || back.shape() != t.shape()) ferry::fuzz::Fail("TensorProto round trip: type changed");
  if (t.dtype() == ferry::DataType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) {
      if (back.strings()[i] != t.strings()[i]) ferry::fuzz::Fail("TensorProto round trip: string changed");
    }
  } else if (t.nbytes() != back.nbytes() || std::memcmp(t.raw_data(), back.raw_data(), t.nbytes()) != 0) {
    ferry::fuzz::Fail("TensorProto round trip: bytes changed");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int n = static_cast<int>(size);
  const ferry::ir::TensorLoadOptions options{.base_dir = ferry::fuzz::ScratchDir(), .where = "fuzz input"};
  onnx::TensorProto tensor;
  if (tensor.ParseFromArray(data, n)) {
    ferry::fuzz::ExpectFerryErrors([&] { RoundTrip(ferry::ir::TensorFromProto(tensor, options)); });
  }
  onnx::SparseTensorProto sparse;
  if (sparse.ParseFromArray(data, n)) {
    ferry::fuzz::ExpectFerryErrors([&] { (void)ferry::ir::TensorFromSparseProto(sparse, options); });
  }
  onnx::SequenceProto sequence;
  if (sequence.ParseFromArray(data, n)) {
    ferry::fuzz::ExpectFerryErrors([&] { (void)ferry::ir::ValueFromSequenceProto(sequence, options); });
  }
  onnx::OptionalProto optional;
  if (optional.ParseFromArray(data, n)) {
    ferry::fuzz::ExpectFerryErrors([&] { (void)ferry::ir::ValueFromOptionalProto(optional, options); });
  }
  const std::string path = ferry::fuzz::WriteScratchFile("input.pb", std::span<const uint8_t>(data, size));
  ferry::fuzz::ExpectFerryErrors([&] { (void)ferry::tools::LoadTensorFile(path); });
  return 0;
}
