// The window geometry of the op-semantics layer (src/semantics/window.h): one spatial dim of a Conv / pool window
// and of a ConvTranspose under every auto_pad, ceil_mode and dilations, the attribute-length rules, overflow, and
// the whole-window resolvers the kernels call.
#include "semantics/window.h"

#include <gtest/gtest.h>

#include <climits>

#include "ferry/error.h"

namespace ferry::semantics {
namespace {

WindowDim Dim(int64_t out, int64_t pad_begin, int64_t pad_end) { return {out, pad_begin, pad_end}; }

::testing::AssertionResult Is(const std::optional<WindowDim>& got, const WindowDim& want) {
  if (!got) return ::testing::AssertionFailure() << "nullopt";
  if (got->out != want.out || got->pad_begin != want.pad_begin || got->pad_end != want.pad_end) {
    return ::testing::AssertionFailure() << "got {" << got->out << ", " << got->pad_begin << ", " << got->pad_end
                                         << "}, want {" << want.out << ", " << want.pad_begin << ", " << want.pad_end
                                         << "}";
  }
  return ::testing::AssertionSuccess();
}

TEST(SemanticsWindow, ParsesAutoPad) {
  EXPECT_EQ(ParseAutoPad("NOTSET"), AutoPad::kNotSet);
  EXPECT_EQ(ParseAutoPad(""), AutoPad::kNotSet);
  EXPECT_EQ(ParseAutoPad("SAME_UPPER"), AutoPad::kSameUpper);
  EXPECT_EQ(ParseAutoPad("SAME_LOWER"), AutoPad::kSameLower);
  EXPECT_EQ(ParseAutoPad("VALID"), AutoPad::kValid);
  EXPECT_EQ(ParseAutoPad("same_upper"), std::nullopt);
  EXPECT_NE(AutoPadError("SAME").find("'SAME' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"),
            std::string::npos);
}

TEST(SemanticsWindow, ExplicitPadsStridesAndDilations) {
  // in 7 + pads 1 + 2 = 10, dilated kernel (3-1)*2+1 = 5: (10 - 5) / 2 + 1 = 3
  EXPECT_TRUE(Is(ResolveWindowDim(7, 3, 2, 2, 1, 2, AutoPad::kNotSet, false), Dim(3, 1, 2)));
  // VALID ignores the explicit pads: (7 - 5) / 2 + 1 = 2
  EXPECT_TRUE(Is(ResolveWindowDim(7, 3, 2, 2, 1, 2, AutoPad::kValid, false), Dim(2, 0, 0)));
  // the window does not fit: out 0
  EXPECT_EQ(ResolveWindowDim(2, 3, 1, 1, 0, 0, AutoPad::kNotSet, false)->out, 0);
}

TEST(SemanticsWindow, SamePutsTheOddPadAtTheEndForUpperAndTheBeginningForLower) {
  // in 5, stride 2: out 3; total = (3 - 1) * 2 + 4 - 5 = 3
  EXPECT_TRUE(Is(ResolveWindowDim(5, 4, 2, 1, 9, 9, AutoPad::kSameUpper, false), Dim(3, 1, 2)));
  EXPECT_TRUE(Is(ResolveWindowDim(5, 4, 2, 1, 9, 9, AutoPad::kSameLower, false), Dim(3, 2, 1)));
  // no padding needed: never negative
  EXPECT_TRUE(Is(ResolveWindowDim(8, 1, 2, 1, 0, 0, AutoPad::kSameUpper, false), Dim(4, 0, 0)));
  // an empty input gives an empty output
  EXPECT_EQ(ResolveWindowDim(0, 3, 1, 1, 0, 0, AutoPad::kSameUpper, false)->out, 0);
}

TEST(SemanticsWindow, CeilModeDropsAWindowThatWouldStartInTheEndPadding) {
  // in 6, kernel 2, stride 2, pad_end 1: span 5 -> floor 3, ceil 4; the 4th window starts at 6 = in + pad_begin
  EXPECT_EQ(ResolveWindowDim(6, 2, 2, 1, 0, 1, AutoPad::kNotSet, false)->out, 3);
  EXPECT_EQ(ResolveWindowDim(6, 2, 2, 1, 0, 1, AutoPad::kNotSet, true)->out, 3);
  // in 5, kernel 2, stride 2: span 3 -> floor 2, ceil 3 (the last window starts at 4, inside the input)
  EXPECT_EQ(ResolveWindowDim(5, 2, 2, 1, 0, 0, AutoPad::kNotSet, false)->out, 2);
  EXPECT_EQ(ResolveWindowDim(5, 2, 2, 1, 0, 0, AutoPad::kNotSet, true)->out, 3);
}

TEST(SemanticsWindow, OverflowIsNotAnExtent) {
  EXPECT_EQ(ResolveWindowDim(4, INT64_MAX, 1, 2, 0, 0, AutoPad::kNotSet, false), std::nullopt);
  EXPECT_EQ(ResolveWindowDim(4, 2, 1, 1, INT64_MAX, 1, AutoPad::kNotSet, false), std::nullopt);
  EXPECT_EQ(ResolveConvTransposeDim(INT64_MAX, 3, 2, 1, 0, 0, 0, AutoPad::kNotSet, std::nullopt), std::nullopt);
  EXPECT_EQ(MaxUnpoolOutputDim(INT64_MAX, 2, 2, 0, 0), std::nullopt);
}

TEST(SemanticsWindow, KeepsTheExtentOnlyForAnIdentityWindow) {
  EXPECT_TRUE(WindowKeepsExtent(3, 1, 1, 5, 5, AutoPad::kSameUpper));
  EXPECT_FALSE(WindowKeepsExtent(3, 2, 1, 0, 0, AutoPad::kSameUpper));
  EXPECT_TRUE(WindowKeepsExtent(1, 1, 4, 0, 0, AutoPad::kNotSet));
  EXPECT_FALSE(WindowKeepsExtent(1, 1, 1, 0, 1, AutoPad::kNotSet));
  EXPECT_TRUE(WindowKeepsExtent(1, 1, 1, 0, 1, AutoPad::kValid));
  EXPECT_FALSE(WindowKeepsExtent(3, 1, 1, 1, 1, AutoPad::kNotSet));
}

TEST(SemanticsWindow, ConvTransposeFollowsTheOnnxFormulas) {
  // ONNX test_convtranspose_pad: X [1,1,3,3], W [1,2,3,3], strides [3,2], output_padding [1,1] -> Y [1,2,10,8]
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 3, 1, 0, 0, 1, AutoPad::kNotSet, std::nullopt), Dim(10, 0, 0)));
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 2, 1, 0, 0, 1, AutoPad::kNotSet, std::nullopt), Dim(8, 0, 0)));
  // explicit pads: 3 * 2 + 3 - 1 - 2 = 6 (test_convtranspose_pads: strides [3,2], pads [1,2,1,2] -> [7,3])
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 3, 1, 1, 1, 0, AutoPad::kNotSet, std::nullopt), Dim(7, 1, 1)));
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 2, 1, 2, 2, 0, AutoPad::kNotSet, std::nullopt), Dim(3, 2, 2)));
  // SAME_*: out = in * stride; total = 2 * 2 + 3 - 6 = 1, the odd pad at the end (UPPER) or the beginning
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 2, 1, 7, 7, 0, AutoPad::kSameUpper, std::nullopt), Dim(6, 0, 1)));
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 2, 1, 7, 7, 0, AutoPad::kSameLower, std::nullopt), Dim(6, 1, 0)));
  // output_shape wins over pads; NOTSET puts the odd pad at the beginning: natural 8, out 5, total 3
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 2, 1, 7, 7, 1, AutoPad::kNotSet, 5), Dim(5, 2, 1)));
  // an output_shape past the natural extent: no negative pads
  EXPECT_TRUE(Is(ResolveConvTransposeDim(3, 3, 2, 1, 0, 0, 0, AutoPad::kNotSet, 9), Dim(9, 0, 0)));
  // nothing remains
  EXPECT_EQ(ResolveConvTransposeDim(1, 1, 1, 1, 1, 0, 0, AutoPad::kNotSet, std::nullopt)->out, 0);
}

TEST(SemanticsWindow, OutputPaddingHoldsOneValuePerSpatialAxis) {
  const std::vector<int64_t> one{1}, two{1, 1}, four{1, 1, 1, 1};
  EXPECT_EQ(OutputPaddingError({}, 2), "");
  EXPECT_EQ(OutputPaddingError(two, 2), "");
  EXPECT_EQ(OutputPaddingError(one, 2),
            "attribute output_padding = [1] has 1 values, expected 2 (one per spatial dimension)");
  // twice the rank is not ONNX either (ONNX Runtime refuses it too)
  EXPECT_EQ(OutputPaddingError(four, 2),
            "attribute output_padding = [1,1,1,1] has 4 values, expected 2 (one per spatial dimension)");
}

TEST(SemanticsWindow, OutputShapeMayNameTheBatchAndChannelDims) {
  EXPECT_EQ(SpatialOutputShape({10, 8}, 2), (std::vector<int64_t>{10, 8}));
  EXPECT_EQ(SpatialOutputShape({1, 2, 10, 8}, 2), (std::vector<int64_t>{10, 8}));
  EXPECT_EQ(SpatialOutputShape({2, 10, 8}, 2), std::nullopt);
  EXPECT_EQ(OutputShapeError({2, 10, 8}, 2), "output_shape [2,10,8] must have 2 values");
}

TEST(SemanticsWindow, ResolveWindowChecksLengthsAndRefusesAnEmptyOutput) {
  WindowAttrs a;
  a.pads = {1, 1};
  const std::vector<int64_t> in{5, 5}, k{3, 3};
  EXPECT_THROW(ResolveWindow(a, in, k, false, "node 'p'"), InvalidArgumentError);
  a.pads = {1, 1, 1, 1};
  a.strides = {2, 1};
  const WindowGeometry g = ResolveWindow(a, in, k, false, "node 'p'");
  EXPECT_EQ(g.out, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(g.pad_begin, (std::vector<int64_t>{1, 1}));
  a.pads.clear();
  a.strides.clear();
  const std::vector<int64_t> small{2, 5};
  try {
    ResolveWindow(a, small, k, false, "node 'p'");
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'p': input spatial shape [2,5] is too small for kernel [3,3]"),
              std::string::npos)
        << e.what();
  }
}

TEST(SemanticsWindow, ResolveConvTransposeRefusesAWrongOutputPaddingAsAnInvalidModel) {
  ConvTransposeAttrs a;
  a.window.strides = {2, 2};
  a.output_padding = {1};
  try {
    ResolveConvTranspose(a, {1, 1, 3, 3}, {1, 2, 3, 3}, "node 'up'");
    ADD_FAILURE() << "no error";
  } catch (const InvalidModelError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'up': attribute output_padding = [1] has 1 values, expected 2 (one per spatial dimension)");
  }
  a.output_padding = {1, 0};
  const ConvTransposeShape s = ResolveConvTranspose(a, {1, 1, 3, 3}, {1, 2, 3, 3}, "node 'up'");
  EXPECT_EQ(s.y_shape, (Shape{1, 2, 8, 7}));
}

}  // namespace
}  // namespace ferry::semantics
