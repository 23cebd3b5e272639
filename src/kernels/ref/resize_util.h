// The interpolation engine shared by Resize and Upsample.
//
// Resizing is separable: each axis maps every output coordinate to a few input "taps" (index, weight), computed
// once per axis (nearest: 1 tap, linear: 2, cubic: 4, antialiased: as many as the downscaled kernel covers).
// An output element is the sum over the cartesian product of its axes' taps of the weight product times the
// input element. The coordinate maths follows the ONNX reference implementation (onnx/reference/ops/op_resize.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"

namespace ferry::ref {

struct ResizeParams {
  enum class Mode { kNearest, kLinear, kCubic };
  enum class Coord {
    kHalfPixel,
    kHalfPixelSymmetric,
    kPytorchHalfPixel,
    kAlignCorners,
    kAsymmetric,
    kTfHalfPixelForNN,
    kTfCropAndResize,
  };
  // kSimple: Resize-10 / Upsample (as ONNX Runtime): floor when upsampling, ceil when downsampling.
  enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0;  // tf_crop_and_resize: value for samples outside the input
};

// Parsers for the string attributes; return false on an unknown value.
bool ParseResizeMode(const std::string& s, ResizeParams::Mode* out);
bool ParseResizeCoord(const std::string& s, ResizeParams::Coord* out);
bool ParseNearestMode(const std::string& s, ResizeParams::NearestMode* out);

// Resizes x into y (already allocated with the output shape). `scales[a]` is the scale of axis a used in the
// coordinate transform (output/input size when sizes were given); `roi_start`/`roi_end` are per axis (only read
// for tf_crop_and_resize). Linear and cubic need a numeric or complex x (complex interpolates its real and
// imaginary parts alike; the extrapolation value is real); nearest copies any element type.
// Whether `mode` can run on element type `t`: bool and string have no weighted sum, so only nearest.
// Returns "" or the reason, for the Resize / Upsample predicates ("Resize: mode=linear on tensor(string) ...").
std::string ResizeModeReason(const std::string& op, const std::string& mode, DataType t);

void ResizeTensor(const Tensor& x, Tensor& y, const std::vector<double>& scales, const std::vector<double>& roi_start,
                  const std::vector<double>& roi_end, const ResizeParams& params, int threads, const std::string& what);

}  // namespace ferry::ref
