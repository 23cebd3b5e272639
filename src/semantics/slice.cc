#include "semantics/slice.h"

#include <algorithm>

namespace ferry::semantics {

SliceAxis ResolveSliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  int64_t s = start < 0 ? start + dim : start;
  int64_t e = end < 0 ? end + dim : end;
  // |step| beyond dim selects at most one element; clamping keeps stride products in range.
  const int64_t st = std::clamp<int64_t>(step, -std::max<int64_t>(dim, 1), std::max<int64_t>(dim, 1));
  int64_t len = 0;
  if (dim > 0 && st > 0) {
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    len = e > s ? (e - s - 1) / st + 1 : 0;
  } else if (dim > 0) {
    s = std::clamp<int64_t>(s, 0, dim - 1);
    e = std::clamp<int64_t>(e, -1, dim - 1);
    len = s > e ? (s - e - 1) / (-st) + 1 : 0;
  }
  return {len > 0 ? s : 0, len, st};
}

}  // namespace ferry::semantics
