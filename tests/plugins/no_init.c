/* Test plugin: exports FerryPluginAbiVersion but no FerryPluginInit. */
#include <ferry/plugin.h>

FERRY_PLUGIN_EXPORT uint32_t FerryPluginAbiVersion(void) { return FERRY_PLUGIN_ABI_VERSION; }
