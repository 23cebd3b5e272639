#include "kernels/cpu/dnnl_util.h"

#include <omp.h>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_isa.h"

namespace ferry::cpu {

const dnnl::engine& Engine() {
  // FERRY_ISA narrows the whole process, oneDNN's code too: capped before the engine's first primitive.
  static const dnnl::engine engine = [] {
    CapDnnlIsaFromEnvironment();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

std::optional<dnnl::memory::data_type> DnnlType(DataType t) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case DataType::kFloat: return dt::f32;
    case DataType::kFloat16: return dt::f16;
    case DataType::kBFloat16: return dt::bf16;
    case DataType::kInt32: return dt::s32;
    case DataType::kInt8: return dt::s8;
    case DataType::kUint8: return dt::u8;
    default: return std::nullopt;
  }
}

dnnl::memory::dims Dims(const Shape& shape) { return dnnl::memory::dims(shape.begin(), shape.end()); }

dnnl::memory::desc PlainDesc(const Shape& shape, DataType t) {
  auto type = DnnlType(t);
  if (!type) throw InternalError("oneDNN has no data type for " + std::string(DataTypeName(t)));
  // Row-major strides; oneDNN wants rank >= 1.
  Shape s = shape.empty() ? Shape{1} : shape;
  dnnl::memory::dims strides(s.size());
  int64_t stride = 1;
  for (size_t i = s.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(s[i], 1);
  }
  return dnnl::memory::desc(Dims(s), *type, strides);
}

dnnl::memory Wrap(const Tensor& t) { return Wrap(t, PlainDesc(t.shape(), t.dtype())); }

dnnl::memory Wrap(const Tensor& t, const dnnl::memory::desc& desc) {
  // oneDNN takes a non-const handle; inputs are only read.
  return dnnl::memory(desc, Engine(), const_cast<void*>(t.raw_data()));
}

ScopedOmpThreads::ScopedOmpThreads(int threads) : saved_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(1, CappedThreads(threads)));  // a serial run's cap wins (core/parallel.h)
}
ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(saved_); }

void WithStream(int threads, const std::string& what, const std::function<void(dnnl::stream&)>& body) {
  const ScopedOmpThreads scope(threads);
  try {
    dnnl::stream stream(Engine());
    body(stream);
    stream.wait();
  } catch (const dnnl::error& e) {
    throw InternalError(what + ": oneDNN: " + e.what());
  }
}

void Execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args, int threads,
             const std::string& what) {
  WithStream(threads, what, [&](dnnl::stream& s) { prim.execute(s, args); });
}

}  // namespace ferry::cpu
