// cuBLAS, loaded when the first MatMul/Gemm kernel needs it rather than linked: loading libcublas (and the
// libcublasLt it pulls in) maps and relocates about 200 MiB, which every process linking Ferry would otherwise pay
// at start-up whether or not it ever runs on a GPU (`ferry --version` went from 7 to 235 MiB of RSS).
#pragma once

#include <cublas_v2.h>

#include <string>

namespace ferry::cuda {

// The cuBLAS entry points Ferry calls, resolved from the library.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // The C signature (cublas_api.h also has a C++ overload taking cublasComputeType_t as cudaDataType).
  using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const void*, const void*, cudaDataType, int, long long, const void*,
                                                  cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                  long long, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// Loads libcublas.so.<major of the headers built against> once per process (thread-safe) and returns its entry
// points. Throws UnsupportedError naming the library and the loader's message when it or a symbol is missing;
// `who` names the caller (node) in that message.
const CublasApi& Cublas(const std::string& who);

}  // namespace ferry::cuda
