// com.microsoft::Unique on cpu (semantics: ref/unique.cc): the distinct values of a 1-D x in order of first
// appearance, y; idx[i], the position of x[i] in y; counts. One pass over x with an open-addressing hash table of
// the distinct values seen (linear probing, at most half full; the key is the value's bits, -0 made +0 so the two
// zeros are one value, as == says), as ONNX Runtime's kernel keys a hash map by the value: every NaN is a value of
// its own (NaN != NaN) and is never looked up. For the numeric types and bool; strings and complex numbers take
// ref's kernel (registered here under a cpu name).
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/unique.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The hash key of a value: its bits (zero-extended), -0 as +0 for the floating-point types; `nan` set for a NaN.
template <typename T>
uint64_t KeyOf(T v, bool& nan) {
  nan = false;
  if constexpr (std::is_floating_point_v<T>) {
    nan = v != v;
    if (v == T(0)) v = T(0);
    if constexpr (sizeof(T) == 8) {
      uint64_t k;
      std::memcpy(&k, &v, 8);
      return k;
    } else {
      uint32_t k;
      std::memcpy(&k, &v, 4);
      return k;
    }
  } else if constexpr (ref::kIsHalf<T>) {
    const float f = static_cast<float>(v);
    nan = f != f;
    uint16_t k;
    std::memcpy(&k, &v, 2);
    return f == 0.0f ? 0 : k;
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else {
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
  }
}

class UniqueHash : public OpKernel {
 public:
  explicit UniqueHash(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'x' must be 1-D, got " + ctx.InputString(0));
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutputDynamic(i);
    if (ctx.output_count() > 1) ctx.SetOutput(1, DataType::kInt64, {x.shape[0]});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t n = x.size();
    Tensor idx_scratch;
    Tensor& idx = ctx.output_count() > 1 ? ctx.Output(1) : (idx_scratch = Tensor(DataType::kInt64, {n}));
    int64_t* inverse = idx.data<int64_t>();
    std::vector<int64_t> firsts, counts;
    ref::Dispatch(ref::TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                                uint32_t, uint64_t, bool>{},
                  x.dtype(), ctx, [&](auto tag) {
                    using T = decltype(tag);
                    const T* p = x.data<T>();
                    int64_t cap = 16;
                    int shift = 60;  // 64 - log2(cap): the hash is the product's top bits
                    while (cap < 2 * n) cap *= 2, --shift;
                    const uint64_t mask = static_cast<uint64_t>(cap - 1);
                    std::vector<int64_t> slots(static_cast<size_t>(cap), -1);  // index into firsts, or -1
                    std::vector<uint64_t> keys;                                // per unique value
                    for (int64_t i = 0; i < n; ++i) {
                      bool nan = false;
                      const uint64_t key = KeyOf(p[i], nan);
                      if (nan) {  // never equal to anything: a new value
                        inverse[i] = static_cast<int64_t>(firsts.size());
                        firsts.push_back(i);
                        keys.push_back(key);
                        counts.push_back(1);
                        continue;
                      }
                      uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> shift;
                      for (;; ++h) {
                        int64_t& slot = slots[static_cast<size_t>(h & mask)];
                        if (slot < 0) {
                          slot = static_cast<int64_t>(firsts.size());
                          inverse[i] = slot;
                          firsts.push_back(i);
                          keys.push_back(key);
                          counts.push_back(1);
                          break;
                        }
                        if (keys[static_cast<size_t>(slot)] == key) {
                          inverse[i] = slot;
                          ++counts[static_cast<size_t>(slot)];
                          break;
                        }
                      }
                    }
                    const int64_t u = static_cast<int64_t>(firsts.size());
                    T* y = ctx.OutputUninitialized(0, x.dtype(), {u}).template data<T>();
                    for (int64_t g = 0; g < u; ++g) y[g] = p[firsts[static_cast<size_t>(g)]];
                  });
    const int64_t u = static_cast<int64_t>(counts.size());
    if (ctx.output_count() > 2) {
      int64_t* c = ctx.OutputUninitialized(2, DataType::kInt64, {u}).data<int64_t>();
      for (int64_t g = 0; g < u; ++g) c[g] = counts[static_cast<size_t>(g)];
    }
  }
};

}  // namespace

void RegisterContribUniqueKernels(KernelRegistry& r) {
  // The contrib schema's T less string and complex (no bfloat16 in it).
  r.Add({.op = "Unique",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T",
                    {DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64, DataType::kInt8,
                     DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kFloat16, DataType::kFloat,
                     DataType::kDouble, DataType::kBool}}},
         .create = MakeKernel<UniqueHash>,
         .name = "cpu.com.microsoft.numeric_unique__hash.1"});
  r.Add({.op = "Unique",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kString, DataType::kComplex64, DataType::kComplex128}}},
         .create = ref::CreateUniqueKernel,
         .name = "cpu.com.microsoft.any_unique__sort.1"});
}

}  // namespace ferry::cpu
