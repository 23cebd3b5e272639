// MelWeightMatrix (opset 17): a [dft_length / 2 + 1, num_mel_bins] matrix of triangular filters spaced evenly on
// the mel scale (mel = 2595 log10(1 + hz / 700)) between lower_edge_hertz and upper_edge_hertz, following the
// ONNX reference implementation: num_mel_bins + 2 edge frequencies are mapped to spectrogram bins
// floor((dft_length + 1) * hz / sample_rate); filter i rises linearly from edge i to edge i+1 and falls to
// edge i+2. The output type is `output_datatype` (default float).
#include <cmath>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/signal_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class MelWeightMatrix : public OpKernel {
 public:
  explicit MelWeightMatrix(const ir::Node& node) {
    const int64_t dt = node.GetInt("output_datatype", static_cast<int64_t>(DataType::kFloat));
    if (!IsKnownDataType(static_cast<int32_t>(dt)))
      throw InvalidModelError(node.Describe() + ": output_datatype " + std::to_string(dt) + " is not a data type");
    out_ = static_cast<DataType>(dt);
  }

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const int64_t mel_bins = ReadScalarInt(ctx.required_input(0), what, "num_mel_bins");
    const int64_t dft_length = ReadScalarInt(ctx.required_input(1), what, "dft_length");
    const int64_t sample_rate = ReadScalarInt(ctx.required_input(2), what, "sample_rate");
    const double lower = ReadScalarDouble(ctx.required_input(3), what, "lower_edge_hertz");
    const double upper = ReadScalarDouble(ctx.required_input(4), what, "upper_edge_hertz");
    if (mel_bins < 1 || dft_length < 1 || sample_rate < 1)
      throw InvalidArgumentError(what + ": num_mel_bins, dft_length and sample_rate must be positive");
    const int64_t spec_bins = dft_length / 2 + 1;
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower), high_mel = to_mel(upper);
    const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
      const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      if (!(bin >= 0 && bin < static_cast<double>(spec_bins)))
        throw InvalidArgumentError(what + ": the mel edge at " + std::to_string(hz) +
                                   " Hz falls outside the spectrogram (check lower/upper_edge_hertz against "
                                   "sample_rate / 2)");
      edges[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
    }
    std::vector<double> m(static_cast<size_t>(spec_bins * mel_bins), 0.0);
    auto at = [&](int64_t j, int64_t i) -> double& { return m[static_cast<size_t>(j * mel_bins + i)]; };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t lo = edges[static_cast<size_t>(i)], mid = edges[static_cast<size_t>(i + 1)],
                    hi = edges[static_cast<size_t>(i + 2)];
      if (mid == lo) {
        at(mid, i) = 1.0;
      } else {
        for (int64_t j = lo; j <= mid; ++j) at(j, i) = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
      }
      if (hi > mid)
        for (int64_t j = mid; j < hi; ++j) at(j, i) = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
    }
    Tensor& y = ctx.Output(0, out_, {spec_bins, mel_bins});
    Dispatch(NumericTypes{}, out_, what, [&](auto tag) {
      using T = decltype(tag);
      T* o = y.data<T>();
      for (size_t k = 0; k < m.size(); ++k) o[k] = T(static_cast<Acc<T>>(m[k]));
    });
  }

 private:
  DataType out_ = DataType::kFloat;
};

}  // namespace

void RegisterMelWeightMatrixKernels(KernelRegistry& r) {
  r.Add({.op = "MelWeightMatrix",
         .since = 17,
         .types = {{"T1", {DataType::kInt32, DataType::kInt64}}, {"T2", dtypes::Floats()}, {"T3", dtypes::Numeric()}},
         .create = MakeKernel<MelWeightMatrix>,
         .host_inputs = {0, 1, 2, 3, 4}});
}

}  // namespace ferry::ref
