/* Test plugin: reports an ABI version Ferry does not speak; Ferry must refuse it before calling init. */
#include <ferry/plugin.h>

FERRY_PLUGIN_EXPORT uint32_t FerryPluginAbiVersion(void) { return 999; }

FERRY_PLUGIN_EXPORT FerryStatus FerryPluginInit(const FerryHostApi* api, FerryRegistrar* registrar) {
  (void)api;
  (void)registrar;
  return FERRY_INTERNAL; /* never reached: Ferry checks the ABI version first */
}
