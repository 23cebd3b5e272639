// Concat: each input is a block of `outer` rows of its own width, copied into the output's rows at its column
// offset with one 2-D device-to-device copy (cudaMemcpy2DAsync), no kernel of our own.
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda_defs/cuda_shapes.h"

namespace ferry::cuda {
namespace {

class Concat final : public CudaKernel {
 public:
  Concat(const ir::Node& n, int device) : CudaKernel(n, device), axis_(n.GetInt("axis", 0)) {}

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    std::vector<const Tensor*> ins;
    std::vector<Shape> shapes;
    for (int i = 0; i < ctx.input_count(); ++i) {
      ins.push_back(&ctx.required_input(i));
      shapes.push_back(ins.back()->shape());
      if (ins.back()->dtype() != ins[0]->dtype()) throw InvalidModelError(who() + ": inputs differ in type");
    }
    int64_t outer = 1;
    std::vector<int64_t> widths;
    const Shape out = ConcatShape(shapes, axis_, &outer, &widths, who());
    Tensor y = Output(ctx, 0, stream, ins[0]->dtype(), out);
    const size_t esize = static_cast<size_t>(ElementBytes(y.dtype()));
    int64_t total = 0;
    for (int64_t w : widths) total += w;
    int64_t offset = 0;
    for (size_t k = 0; k < ins.size(); ++k) {
      if (widths[k] > 0 && outer > 0) {
        FERRY_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(y.raw_data()) + offset * esize, total * esize,
                                           ins[k]->raw_data(), widths[k] * esize, widths[k] * esize,
                                           static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, stream),
                         who());
      }
      offset += widths[k];
    }
  }

 private:
  int64_t axis_;
};

}  // namespace

void AddConcatFactories(FactoryList& list) { list.emplace_back("cuda.Concat.4", Make<Concat>()); }

}  // namespace ferry::cuda
