// The reference backend: portable, complete, the numerical oracle.
#include "backends/ref/ref_backend.h"

namespace ferry {

RefBackend::RefBackend() : registry_("ref") { ref::RegisterRefKernels(registry_); }

}  // namespace ferry
