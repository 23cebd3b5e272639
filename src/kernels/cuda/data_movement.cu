// Transpose and Slice (a strided copy through an index map), Gather, Where and Cast. Data movement copies bits
// (any element type of 1, 2, 4 or 8 bytes); Where selects bits; Cast converts through float or int64.
#include <type_traits>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/device_types.cuh"

namespace ferry::cuda {
namespace {

template <typename B>
__global__ void StridedCopyKernel(const B* x, B* y, IndexMap m) {
  FERRY_GRID_STRIDE(i, m.count) { y[i] = x[MapOffset(m, 0, i)]; }
}

// Indices outside [-axis_dim, axis_dim) write 0 and raise *bad (checked after the launch).
template <typename B, typename I>
__global__ void GatherKernel(const B* x, const I* idx, B* y, GatherPlan p, int* bad) {
  const int64_t count = p.outer * p.indices * p.inner;
  FERRY_GRID_STRIDE(i, count) {
    const int64_t in = i % p.inner;
    const int64_t j = (i / p.inner) % p.indices;
    const int64_t o = i / (p.inner * p.indices);
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += p.axis_dim;
    if (k < 0 || k >= p.axis_dim) {
      *bad = 1;
      y[i] = B{};
    } else {
      y[i] = x[(o * p.axis_dim + k) * p.inner + in];
    }
  }
}

template <typename B>
__global__ void WhereKernel(const bool* c, const B* a, const B* b, B* y, IndexMap m) {
  FERRY_GRID_STRIDE(i, m.count) { y[i] = c[MapOffset(m, 0, i)] ? a[MapOffset(m, 1, i)] : b[MapOffset(m, 2, i)]; }
}

template <typename S, typename D>
__device__ __forceinline__ D Convert(S s) {
  if constexpr (std::is_same_v<D, bool>) {
    return static_cast<float>(Load(&s, 0)) != 0.f;
  } else if constexpr (std::is_same_v<S, __half> || std::is_same_v<S, __nv_bfloat16> || std::is_same_v<S, float>) {
    const float f = Load(&s, 0);
    if constexpr (std::is_same_v<D, __half>) return __float2half_rn(f);
    else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn(f);
    else return static_cast<D>(f);
  } else {
    // Integer and bool sources: exact through int64 into integers, rounded once into floats.
    const int64_t v = static_cast<int64_t>(s);
    if constexpr (std::is_same_v<D, __half>) return __float2half_rn(static_cast<float>(v));
    else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn(static_cast<float>(v));
    else return static_cast<D>(v);
  }
}

template <typename S, typename D>
__global__ void CastKernel(const S* x, D* y, int64_t n) {
  FERRY_GRID_STRIDE(i, n) { y[i] = Convert<S, D>(x[i]); }
}

unsigned Blocks(const Launch1d& l) { return static_cast<unsigned>(l.blocks); }

class Transpose final : public CudaKernel {
 public:
  Transpose(const ir::Node& n, int device) : CudaKernel(n, device), perm_(n.GetInts("perm")) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    Shape out;
    ctx.EmplaceState(TransposeMap(x.shape, perm_, &out, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, out);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const IndexMap& m = ctx.state<IndexMap>();
    Tensor y = Output(ctx, 0, stream);
    const Launch1d l = LaunchFor(m.count);
    if (l.blocks == 0) return;
    DispatchBits(ElementBytes(x.dtype()), who(), [&](auto b) {
      using B = decltype(b);
      StridedCopyKernel<B><<<Blocks(l), l.threads, 0, stream>>>(x.data<B>(), y.data<B>(), m);
    });
  }

 private:
  std::vector<int64_t> perm_;
};

std::vector<int64_t> HostInts(const Tensor* t, const std::string& who, const char* what) {
  std::vector<int64_t> v;
  if (!t) return v;
  for (int64_t i = 0; i < t->size(); ++i) {
    if (t->dtype() == DataType::kInt64) v.push_back(t->data<int64_t>()[i]);
    else if (t->dtype() == DataType::kInt32) v.push_back(t->data<int32_t>()[i]);
    else throw InvalidModelError(who + ": " + what + " must be int32 or int64");
  }
  return v;
}

// Slice's index map and output shape from X's shape and the starts / ends / axes / steps tensors (host).
IndexMap SliceOf(const Shape& x, const Tensor* const args[4], Shape* out, const std::string& who) {
  return SliceMap(x, HostInts(args[0], who, "starts"), HostInts(args[1], who, "ends"), HostInts(args[2], who, "axes"),
                  HostInts(args[3], who, "steps"), out, who);
}

class Slice final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;

  struct Plan {
    IndexMap map;
    Shape out;
  };

  // Planned here when starts, ends, axes and steps are known before the run; else from the run's values.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.tensor_input(1);
    ctx.tensor_input(2);
    const Tensor* args[4] = {ctx.constant(1), ctx.constant(2), ctx.constant(3), ctx.constant(4)};
    for (int i = 0; i < 4; ++i) {
      if (!args[i] && ctx.has_input(i + 1)) return ctx.SetOutputDynamic(0);
    }
    Plan& p = ctx.EmplaceState(Plan{});
    p.map = SliceOf(x.shape, args, &p.out, ctx.Describe());
    ctx.SetOutput(0, x.dtype, p.out);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan* prepared = ctx.state_if_any<Plan>();
    Plan run;  // values known only now: their errors are the data's
    if (!prepared) {
      const Tensor* args[4] = {&ctx.required_input(1), &ctx.required_input(2), ctx.input(3), ctx.input(4)};
      run.map = SliceOf(x.shape(), args, &run.out, who());
    }
    const IndexMap& m = prepared ? prepared->map : run.map;
    Tensor y = prepared ? Output(ctx, 0, stream) : Output(ctx, 0, stream, x.dtype(), run.out);
    const Launch1d l = LaunchFor(m.count);
    if (l.blocks == 0) return;
    DispatchBits(ElementBytes(x.dtype()), who(), [&](auto b) {
      using B = decltype(b);
      StridedCopyKernel<B><<<Blocks(l), l.threads, 0, stream>>>(x.data<B>(), y.data<B>(), m);
    });
  }
};

class Gather final : public CudaKernel {
 public:
  Gather(const ir::Node& n, int device) : CudaKernel(n, device), axis_(n.GetInt("axis", 0)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& idx = ctx.tensor_input(1);
    Shape out;
    ctx.EmplaceState(PlanGather(x.shape, idx.shape, axis_, &out, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, out);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& idx = ctx.required_input(1);
    const GatherPlan& p = ctx.state<GatherPlan>();
    Tensor y = Output(ctx, 0, stream);
    const Launch1d l = LaunchFor(y.size());
    if (l.blocks == 0) return;
    auto bad = DeviceBuffer(device(), stream, sizeof(int));
    FERRY_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(int), stream), who());
    DispatchBits(ElementBytes(x.dtype()), who(), [&](auto b) {
      using B = decltype(b);
      if (idx.dtype() == DataType::kInt64) {
        GatherKernel<B, int64_t><<<Blocks(l), l.threads, 0, stream>>>(x.data<B>(), idx.data<int64_t>(), y.data<B>(), p,
                                                                       static_cast<int*>(bad.get()));
      } else {
        GatherKernel<B, int32_t><<<Blocks(l), l.threads, 0, stream>>>(x.data<B>(), idx.data<int32_t>(), y.data<B>(), p,
                                                                       static_cast<int*>(bad.get()));
      }
    });
    // An index out of range is an error (as on every backend): the flag comes back before the run goes on.
    int host_bad = 0;
    FERRY_CUDA_CHECK(cudaMemcpyAsync(&host_bad, bad.get(), sizeof(int), cudaMemcpyDeviceToHost, stream), who());
    FERRY_CUDA_CHECK(cudaStreamSynchronize(stream), who());
    if (host_bad) {
      throw InvalidArgumentError(who() + ": an index is outside [-" + std::to_string(p.axis_dim) + ", " +
                                 std::to_string(p.axis_dim) + ")");
    }
  }

 private:
  int64_t axis_;
};

class Where final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& c = ctx.tensor_input(0);
    const InputSpec& a = ctx.tensor_input(1);
    const InputSpec& b = ctx.tensor_input(2);
    if (a.dtype != b.dtype) {
      throw InvalidModelError(ctx.Describe() + ": X and Y differ in type (" + ctx.InputString(1) + ", " +
                              ctx.InputString(2) + ")");
    }
    const Shape shapes[] = {c.shape, a.shape, b.shape};
    ctx.EmplaceState(BroadcastMap(shapes, ctx.Describe()));
    ctx.SetOutput(0, a.dtype, BroadcastShape(shapes, ctx.Describe()));
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& c = ctx.required_input(0);
    const Tensor& a = ctx.required_input(1);
    const Tensor& b = ctx.required_input(2);
    const IndexMap& m = ctx.state<IndexMap>();
    Tensor y = Output(ctx, 0, stream);
    const Launch1d l = LaunchFor(m.count);
    if (l.blocks == 0) return;
    DispatchBits(ElementBytes(a.dtype()), who(), [&](auto bits) {
      using B = decltype(bits);
      WhereKernel<B><<<Blocks(l), l.threads, 0, stream>>>(c.data<bool>(), a.data<B>(), b.data<B>(), y.data<B>(), m);
    });
  }
};

// Calls fn(T{}) for the device type of a Cast source / destination dtype.
template <typename Fn>
void DispatchCast(DataType dt, const std::string& who, Fn&& fn) {
  switch (dt) {
    case DataType::kBool: fn(bool{}); return;
    case DataType::kInt8: fn(int8_t{}); return;
    case DataType::kUint8: fn(uint8_t{}); return;
    default: DispatchFloatInt(dt, who, fn);
  }
}

class Cast final : public CudaKernel {
 public:
  Cast(const ir::Node& n, int device)
      : CudaKernel(n, device), to_(static_cast<DataType>(n.GetInt("to", 0))) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != to_ && (to_ == DataType::kInt8 || to_ == DataType::kUint8)) {
      throw UnsupportedError(ctx.Describe() + ": Cast to " + std::string(DataTypeName(to_)) + " is not declared");
    }
    ctx.SetOutput(0, to_, x.shape);
    if (x.dtype == to_) ctx.output(0).view_of = 0;  // the input itself
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() == to_) {
      ctx.SetOutput(0, *ctx.input_value(0));
      return;
    }
    Tensor y = Output(ctx, 0, stream);
    const Launch1d l = LaunchFor(x.size());
    if (l.blocks == 0) return;
    DispatchCast(x.dtype(), who(), [&](auto s) {
      using S = decltype(s);
      DispatchCast(to_, who(), [&](auto d) {
        using D = decltype(d);
        if constexpr (!std::is_same_v<D, int8_t> && !std::is_same_v<D, uint8_t>) {  // refused by Prepare
          CastKernel<S, D><<<Blocks(l), l.threads, 0, stream>>>(x.data<S>(), y.data<D>(), x.size());
        }
      });
    });
  }

 private:
  DataType to_;
};

}  // namespace

void BroadcastCopy(const Tensor& src, Tensor& dst, cudaStream_t stream, const std::string& who) {
  const Shape shapes[] = {src.shape()};
  IndexMap m = BroadcastMap(shapes, who);
  if (BroadcastShape(std::span<const Shape>(shapes), who) != dst.shape()) {
    // Broadcast src against dst's shape: strides from a two-input map, keep input 0's.
    const Shape both[] = {src.shape(), dst.shape()};
    if (BroadcastShape(both, who) != dst.shape()) {
      throw InvalidModelError(who + ": " + ShapeToString(src.shape()) + " does not broadcast to " +
                              ShapeToString(dst.shape()));
    }
    m = BroadcastMap(both, who);
    m.inputs = 1;
  }
  const Launch1d l = LaunchFor(m.count);
  if (l.blocks == 0) return;
  DispatchBits(ElementBytes(src.dtype()), who, [&](auto b) {
    using B = decltype(b);
    StridedCopyKernel<B><<<Blocks(l), l.threads, 0, stream>>>(src.data<B>(), dst.data<B>(), m);
  });
}

void AddDataMovementFactories(FactoryList& list) {
  list.emplace_back("cuda.Transpose.1", Make<Transpose>());
  list.emplace_back("cuda.Slice.10", Make<Slice>());
  list.emplace_back("cuda.Gather.1", Make<Gather>());
  list.emplace_back("cuda.Where.9", Make<Where>());
  list.emplace_back("cuda.Cast.6", Make<Cast>());
}

}  // namespace ferry::cuda
