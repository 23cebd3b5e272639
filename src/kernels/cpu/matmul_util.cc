#include "kernels/cpu/matmul_util.h"

#include <cstring>

#include "kernels/cpu/shared_packs.h"

namespace ferry::cpu {

namespace {

dnnl::matmul::primitive_desc MatMulPd(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                      const dnnl::memory::desc& bias, const dnnl::memory::desc& y,
                                      const dnnl::primitive_attr& attr) {
  const dnnl::primitive_attr user = WithUserScratchpad(attr);
  if (bias.data.ndims == 0) return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, y), user, Engine());
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, y), user, Engine());
}

// True for a layout without inner blocks (a strided matrix): what oneDNN's gemm-based matmul asks for.
bool Unblocked(const dnnl::memory::desc& d) {
  return d.data.format_kind == dnnl_blocked && d.data.format_desc.blocking.inner_nblks == 0;
}

// Below this many rows of A, a transposed constant B (K contiguous, as Gemm's transB gives it) stays as it is:
// oneDNN's small-M gemm reads it faster that way than row-major ([1,2048]x[1000,2048]^T: 0.25 vs 0.30 ms).
constexpr int64_t kSmallM = 16;
// Narrower matrices are not padded: that would cost more memory (up to 1/8 from here) than the cache conflicts
// it avoids.
constexpr int64_t kMinPaddedColumns = 128;

// The layout a constant K×N B (`plain`) is copied into when oneDNN's matmul wants an unblocked one (`want`: its
// gemm, on CPUs without brgemm) for an A of `rows` rows: row-major, each row padded to an odd number of 64-byte
// lines. On a page-aligned B whose row stride is a multiple of a large power of two (N = 768, 3072: 3 and 12 KiB),
// oneDNN's f32 gemm is slow, its reads down a column landing in a few cache sets: [128,768]x[768,3072] ran at half
// the speed on AVX2 (and as fast once B was 4 bytes off alignment). An odd number of lines spreads them over every
// set. A transposed B for a small M keeps its layout, a narrow one takes `want`.
dnnl::memory::desc UnblockedLayout(const dnnl::memory::desc& plain, const dnnl::memory::desc& want, int64_t rows) {
  const dnnl::memory::dims dims = plain.dims();
  if (dims.size() != 2 || plain.data_type() != dnnl::memory::data_type::f32) return want;
  const int64_t k = dims[0], n = dims[1];
  const bool row_major = plain.data.format_desc.blocking.strides[1] == 1;
  if (!row_major && rows <= kSmallM) return plain;
  if (n < kMinPaddedColumns) return want;
  constexpr int64_t kLine = 64 / sizeof(float);
  int64_t lines = (n + kLine - 1) / kLine;
  if (lines % 2 == 0) ++lines;
  return dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32, dnnl::memory::dims{lines * kLine, 1});
}

}  // namespace

MatMulWeights::MatMulWeights(std::shared_ptr<const Tensor> b, const dnnl::memory::desc& plain,
                             const dnnl::memory::desc& a_hint, const dnnl::memory::desc& y_hint,
                             const dnnl::memory::desc& bias, const dnnl::primitive_attr& attr,
                             const std::string& what) {
  try {
    const dnnl::memory::desc any(plain.dims(), plain.data_type(), dnnl::memory::format_tag::any);
    const auto pd = MatMulPd(a_hint, any, bias, y_hint, attr);
    if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0) return;  // nothing to gain
    dnnl::memory::desc want = pd.weights_desc();
    if (Unblocked(want)) {
      want = UnblockedLayout(plain, want, a_hint.dims()[0]);
      if (want != plain && std::strncmp(MatMulPd(a_hint, want, bias, y_hint, attr).impl_info_str(), "ref", 3) == 0) {
        return;
      }
    }
    if (want == plain) return;  // nothing to gain
    // Another kernel reading this initializer the same way may have packed it already (tied weights).
    std::shared_ptr<const dnnl::memory> copy = SharedPacks::Instance().Find(b, plain, want);
    made_here_ = copy == nullptr;
    if (!copy) {
      dnnl::memory packed(want, Engine());
      // A padded layout's gaps are never read for the product; zeroed, the copy is deterministic memory.
      std::memset(packed.get_data_handle(), 0, want.get_size());
      dnnl::memory src = Wrap(*b, plain);
      WithStream(1, what, [&](dnnl::stream& s) { dnnl::reorder(src, packed).execute(s, src, packed); });
      copy = std::make_shared<const dnnl::memory>(packed);
      SharedPacks::Instance().Add(b, plain, want, copy);
    }
    shared_ = copy;
    dtype_ = b->dtype();
    shape_ = b->shape();
    source_ = std::move(b);
    plain_desc_ = plain;
    packed_desc_ = want;
    packed_ = *copy;
  } catch (const dnnl::error&) {
    // No preferred layout for this problem: the kernel runs on the plain matrix.
    source_.reset();
    shared_.reset();
    packed_ = dnnl::memory();
  }
}

int64_t MatMulWeights::bytes() const {
  int64_t total = packed_ && made_here_ ? static_cast<int64_t>(packed_desc_.get_size()) : 0;
  if (released_ && unpacked_->plain.defined()) total += static_cast<int64_t>(unpacked_->plain.nbytes());
  return total;
}

bool MatMulWeights::ReleaseSource() {
  if (!packed_) return false;
  source_.reset();
  released_ = true;
  return true;
}

const float* MatMulWeights::RowMajor(int64_t* ldb) const {
  const auto row_major = [ldb](const dnnl::memory::desc& d) {
    if (d.data.ndims != 2 || !Unblocked(d) || d.data.format_desc.blocking.strides[1] != 1) return false;
    *ldb = d.data.format_desc.blocking.strides[0];
    return true;
  };
  if (packed_ && row_major(packed_desc_)) return static_cast<const float*>(packed_.get_data_handle());
  if (!released_ && source_ && row_major(plain_desc_)) return source_->data<float>();
  return nullptr;
}

const Tensor& MatMulWeights::Plain() const {
  std::call_once(unpacked_->once, [&] {
    Tensor t = Tensor::Uninitialized(dtype_, shape_);
    dnnl::memory dst = Wrap(t, plain_desc_);
    dnnl::memory src = packed_;
    WithStream(1, "unpacking a released constant B",
               [&](dnnl::stream& s) { dnnl::reorder(src, dst).execute(s, src, dst); });
    unpacked_->plain = std::move(t);
  });
  return unpacked_->plain;
}

MatMulPrimitive MakeMatMul(const dnnl::memory::desc& a, const dnnl::memory::desc& b_plain,
                           const dnnl::memory::desc& bias, const dnnl::memory::desc& y,
                           const dnnl::primitive_attr& attr, const MatMulWeights* weights) {
  if (weights) {
    try {
      const auto pd = MatMulPd(a, weights->desc(), bias, y, attr);
      if (std::strncmp(pd.impl_info_str(), "ref", 3) != 0) return {dnnl::matmul(pd), pd.scratchpad_desc(), true};
    } catch (const dnnl::error&) {
      // This shape has no implementation for the packed layout: use the plain matrix.
    }
  }
  try {
    const auto pd = MatMulPd(a, b_plain, bias, y, attr);
    return {dnnl::matmul(pd), pd.scratchpad_desc(), false};
  } catch (const dnnl::error& e) {
    throw InternalError(std::string("oneDNN matmul: ") + e.what());
  }
}

}  // namespace ferry::cpu
