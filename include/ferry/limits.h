// Bounds on numbers a caller gives Ferry, defined once so that every place that takes them (SessionOptions, the
// CLI's flags, `ferry compare`'s configurations, a server's config.pbtxt) accepts the same range.
#pragma once

namespace ferry {

// The most intra-op threads a session runs with (SessionOptions::threads; 0 means all hardware threads, capped at
// this). Each parallel region of a run asks OpenMP for a team of that many threads, and libgomp's team start
// (GOMP_parallel) puts a 128-byte start record per added thread on the calling thread's stack (alloca): 100000
// threads took 12.8 MB of the 8 MiB main stack and crashed the process (SIGSEGV, in the first oneDNN
// convolution); with the stack big enough, creating the threads fails instead and libgomp exits the process. At
// 1024 the records take 128 KiB, which fits any thread's stack; 1024 is above the hardware threads of the CPUs
// Ferry runs on, and config.pbtxt's intra_op_thread_count already had that bound (docs/serve.md).
inline constexpr int kMaxThreads = 1024;

}  // namespace ferry
