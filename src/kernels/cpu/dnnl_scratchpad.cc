#include "kernels/cpu/dnnl_scratchpad.h"

#include <new>

namespace ferry::cpu {

dnnl::primitive_attr WithUserScratchpad(dnnl::primitive_attr attr) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void AddScratchpad(std::unordered_map<int, dnnl::memory>& args, const dnnl::memory::desc& desc) {
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
    ~Buffer() { ::operator delete(data, std::align_val_t{64}); }
  };
  thread_local Buffer buffer;
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

}  // namespace ferry::cpu
