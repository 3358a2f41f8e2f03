// PluginFile: one libkforge_*.so as the host opened it: its build facts, metadata and status.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kforge/sdk/abi.h"

namespace boost::dll {
class shared_library;
}

namespace kforge::plugins {

struct ConfigKeyMeta {
  std::string name, type, default_value, doc, allowed;
  uint32_t status = KFORGE_KEY_HONOURED;  ///< KFORGE_KEY_*
  std::string reason;
  uint32_t flags = 0;  ///< KFORGE_KEY_FLAG_*
};

struct ComponentMeta {
  std::string kind, name, version, summary;
  std::vector<ConfigKeyMeta> keys;     ///< the component's own keys in its kind's section
  uint32_t capabilities = 0;           ///< KFORGE_CAP_* flags
  std::vector<std::string> core_keys;  ///< the keys its kind's section already has that it reads (declared typeless)
  std::string enabled_by;              ///< a bool core key of its kind's section that selects it ("": none)
  std::vector<std::string> hook_points;  ///< a model's capturable tensors, "{layer}" for a block index
  /// Its rules on a resolved config (kforge_component_info.validate); null: none.
  int (*validate)(const char* config_json, char* out, size_t out_len) = nullptr;
};

struct PluginFile {
  std::filesystem::path path;
  bool ok = false;
  std::string error;  ///< why the file was refused (when !ok): names the file and the fix

  // Build facts and metadata (filled as far as the file could be read).
  uint32_t abi_version = 0;
  std::string sdk_version, torch_version;
  int cxx11_abi = -1;
  bool cuda = false;
  std::string name, version, description;
  std::vector<ComponentMeta> components;

  const kforge_plugin_info* info = nullptr;  ///< valid while `library` is loaded
  std::shared_ptr<boost::dll::shared_library> library;

  void refuse(std::string reason);
};

/// Opens and checks one file (never throws): loads it rtld_now|rtld_local, finds the entry
/// point, compares ABI, LibTorch version, C++ ABI and CUDA-ness with this host, copies metadata.
/// Loaded libraries are never unloaded (their code may still be referenced until exit).
PluginFile open_plugin(const std::filesystem::path& path);

/// The build facts of this host, as a plugin built with it would record them.
kforge_build_info host_build_info();

}  // namespace kforge::plugins
