// kernels/cpu/dnnl_isa.h: which of oneDNN's instruction sets an emulated ISA caps it at. (The cap itself is
// process-wide and set once: tests/e2e/cli_test.sh checks it through `ferry run --isa` and FERRY_ISA, each in a
// process of its own, against oneDNN's verbose log.)
#include "kernels/cpu/dnnl_isa.h"

#include <gtest/gtest.h>

namespace ferry::cpu {
namespace {

TEST(DnnlIsa, TheWidestLevelTheSetHolds) {
  EXPECT_EQ(DnnlIsaFor(IsaSet::All()), "avx512_core_bf16");
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")), "avx512_core_vnni");
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("avx2,fma,avx512f,avx512bw,avx512vl")), "avx512_core");
  // AVX-512 F alone is not oneDNN's avx512_core (it needs BW and VL).
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("avx,avx2,fma,avx512f")), "avx2");
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("avx,avx2,fma,avxvnni")), "avx2_vnni");
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("avx2,fma")), "avx2");
  // oneDNN's avx2 code uses FMA: AVX2 without FMA is only its avx level.
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("avx,avx2")), "avx");
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("sse4.1")), "sse41");
  EXPECT_EQ(DnnlIsaFor(IsaSet::Parse("none")), "sse41");  // oneDNN's floor
}

}  // namespace
}  // namespace ferry::cpu
