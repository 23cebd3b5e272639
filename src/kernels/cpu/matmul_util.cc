#include "kernels/cpu/matmul_util.h"

#include <cstring>

namespace ferry::cpu {

namespace {

dnnl::matmul::primitive_desc MatMulPd(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                      const dnnl::memory::desc& bias, const dnnl::memory::desc& y,
                                      const dnnl::primitive_attr& attr) {
  const dnnl::primitive_attr user = WithUserScratchpad(attr);
  if (bias.data.ndims == 0) return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, y), user, Engine());
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, y), user, Engine());
}

}  // namespace

MatMulWeights::MatMulWeights(std::shared_ptr<const Tensor> b, const dnnl::memory::desc& plain,
                             const dnnl::memory::desc& a_hint, const dnnl::memory::desc& y_hint,
                             const dnnl::memory::desc& bias, const dnnl::primitive_attr& attr,
                             const std::string& what) {
  try {
    const dnnl::memory::desc any(plain.dims(), plain.data_type(), dnnl::memory::format_tag::any);
    const auto pd = MatMulPd(a_hint, any, bias, y_hint, attr);
    const dnnl::memory::desc want = pd.weights_desc();
    if (want == plain || std::strncmp(pd.impl_info_str(), "ref", 3) == 0) return;  // nothing to gain
    dnnl::memory packed(want, Engine());
    dnnl::memory src = Wrap(*b, plain);
    WithStream(1, what, [&](dnnl::stream& s) { dnnl::reorder(src, packed).execute(s, src, packed); });
    dtype_ = b->dtype();
    shape_ = b->shape();
    source_ = std::move(b);
    plain_desc_ = plain;
    packed_desc_ = want;
    packed_ = packed;
  } catch (const dnnl::error&) {
    // No preferred layout for this problem: the kernel runs on the plain matrix.
    source_.reset();
    packed_ = dnnl::memory();
  }
}

int64_t MatMulWeights::bytes() const {
  int64_t total = packed_ ? static_cast<int64_t>(packed_desc_.get_size()) : 0;
  if (released_ && unpacked_->plain.defined()) total += static_cast<int64_t>(unpacked_->plain.nbytes());
  return total;
}

bool MatMulWeights::ReleaseSource() {
  if (!packed_) return false;
  source_.reset();
  released_ = true;
  return true;
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
