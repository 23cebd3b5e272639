// Layout helpers of the `ferry bench --plot` chart (tools/bench_svg.h), apart from the drawing so that tests can
// check them alone: value axes (linear from 0, or log10 once the values span more than a decade, so that one
// outlier does not flatten every other curve), text extents, and the placement of labels that must not overlap.
#pragma once

#include <string_view>
#include <vector>

namespace ferry::tools {

// Axis ticks from 0 to a "nice" bound at or above `max` (steps of 1, 2, 2.5 or 5 times a power of ten), about
// `target` of them; 0..1 when max is not a positive finite number.
std::vector<double> NiceTicks(double max, int target = 5);

struct BenchAxis {
  bool log = false;           // log10 scale; lo > 0 then
  double lo = 0, hi = 1;      // the axis' ends: the first and last tick
  std::vector<double> ticks;  // ascending
  // Where `v` lies from lo (0) to hi (1), clamped to [0, 1]. NaN, infinities and (on a log axis) values <= 0
  // give 0: they are drawn at the bottom.
  double Fraction(double v) const;
};

// An axis for `values` (only the positive finite ones set its range). When the largest exceeds `log_span` times
// the smallest, a log10 axis: its ticks are 1, 2 and 5 times powers of ten from the largest at or below the
// smallest value to the smallest at or above the largest, when that makes at most 8 ticks; otherwise powers of
// ten only (every k-th power when more than 8 decades). Else a linear axis from 0 with NiceTicks.
BenchAxis ChooseBenchAxis(const std::vector<double>& values, double log_span = 10);

// A rectangle in SVG user units (px): top-left corner, width, height.
struct LabelBox {
  double x = 0, y = 0, width = 0, height = 0;
};

// True when the two boxes share interior area (touching edges do not count).
bool BoxesOverlap(const LabelBox& a, const LabelBox& b);

// A generous estimate of the width of `text` in a sans-serif font of `font_size` px (0.62 em per character:
// wider than the average glyph of the common sans-serif fonts, so that boxes built from it contain the text).
double TextWidth(std::string_view text, double font_size);

// Positions for labels that want to sit at `wanted` (in order; earlier ones keep their place first), kept inside
// `area` and off the `obstacles` (what the labels must not cover, such as the marks they label) and each other.
// Each box moves from where it wants to be (clamped into the area) to the nearest free position among vertical
// steps of its height plus 2 px and horizontal steps of its width plus 4 px, nearest first and, at equal distance,
// up before down and left before right. A box that finds no free position (an area too small for all of them)
// stays at its wanted place, clamped into the area.
std::vector<LabelBox> PlaceLabels(const std::vector<LabelBox>& wanted, const LabelBox& area,
                                  const std::vector<LabelBox>& obstacles = {});

}  // namespace ferry::tools
