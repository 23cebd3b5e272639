// MatMul and Gemm through cuBLAS (cublasGemmStridedBatchedEx / cublasGemmEx): float32 (FP32 compute, TF32 only
// with FERRY_CUDA_TF32=1), float16 and bfloat16 (FP32 accumulation, tensor cores). Row-major tensors are handed
// to column-major cuBLAS as their transposes: C^T = B^T A^T.
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/cuda/cublas_api.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda_defs/cuda_shapes.h"

namespace ferry::cuda {
namespace {

void CheckBlas(cublasStatus_t s, const char* call, const std::string& who) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const CublasApi& api = Cublas(who);
  const std::string msg = who + ": " + call + " failed: " + api.status_name(s) + ": " + api.status_string(s);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw ResourceExhaustedError(msg);
  throw InternalError(msg);
}
#define FERRY_CUBLAS_CHECK(call, who) CheckBlas((call), #call, (who))

// The calling thread's cuBLAS handle on `device`, bound to `stream`.
cublasHandle_t Handle(int device, cudaStream_t stream, const std::string& who) {
  struct Handles {
    std::unordered_map<int, cublasHandle_t> by_device;
    ~Handles() {
      for (auto& [d, h] : by_device) Cublas("cuBLAS handles").destroy(h);
    }
  };
  thread_local Handles handles;
  cublasHandle_t& h = handles.by_device[device];
  const CublasApi& api = Cublas(who);
  if (!h) FERRY_CUBLAS_CHECK(api.create(&h), who);
  FERRY_CUBLAS_CHECK(api.set_stream(h, stream), who);
  return h;
}

cudaDataType_t BlasType(DataType dt, const std::string& who) {
  switch (dt) {
    case DataType::kFloat: return CUDA_R_32F;
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBFloat16: return CUDA_R_16BF;
    default: throw UnsupportedError(who + ": no cuBLAS path for " + std::string(DataTypeName(dt)));
  }
}

cublasComputeType_t ComputeType(DataType dt) {
  return dt == DataType::kFloat && Tf32Enabled() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// One row-major product Y[b] = alpha * opA(A[b]) * opB(B[b]) + beta * Y[b] for `batch` matrices with the given
// element strides between them (0: the same matrix for every b). A' is M x K, B' is K x N, Y is M x N.
struct Product {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  int64_t stride_a = 0, stride_b = 0, stride_y = 0;
  float alpha = 1, beta = 0;
};

// Refuses a product cuBLAS cannot take (Prepare's check; RunProduct then only runs it).
void CheckProduct(const Product& p, DataType dt, const std::string& who) {
  constexpr int64_t kMax = 0x7fffffff;
  if (p.m > kMax || p.n > kMax || p.k > kMax || p.batch > kMax) {
    throw UnsupportedError(who + ": matrix too large for cuBLAS");
  }
  BlasType(dt, who);
}

void RunProduct(const Product& p, DataType dt, const void* a, const void* b, void* y, int device, cudaStream_t stream,
                const std::string& who) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  cublasHandle_t h = Handle(device, stream, who);
  const cudaDataType_t t = BlasType(dt, who);
  // Column-major: Y^T (N x M) = B'^T (N x K) * A'^T (K x M).
  const cublasOperation_t op_b = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = static_cast<int>(p.trans_b ? p.k : p.n);
  const int lda = static_cast<int>(p.trans_a ? p.m : p.k);
  const int ldy = static_cast<int>(p.n);
  FERRY_CUBLAS_CHECK(Cublas(who).gemm_strided_batched_ex(h, op_b, op_a, static_cast<int>(p.n), static_cast<int>(p.m),
                                                static_cast<int>(p.k), &p.alpha, b, t, ldb, p.stride_b, a, t, lda,
                                                p.stride_a, &p.beta, y, t, ldy, p.stride_y, static_cast<int>(p.batch),
                                                ComputeType(dt), CUBLAS_GEMM_DEFAULT),
                     who);
}

class MatMul final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;

  // One strided-batched product, or (batch dims broadcast against each other: [2,1,M,K] x [1,3,K,N]) one product
  // per output matrix at these element offsets of A and B.
  struct Plan {
    Product product;
    std::vector<std::pair<int64_t, int64_t>> offsets;  // empty: the one batched product
  };

  void Prepare(PrepareContext& ctx) const override {
    const std::string who = ctx.Describe();
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != b.dtype) throw InvalidModelError(who + ": A and B differ in type");
    if (a.shape.empty() || b.shape.empty()) throw InvalidModelError(who + ": MatMul of a scalar");
    Shape sa = a.shape, sb = b.shape;
    const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
    if (a_vec) sa.insert(sa.begin(), 1);
    if (b_vec) sb.push_back(1);
    const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    if (sb[sb.size() - 2] != k) {
      throw InvalidModelError(who + ": inner dims differ: " + ShapeToString(a.shape) + " x " + ShapeToString(b.shape));
    }
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    const Shape batches[] = {batch_a, batch_b};
    const Shape batch = BroadcastShape(batches, who);
    Shape out = batch;
    if (!a_vec) out.push_back(m);
    if (!b_vec) out.push_back(n);
    const int64_t nb = ShapeElementCount(batch), na = ShapeElementCount(batch_a), nbb = ShapeElementCount(batch_b);
    Plan& plan = ctx.EmplaceState(Plan{});
    Product& p = plan.product;
    p.m = m;
    p.n = n;
    p.k = k;
    p.stride_y = m * n;
    auto same_batch = [&](const Shape& s) {
      Shape padded(batch.size() - s.size(), 1);
      padded.insert(padded.end(), s.begin(), s.end());
      return padded == batch;
    };
    if ((na == 1 || same_batch(batch_a)) && (nbb == 1 || same_batch(batch_b))) {
      p.batch = nb;
      p.stride_a = na == 1 ? 0 : m * k;
      p.stride_b = nbb == 1 ? 0 : k * n;
    } else {
      const Shape ab[] = {batch_a, batch};
      const Shape bb[] = {batch_b, batch};
      const IndexMap ma = BroadcastMap(ab, who), mb = BroadcastMap(bb, who);
      for (int64_t i = 0; i < nb; ++i) {
        int64_t oa = 0, ob = 0;
        for (int64_t r = i, d = ma.rank - 1; d >= 0; --d) {
          oa += (r % ma.dims[d]) * ma.strides[0][d];
          r /= ma.dims[d];
        }
        for (int64_t r = i, d = mb.rank - 1; d >= 0; --d) {
          ob += (r % mb.dims[d]) * mb.strides[0][d];
          r /= mb.dims[d];
        }
        plan.offsets.emplace_back(oa * m * k, ob * k * n);
      }
      p.batch = 1;
    }
    CheckProduct(p, a.dtype, who);
    ctx.SetOutput(0, a.dtype, out);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Plan& plan = ctx.state<Plan>();
    const Product& p = plan.product;
    Tensor y = Output(ctx, 0, stream);
    if (plan.offsets.empty()) {
      RunProduct(p, a.dtype(), a.raw_data(), b.raw_data(), y.raw_data(), device(), stream, who());
      return;
    }
    const size_t esize = static_cast<size_t>(ElementBytes(a.dtype()));
    for (size_t i = 0; i < plan.offsets.size(); ++i) {
      const auto [oa, ob] = plan.offsets[i];
      RunProduct(p, a.dtype(), static_cast<const char*>(a.raw_data()) + oa * esize,
                 static_cast<const char*>(b.raw_data()) + ob * esize,
                 static_cast<char*>(y.raw_data()) + static_cast<int64_t>(i) * p.m * p.n * esize, device(), stream,
                 who());
    }
  }
};

class Gemm final : public CudaKernel {
 public:
  Gemm(const ir::Node& n, int device)
      : CudaKernel(n, device),
        alpha_(n.GetFloat("alpha", 1.f)),
        beta_(n.GetFloat("beta", 1.f)),
        trans_a_(n.GetInt("transA", 0) != 0),
        trans_b_(n.GetInt("transB", 0) != 0) {}

  void Prepare(PrepareContext& ctx) const override {
    const std::string who = ctx.Describe();
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    const InputSpec& c = ctx.input(2);
    if (a.shape.size() != 2 || b.shape.size() != 2) throw InvalidModelError(who + ": A and B must be 2-D");
    if (a.dtype != b.dtype || (c.is_tensor() && c.dtype != a.dtype)) {
      throw InvalidModelError(who + ": inputs differ in type");
    }
    Product& p = ctx.EmplaceState(Product{});
    p.m = trans_a_ ? a.shape[1] : a.shape[0];
    p.k = trans_a_ ? a.shape[0] : a.shape[1];
    p.n = trans_b_ ? b.shape[0] : b.shape[1];
    const int64_t kb = trans_b_ ? b.shape[1] : b.shape[0];
    if (kb != p.k) {
      throw InvalidModelError(who + ": inner dims differ: " + ShapeToString(a.shape) + " and " +
                              ShapeToString(b.shape));
    }
    p.trans_a = trans_a_;
    p.trans_b = trans_b_;
    p.alpha = alpha_;
    const Shape y = {p.m, p.n};
    const bool with_c = c.is_tensor() && beta_ != 0.f && ShapeElementCount(y) > 0;
    if (with_c) {
      const Shape both[] = {c.shape, y};
      if (BroadcastShape(both, who) != y) {
        throw InvalidModelError(who + ": " + ShapeToString(c.shape) + " does not broadcast to " + ShapeToString(y));
      }
    }
    p.beta = with_c ? beta_ : 0.f;
    if (p.k == 0 && p.beta != 0.f && p.beta != 1.f) {
      throw UnsupportedError(who + ": K = 0 with beta other than 0 or 1 is not implemented on cuda");
    }
    CheckProduct(p, a.dtype, who);
    ctx.SetOutput(0, a.dtype, y);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    const Product& p = ctx.state<Product>();
    Tensor y = Output(ctx, 0, stream);
    if (p.beta != 0.f) BroadcastCopy(*c, y, stream, who());
    if (p.k == 0) {
      if (p.beta == 0.f && y.size() > 0) FERRY_CUDA_CHECK(cudaMemsetAsync(y.raw_data(), 0, y.nbytes(), stream), who());
      return;
    }
    RunProduct(p, a.dtype(), a.raw_data(), b.raw_data(), y.raw_data(), device(), stream, who());
  }

 private:
  float alpha_, beta_;
  bool trans_a_, trans_b_;
};

}  // namespace

bool Tf32Enabled() {
  static const bool on = [] {
    const char* v = std::getenv("FERRY_CUDA_TF32");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void AddMatMulFactories(FactoryList& list) {
  list.emplace_back("cuda.MatMul.1", Make<MatMul>());
  list.emplace_back("cuda.Gemm.7", Make<Gemm>());
}

}  // namespace ferry::cuda
