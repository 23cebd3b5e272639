// The opset converter's adapters: one registration call per family file. A boundary without an adapter goes
// through the generic rule (adapter.h), so an adapter is needed only where the meaning or the form of a node
// changed at a boundary: see each file's head comment for the equivalence it relies on.
#include "convert/adapter.h"

namespace ferry::convert {

void RegisterActivationAdapters(AdapterRegistry& r);
void RegisterAxisAdapters(AdapterRegistry& r);
void RegisterClipDropoutAdapters(AdapterRegistry& r);
void RegisterNormalizationAdapters(AdapterRegistry& r);
void RegisterOpAttributeAdapters(AdapterRegistry& r);
void RegisterPadAdapters(AdapterRegistry& r);
void RegisterReduceAdapters(AdapterRegistry& r);
void RegisterResizeAdapters(AdapterRegistry& r);
void RegisterSliceTopKAdapters(AdapterRegistry& r);
void RegisterSoftmaxAdapters(AdapterRegistry& r);
void RegisterSplitSqueezeAdapters(AdapterRegistry& r);
void RegisterTensorOpAdapters(AdapterRegistry& r);

const AdapterRegistry& Adapters() {
  static const AdapterRegistry registry = [] {
    AdapterRegistry r;
    RegisterActivationAdapters(r);
    RegisterAxisAdapters(r);
    RegisterClipDropoutAdapters(r);
    RegisterNormalizationAdapters(r);
    RegisterOpAttributeAdapters(r);
    RegisterPadAdapters(r);
    RegisterReduceAdapters(r);
    RegisterResizeAdapters(r);
    RegisterSliceTopKAdapters(r);
    RegisterSoftmaxAdapters(r);
    RegisterSplitSqueezeAdapters(r);
    RegisterTensorOpAdapters(r);
    return r;
  }();
  return registry;
}

}  // namespace ferry::convert
