#include "tools/compare_unblock.h"

#include <cctype>

#include "kernels/ref/blocked_layout.h"

namespace ferry::tools {
namespace {

std::string Dims(std::span<const int64_t> d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + (d[i] < 0 ? std::string("?") : std::to_string(d[i]));
  return s + "]";
}

template <typename T>
Tensor Unblock(const Tensor& twin, DataType dtype, Shape plain, int64_t block) {
  Tensor out = Tensor::Uninitialized(dtype, plain);
  if (out.size() == 0) return out;
  const int64_t batch = plain[0], channels = plain[1];
  const int64_t spatial = channels == 0 || batch == 0 ? 0 : out.size() / (batch * channels);
  ref::UnblockChannels(twin.data<T>(), batch, channels, spatial, block, out.data<T>());
  return out;
}

}  // namespace

std::string BlockLayoutText(int64_t block) {
  return block > 0 ? "blocked by " + std::to_string(block) : std::string("channels-last");
}

std::string BlockedTwinBase(const std::string& name) {
  static const std::string kSuffix = "_blocked";
  size_t end = name.size();
  // "X_blocked_K": a numeric suffix K >= 2 after "_blocked".
  const size_t us = name.rfind('_');
  if (us != std::string::npos && us + 1 < name.size() && us >= kSuffix.size()) {
    bool digits = true;
    for (size_t i = us + 1; i < name.size(); ++i) digits &= std::isdigit(static_cast<unsigned char>(name[i])) != 0;
    if (digits && name.compare(us - kSuffix.size(), kSuffix.size(), kSuffix) == 0 && name[us + 1] != '0' &&
        std::stoll(name.substr(us + 1, 18)) >= 2) {
      end = us;
    }
  }
  if (end <= kSuffix.size() || name.compare(end - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return "";
  return name.substr(0, end - kSuffix.size());
}

Unblocked UnblockTwin(const Tensor& twin, std::span<const int64_t> logical) {
  Unblocked r;
  const size_t rank = logical.size();
  if (rank < 2) {
    r.problem = "its logical shape " + (rank == 0 ? std::string("is unknown") : "has rank 1") +
                ": a blocked layout needs [N, C, ...]";
    return r;
  }
  if (twin.dtype() == DataType::kString || IsSubByte(twin.dtype())) {
    r.problem = "a " + std::string(DataTypeName(twin.dtype())) + " tensor has no blocked layout";
    return r;
  }
  const Shape& t = twin.shape();
  const std::string expected = "the blocked twin of a value of shape " + Dims(logical) + " is " + Dims(logical) +
                               " blocked by b ([N, ceil(C/b), D..., b]) or channels-last ([N, D..., C]), got " +
                               ShapeToString(t);
  Shape plain;
  if (t.size() == rank + 1) {
    r.block = t.back();
    const int64_t c = logical[1];
    if (r.block < 1) {
      r.problem = expected;
      return r;
    }
    if (c < 0) {
      r.problem = "its channel count is unknown, so the padding lanes of a block of " + std::to_string(r.block) +
                  " cannot be told from channels";
      return r;
    }
    plain.assign({t[0], c});
    plain.insert(plain.end(), t.begin() + 2, t.end() - 1);
    if (t[1] != ref::BlockCount(c, r.block)) {
      r.problem = expected;
      return r;
    }
  } else if (t.size() == rank) {
    r.block = 0;
    plain.assign({t[0], t.back()});
    plain.insert(plain.end(), t.begin() + 1, t.end() - 1);
  } else {
    r.problem = expected;
    return r;
  }
  for (size_t i = 0; i < rank; ++i) {
    if (logical[i] >= 0 && logical[i] != plain[i]) {
      r.problem = expected;
      return r;
    }
  }
  switch (DataTypeBits(twin.dtype())) {
    case 8: r.tensor = Unblock<uint8_t>(twin, twin.dtype(), plain, r.block); break;
    case 16: r.tensor = Unblock<uint16_t>(twin, twin.dtype(), plain, r.block); break;
    case 32: r.tensor = Unblock<uint32_t>(twin, twin.dtype(), plain, r.block); break;
    case 64: r.tensor = Unblock<uint64_t>(twin, twin.dtype(), plain, r.block); break;
    default: r.problem = "a " + std::string(DataTypeName(twin.dtype())) + " tensor has no blocked layout"; break;
  }
  return r;
}

}  // namespace ferry::tools
