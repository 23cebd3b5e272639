// oneDNN's convolution implementations on ResNet-50's layer shapes, one thread: for each shape and each activation
// layout (nChw16c, nChw8c, nchw, nhwc, nChw16c Winograd), the implementation oneDNN picks, its median time and the
// direct-convolution-equivalent GFLOP/s. With --cold the
// weights are evicted before every call (eight copies used in turn, and a 64 MiB buffer touched), as in a model
// run, where 100 MB of weights pass through the caches once per inference; without it they stay cached.
// src/kernels/cpu/conv.cc quotes these figures for its choice of kernel.
//   build/bin/ferry-conv-impls [--batch N] [--cold] [--calls N]
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct ConvShape {
  const char* name;
  int in_channels, out_channels, in_size, kernel, stride, pad;
};

// ResNet-50 (torchvision, v1.5): the stem, one 3x3 of each stage at stride 1, the stride-2 3x3 ones, and 1x1s;
// then FCN-ResNet50's head (a 3x3 from 2048 channels at 28x28: the largest Winograd scratchpad in the model zoo),
// and a quarter of its output channels.
constexpr ConvShape kShapes[] = {
    {"conv1 7x7/2", 3, 64, 224, 7, 2, 3},         {"layer1 3x3", 64, 64, 56, 3, 1, 1},
    {"layer2.0 3x3/2", 128, 128, 56, 3, 2, 1},    {"layer2 3x3", 128, 128, 28, 3, 1, 1},
    {"layer3.0 3x3/2", 256, 256, 28, 3, 2, 1},    {"layer3 3x3", 256, 256, 14, 3, 1, 1},
    {"layer4.0 3x3/2", 512, 512, 14, 3, 2, 1},    {"layer4 3x3", 512, 512, 7, 3, 1, 1},
    {"layer1 1x1 256->64", 256, 64, 56, 1, 1, 0}, {"layer3 1x1 1024->256", 1024, 256, 14, 1, 1, 0},
    {"layer4 1x1 2048->512", 2048, 512, 7, 1, 1, 0}, {"layer4.0 1x1/2 1024->2048", 1024, 2048, 14, 1, 2, 0},
    {"fcn head 3x3 2048->512", 2048, 512, 28, 3, 1, 1}, {"fcn head 3x3 2048->128", 2048, 128, 28, 3, 1, 1},
    {"fcn head 3x3 2048->64", 2048, 64, 28, 3, 1, 1}, {"fcn head 3x3 512->512", 512, 512, 28, 3, 1, 1},
};

struct Variant {
  const char* name;
  Tag activations;
  dnnl::algorithm algorithm;
};

constexpr Variant kVariants[] = {
    {"nChw16c", Tag::nChw16c, dnnl::algorithm::convolution_direct},
    {"nChw8c", Tag::nChw8c, dnnl::algorithm::convolution_direct},
    {"nchw", Tag::nchw, dnnl::algorithm::convolution_direct},
    {"nhwc", Tag::nhwc, dnnl::algorithm::convolution_direct},
    {"winograd", Tag::nChw16c, dnnl::algorithm::convolution_winograd},
};

constexpr int kWeightCopies = 8;

void Fill(const memory& m, float value) {
  std::fill_n(static_cast<float*>(m.get_data_handle()), m.get_desc().get_size() / sizeof(float), value);
}

// Median milliseconds of `calls` calls of the convolution, or a negative value when oneDNN has no implementation;
// the implementation's name and the scratchpad it asks for.
double Time(const dnnl::engine& engine, dnnl::stream& stream, const ConvShape& s, const Variant& v, int batch,
            bool cold, int calls, std::string* impl, double* scratch_mib) {
  const int out_size = (s.in_size + 2 * s.pad - s.kernel) / s.stride + 1;
  const auto f32 = memory::data_type::f32;
  const memory::desc src({batch, s.in_channels, s.in_size, s.in_size}, f32, v.activations);
  const memory::desc dst({batch, s.out_channels, out_size, out_size}, f32, v.activations);
  const memory::desc weights({s.out_channels, s.in_channels, s.kernel, s.kernel}, f32, Tag::any);
  const memory::desc bias({s.out_channels}, f32, Tag::x);
  dnnl::primitive_attr attr;  // a user scratchpad, as Ferry's kernels have (it narrows oneDNN's choice)
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, v.algorithm, src, weights, bias, dst,
                                        {s.stride, s.stride}, {s.pad, s.pad}, {s.pad, s.pad}),
        attr, engine);
  } catch (const dnnl::error&) {
    return -1.0;
  }
  *impl = pd.impl_info_str();
  *scratch_mib = static_cast<double>(pd.scratchpad_desc().get_size()) / (1 << 20);
  memory x(pd.src_desc(), engine), b(pd.bias_desc(), engine), y(pd.dst_desc(), engine),
      scratch(pd.scratchpad_desc(), engine);
  Fill(x, 0.5f);
  Fill(b, 0.0f);
  std::vector<memory> w;
  for (int i = 0; i < (cold ? kWeightCopies : 1); ++i) {
    w.emplace_back(pd.weights_desc(), engine);
    Fill(w.back(), 0.01f);
  }
  std::vector<char> evict(cold ? 64 << 20 : 0, 1);
  const dnnl::convolution_forward conv(pd);
  std::vector<double> ms;
  for (int i = 0; i < calls; ++i) {
    for (size_t j = 0; j < evict.size(); j += 64) ++evict[j];
    const auto t0 = std::chrono::steady_clock::now();
    conv.execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w[i % w.size()]}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y},
                           {DNNL_ARG_SCRATCHPAD, scratch}});
    stream.wait();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + calls / 2, ms.end());
  return ms[calls / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int batch = 1, calls = 40;
  bool cold = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cold") == 0) {
      cold = true;
    } else if (std::strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      batch = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--batch N] [--cold] [--calls N]\n", argv[0]);
      return 2;
    }
  }
  if (batch < 1 || calls < 1) {
    std::fprintf(stderr, "--batch and --calls must be at least 1\n");
    return 2;
  }
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::printf("batch %d, %s weights, median of %d calls (set OMP_NUM_THREADS for the thread count)\n", batch,
              cold ? "cold" : "cached", calls);
  std::printf("%-26s %-9s %-32s %9s %8s %8s\n", "layer", "layout", "oneDNN implementation", "ms", "GFLOP/s",
              "scr MiB");
  for (const ConvShape& s : kShapes) {
    for (const Variant& v : kVariants) {
      std::string impl;
      double scratch_mib = 0;
      const double ms = Time(engine, stream, s, v, batch, cold, calls, &impl, &scratch_mib);
      if (ms < 0 || impl.rfind("ref", 0) == 0) continue;  // none, or oneDNN's slow reference kernel
      const double out = (s.in_size + 2 * s.pad - s.kernel) / s.stride + 1;
      const double gflop = 2.0 * batch * s.out_channels * s.in_channels * s.kernel * s.kernel * out * out * 1e-9;
      std::printf("%-26s %-9s %-32s %9.3f %8.1f %8.1f\n", s.name, v.name, impl.c_str(), ms, gflop / (ms * 1e-3),
                  scratch_mib);
    }
  }
  return 0;
}
