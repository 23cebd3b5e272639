// MelWeightMatrix (opset 17): a [dft_length / 2 + 1, num_mel_bins] matrix of triangular filters spaced evenly on
// the mel scale (mel = 2595 log10(1 + hz / 700)) between lower_edge_hertz and upper_edge_hertz, following the
// ONNX reference implementation: num_mel_bins + 2 edge frequencies are mapped to spectrogram bins
// floor((dft_length + 1) * hz / sample_rate); filter i rises linearly from edge i to edge i+1 and falls to
// edge i+2. The output type is `output_datatype` (default float). The inputs are data: when they are known before
// the run Prepare resolves the filter edges and Y's shape, otherwise Y is dynamic.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/signal_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The filters' geometry from the five scalar inputs (their data): mel_bins filters over spec_bins spectrogram bins,
// filter i spanning edges[i] .. edges[i + 2].
struct MelPlan {
  int64_t mel_bins = 0, spec_bins = 0;
  std::vector<int64_t> edges;
};

// Throws InvalidArgumentError naming `what` for inputs that are not scalars of their types, sizes that are not
// positive, or edges outside the spectrogram. `in` holds inputs 0..4.
MelPlan ResolveMel(const Tensor* const in[5], const std::string& what) {
  const int64_t mel_bins = ReadScalarInt(*in[0], what, "num_mel_bins");
  const int64_t dft_length = ReadScalarInt(*in[1], what, "dft_length");
  const int64_t sample_rate = ReadScalarInt(*in[2], what, "sample_rate");
  const double lower = ReadScalarDouble(*in[3], what, "lower_edge_hertz");
  const double upper = ReadScalarDouble(*in[4], what, "upper_edge_hertz");
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1)
    throw InvalidArgumentError(what + ": num_mel_bins, dft_length and sample_rate must be positive");
  MelPlan p;
  p.mel_bins = mel_bins;
  p.spec_bins = dft_length / 2 + 1;
  const int64_t spec_bins = p.spec_bins;
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low_mel = to_mel(lower), high_mel = to_mel(upper);
  const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  p.edges.resize(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
    const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    if (!(bin >= 0 && bin < static_cast<double>(spec_bins)))
      throw InvalidArgumentError(what + ": the mel edge at " + std::to_string(hz) +
                                 " Hz falls outside the spectrogram (check lower/upper_edge_hertz against "
                                 "sample_rate / 2)");
    p.edges[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }
  return p;
}

class MelWeightMatrix : public OpKernel {
 public:
  explicit MelWeightMatrix(const ir::Node& node) {
    const int64_t dt = node.GetInt("output_datatype", static_cast<int64_t>(DataType::kFloat));
    if (!IsKnownDataType(static_cast<int32_t>(dt)))
      throw InvalidModelError(node.Describe() + ": output_datatype " + std::to_string(dt) + " is not a data type");
    out_ = static_cast<DataType>(dt);
  }

  // The inputs' shapes and types; when all five are known before the run, the filters' geometry and Y's shape,
  // else Y is dynamic (Compute resolves the data with the same function).
  void Prepare(PrepareContext& ctx) const override {
    const char* names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
    const Tensor* known[5] = {};
    bool all_known = true;
    for (int i = 0; i < 5; ++i) {
      const InputSpec& t = ctx.tensor_input(i);
      if (ShapeElementCount(t.shape) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": " + names[i] + " must be a scalar, got shape " +
                                   ShapeToString(t.shape));
      }
      if (i < 3 && t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64) {
        throw InvalidArgumentError(ctx.Describe() + ": " + names[i] + ": expected an int32 or int64 tensor, got " +
                                   std::string(DataTypeName(t.dtype)));
      }
      if (i >= 3) Dispatch(NumericTypes{}, t.dtype, ctx.Describe() + ": " + names[i], [](auto) {});
      known[i] = ctx.constant(i);
      all_known = all_known && known[i];
    }
    Dispatch(NumericTypes{}, out_, ctx.Describe(), [](auto) {});  // output_datatype is a numeric type
    if (!all_known) return ctx.SetOutputDynamic(0);
    const MelPlan& p = ctx.EmplaceState(ResolveMel(known, ctx.Describe()));
    ctx.SetOutput(0, out_, {p.spec_bins, p.mel_bins});
  }

  void Compute(KernelContext& ctx) const override {
    const MelPlan* prepared = ctx.state_if_any<MelPlan>();
    MelPlan resolved;
    if (!prepared) {  // inputs read from the run's data: their errors are the data's (they name the node)
      const Tensor* in[5];
      for (int i = 0; i < 5; ++i) in[i] = &ctx.required_input(i);
      resolved = ResolveMel(in, ctx.Describe());
    }
    const MelPlan& p = prepared ? *prepared : resolved;
    const int64_t mel_bins = p.mel_bins, spec_bins = p.spec_bins;
    const std::vector<int64_t>& edges = p.edges;
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
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, out_, {spec_bins, mel_bins});
    Dispatch(NumericTypes{}, out_, ctx, [&](auto tag) {
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
