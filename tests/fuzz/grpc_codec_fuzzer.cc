// The gRPC (KServe v2 GRPCInferenceService) infer codec: the bytes as a ModelInferRequest (typed contents and
// raw_input_contents, parameters, requested outputs), decoded against the served config, then the decoded
// inputs encoded back as a ModelInferResponse, typed and raw.
#include "fuzz_util.h"
#include "kserve_fuzz.h"
#include "server/grpc_codec.h"
#include "src/server/grpc_service.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  inference::ModelInferRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const ferry::server::ServeConfig& config = ferry::fuzz::KServeFuzzConfig();
  try {
    ferry::server::InferRequest decoded = ferry::server::DecodeGrpcInfer(request, config);
    const bool raw = ferry::server::GrpcRawOutputs(request, config);
    inference::ModelInferResponse out;
    ferry::server::EncodeGrpcInfer(ferry::fuzz::EchoResponse(decoded.inputs), "fuzz", request.id(), raw, &out);
  } catch (const ferry::server::BadRequest&) {
  } catch (const ferry::Error&) {
  }
  return 0;
}
