// STFT (opset 17): signal [batch, length, 1 or 2] is cut into frames of frame_length samples every frame_step
// samples (frames = 1 + (length - frame_length) / frame_step), each frame is multiplied by `window` (default all
// ones) and transformed with a DFT of length frame_length. Output [batch, frames, bins, 2] with
// bins = frame_length / 2 + 1 when onesided (default 1) else frame_length. frame_length defaults to the window
// length.
#include <complex>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/signal_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Stft : public OpKernel {
 public:
  explicit Stft(const ir::Node& node) : onesided_(node.GetInt("onesided", 1) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
      throw InvalidArgumentError(what + ": signal must have shape [batch, length, 1 or 2], got " +
                                 ShapeToString(x.shape()));
    const int64_t step = ReadScalarInt(ctx.required_input(1), what, "frame_step");
    const Tensor* window = ctx.input(2);
    if (window && window->rank() != 1)
      throw InvalidArgumentError(what + ": window must be 1-D, got " + ShapeToString(window->shape()));
    if (window && window->dtype() != x.dtype())
      throw InvalidArgumentError(what + ": window dtype differs from signal dtype");
    int64_t frame_len = -1;
    if (const Tensor* fl = ctx.input(3)) frame_len = ReadScalarInt(*fl, what, "frame_length");
    if (window) {
      if (frame_len >= 0 && frame_len != window->dim(0))
        throw InvalidArgumentError(what + ": frame_length " + std::to_string(frame_len) +
                                   " differs from the window length " + std::to_string(window->dim(0)));
      frame_len = window->dim(0);
    }
    if (frame_len < 0) throw InvalidArgumentError(what + ": either window or frame_length must be given");
    const int64_t batch = x.dim(0), length = x.dim(1), comps = x.dim(2);
    if (step < 1) throw InvalidArgumentError(what + ": frame_step must be positive, got " + std::to_string(step));
    if (frame_len < 1 || frame_len > length)
      throw InvalidArgumentError(what + ": frame_length " + std::to_string(frame_len) +
                                 " must be in [1, signal length " + std::to_string(length) + "]");
    const int64_t frames = 1 + (length - frame_len) / step;
    const int64_t bins = onesided_ ? frame_len / 2 + 1 : frame_len;
    Tensor& y = ctx.Output(0, x.dtype(), {batch, frames, bins, 2});
    Dispatch(FloatTypes{}, x.dtype(), what, [&](auto tag) {
      using T = decltype(tag);
      auto load = [](T v) { return static_cast<double>(static_cast<Acc<T>>(v)); };
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<std::complex<double>> buf;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t f = 0; f < frames; ++f) {
          buf.assign(static_cast<size_t>(frame_len), {0.0, 0.0});
          for (int64_t j = 0; j < frame_len; ++j) {
            const T* p = in + (b * length + f * step + j) * comps;
            const double w = window ? load(window->data<T>()[j]) : 1.0;
            buf[static_cast<size_t>(j)] = {load(p[0]) * w, comps == 2 ? load(p[1]) * w : 0.0};
          }
          DftInPlace(buf, false);
          T* o = out + (b * frames + f) * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            o[2 * k] = T(static_cast<Acc<T>>(buf[static_cast<size_t>(k)].real()));
            o[2 * k + 1] = T(static_cast<Acc<T>>(buf[static_cast<size_t>(k)].imag()));
          }
        }
      }
    });
  }

 private:
  bool onesided_;
};

}  // namespace

void RegisterStftKernels(KernelRegistry& r) {
  r.Add({.op = "STFT",
         .since = 17,
         .types = {{"T1", dtypes::Floats()}, {"T2", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Stft>,
         .host_inputs = {1, 3}});
}

}  // namespace ferry::ref
