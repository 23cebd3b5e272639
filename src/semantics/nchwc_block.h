// The block size of ONNX Runtime's NCHWc layout (domain com.microsoft.nchwc): the one rule the schemas' shape
// inference, the nchwc kernels (kernels/nchwc_layout.h, which forwards to it) and the nchwc legalizations share.
//
// An ORT-written file carries the block b only implicitly: MLAS takes it from the machine that optimizes the model
// (MlasNchwcGetBlockSize: 16 where the CPU has AVX-512F, 8 on other x86 hosts), and every blocked tensor and
// reordered weight of the file assumes it. Ferry applies the same rule to the machine it runs on (the CPU's own
// features, not FERRY_ISA's narrowed set: the file does not change with the ISA Ferry emulates);
// FERRY_NCHWC_BLOCK=8 or 16 overrides it, for a file written on another machine.
#pragma once

#include <cstdint>

namespace ferry::semantics {

// FERRY_NCHWC_BLOCK when set (8 or 16; anything else throws InvalidArgumentError), else 16 when the CPU has
// AVX-512F, else 8. Read on each call.
int64_t NchwcBlockSize();

}  // namespace ferry::semantics
