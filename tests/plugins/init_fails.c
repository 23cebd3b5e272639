/* Test plugin: FerryPluginInit registers nothing and fails without a message. */
#include <ferry/plugin.h>

FERRY_PLUGIN_EXPORT uint32_t FerryPluginAbiVersion(void) { return FERRY_PLUGIN_ABI_VERSION; }

FERRY_PLUGIN_EXPORT FerryStatus FerryPluginInit(const FerryHostApi* api, FerryRegistrar* registrar) {
  (void)api;
  (void)registrar;
  return FERRY_INTERNAL;
}
