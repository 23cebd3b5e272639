#include "kernels/cpu/dnnl_scratchpad.h"

#include <new>

namespace ferry::cpu {

dnnl::primitive_attr WithUserScratchpad(dnnl::primitive_attr attr) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

namespace {

struct Buffer {
  void* data = nullptr;
  size_t size = 0;
  ~Buffer() { ::operator delete(data, std::align_val_t{64}); }
};
thread_local Buffer buffer;

}  // namespace

void AddScratchpad(std::unordered_map<int, dnnl::memory>& args, const dnnl::memory::desc& desc) {
  const size_t bytes = desc.get_size();
  if (bytes == 0) return;
  if (bytes > buffer.size) {
    ::operator delete(buffer.data, std::align_val_t{64});
    buffer.data = nullptr;
    buffer.size = 0;
    buffer.data = ::operator new(bytes, std::align_val_t{64});
    buffer.size = bytes;
  }
  args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(desc, Engine(), buffer.data);
}

int64_t ScratchpadBytesOnThisThread() { return static_cast<int64_t>(buffer.size); }

void NeedScratchpad(const dnnl::memory::desc& desc, Workspace& ws) {
  ws.Need("oneDNN scratchpad", static_cast<int64_t>(desc.get_size()));
}

}  // namespace ferry::cpu
