// Concat: each input is a block of `outer` rows of its own width, copied into the output's rows at its column
// offset with one 2-D device-to-device copy (cudaMemcpy2DAsync), no kernel of our own.
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda_defs/cuda_shapes.h"

namespace ferry::cuda {
namespace {

class Concat final : public CudaKernel {
 public:
  struct Plan {
    int64_t outer = 1;
    std::vector<int64_t> widths;
  };

  Concat(const ir::Node& n, int device) : CudaKernel(n, device), axis_(n.GetInt("axis", 0)) {}

  // Each input's row width and the rows (`outer`) for these shapes.
  void Prepare(PrepareContext& ctx) const override {
    std::vector<Shape> shapes;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const InputSpec& in = ctx.tensor_input(i);
      shapes.push_back(in.shape);
      if (in.dtype != ctx.input(0).dtype) {
        throw InvalidModelError(ctx.Describe() + ": inputs differ in type (" + ctx.InputString(0) + ", " +
                                ctx.InputString(i) + ")");
      }
    }
    Plan& p = ctx.EmplaceState(Plan{});
    ctx.SetOutput(0, ctx.input(0).dtype, ConcatShape(shapes, axis_, &p.outer, &p.widths, ctx.Describe()));
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Plan& p = ctx.state<Plan>();
    const int64_t outer = p.outer;
    const std::vector<int64_t>& widths = p.widths;
    std::vector<const Tensor*> ins;
    for (int i = 0; i < ctx.input_count(); ++i) ins.push_back(&ctx.required_input(i));
    Tensor y = Output(ctx, 0, stream);
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
