// STFT (opset 17): signal [batch, length, 1 or 2] is cut into frames of frame_length samples every frame_step
// samples (frames = 1 + (length - frame_length) / frame_step), each frame is multiplied by `window` (default all
// ones) and transformed with a DFT of length frame_length. Output [batch, frames, bins, 2] with
// bins = frame_length / 2 + 1 when onesided (default 1) else frame_length. frame_length defaults to the window
// length. Prepare checks the inputs' shapes and resolves the frames when frame_step and frame_length are
// constants; scalars read at run time are resolved (and their errors raised) by Compute.
#include <complex>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/signal_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The frames: every `step` samples, `frame_len` long, `bins` DFT bins each.
struct Geometry {
  int64_t step = 0, frame_len = 0, frames = 0, bins = 0;
};

class Stft : public OpKernel {
 public:
  explicit Stft(const ir::Node& node) : onesided_(node.GetInt("onesided", 1) != 0) {}

  // The shapes and dtypes of signal, frame_step, window and frame_length; the geometry when frame_step and
  // frame_length are constants (else Y is dynamic and Compute resolves it from the run's scalars).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() != 3 || (x.shape[2] != 1 && x.shape[2] != 2)) {
      throw InvalidArgumentError(ctx.Describe() + ": signal must have shape [batch, length, 1 or 2], got " +
                                 ShapeToString(x.shape) + " (" + ctx.InputString(0) + ")");
    }
    CheckScalar(ctx, 1, "frame_step");
    const InputSpec* window = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    if (window && window->shape.size() != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": window must be 1-D, got " + ShapeToString(window->shape) + " (" +
                                 ctx.InputString(2) + ")");
    }
    if (window && window->dtype != x.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": window dtype differs from signal dtype (" + ctx.InputString(2) +
                                 ", " + ctx.InputString(0) + ")");
    }
    const bool has_fl = ctx.has_input(3);
    if (has_fl) CheckScalar(ctx, 3, "frame_length");
    if (!ctx.constant(1) || (has_fl && !ctx.constant(3))) return ctx.SetOutputDynamic(0);
    const Geometry& g = ctx.EmplaceState(Resolve(x.shape, window ? window->shape[0] : -1, *ctx.constant(1),
                                                 has_fl ? ctx.constant(3) : nullptr, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, {x.shape[0], g.frames, g.bins, 2});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* window = ctx.input(2);
    const Geometry* prepared = ctx.state_if_any<Geometry>();
    Geometry resolved;
    if (!prepared) {  // frame_step or frame_length read at run time: their errors are the data's (naming the node)
      resolved = Resolve(x.shape(), window ? window->dim(0) : -1, ctx.required_input(1), ctx.input(3),
                         ctx.Describe());
    }
    const Geometry& g = prepared ? *prepared : resolved;
    const int64_t batch = x.dim(0), length = x.dim(1), comps = x.dim(2);
    const int64_t step = g.step, frame_len = g.frame_len, frames = g.frames, bins = g.bins;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), {batch, frames, bins, 2});
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
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

  // Prepare's check of scalar input i (`name`): given, one element, int32 or int64 (what ReadScalarInt reads).
  static void CheckScalar(const PrepareContext& ctx, int i, const char* name) {
    const InputSpec& t = ctx.tensor_input(i);
    if (ShapeElementCount(t.shape) != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": " + name + " must be a scalar, got shape " +
                                 ShapeToString(t.shape) + " (" + ctx.InputString(i) + ")");
    }
    if (t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": " + name + ": expected an int32 or int64 tensor, got " +
                                 ctx.InputString(i));
    }
  }

  // The frames of a signal of `x_shape` for the frame_step and frame_length tensors (`fl` null when omitted)
  // and a window of `window_len` samples (-1: none); throws InvalidArgumentError naming `what`.
  Geometry Resolve(const Shape& x_shape, int64_t window_len, const Tensor& step_t, const Tensor* fl,
                   const std::string& what) const {
    Geometry g;
    g.step = ReadScalarInt(step_t, what, "frame_step");
    int64_t frame_len = -1;
    if (fl) frame_len = ReadScalarInt(*fl, what, "frame_length");
    if (window_len >= 0) {
      if (frame_len >= 0 && frame_len != window_len)
        throw InvalidArgumentError(what + ": frame_length " + std::to_string(frame_len) +
                                   " differs from the window length " + std::to_string(window_len));
      frame_len = window_len;
    }
    if (frame_len < 0) throw InvalidArgumentError(what + ": either window or frame_length must be given");
    const int64_t length = x_shape[1];
    if (g.step < 1) throw InvalidArgumentError(what + ": frame_step must be positive, got " + std::to_string(g.step));
    if (frame_len < 1 || frame_len > length)
      throw InvalidArgumentError(what + ": frame_length " + std::to_string(frame_len) +
                                 " must be in [1, signal length " + std::to_string(length) + "]");
    g.frame_len = frame_len;
    g.frames = 1 + (length - frame_len) / g.step;
    g.bins = onesided_ ? frame_len / 2 + 1 : frame_len;
    return g;
  }
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
