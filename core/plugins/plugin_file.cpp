#include "plugins/plugin_file.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <boost/dll/shared_library.hpp>
#include <cstdlib>

#include "config/resolver.h"
#include "kforge/sdk/plugin.h"
#include "plugins/declared_core_keys.h"
#include "plugins/catalog.h"
#include "plugins/elf_layout.h"

namespace kforge::plugins {
namespace {

std::string str(const char* s) { return s != nullptr ? s : ""; }

std::string demangle(const std::string& symbol) {
  int status = 0;
  char* out = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return symbol;
  std::string result(out);
  std::free(out);
  return result;
}

// `text` with bytes that do not print as \xNN, so a garbled name stays readable in a message.
std::string printable(const std::string& text) {
  std::string out;
  for (const unsigned char c : text)
    out += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  return out;
}

// The dynamic loader's complaints about the file itself: not an ELF shared object, or a damaged one.
bool is_damaged_file_message(const std::string& detail) {
  for (const char* sign : {"invalid ELF header", "file too short", "not an ELF", "wrong ELF class", "ELF file",
                           "no loadable segments", "cannot read file data", "ELF load command", "failed to map segment",
                           "only ET_DYN and ET_EXEC", "cannot dynamically load"}) {
    if (detail.find(sign) != std::string::npos) return true;
  }
  return false;
}

// Turns a dlopen failure into a message that says what went wrong and what to do.
std::string explain_load_failure(const std::filesystem::path& path, const std::string& what) {
  const std::string file = path.string();
  // Boost.DLL reports "...load() failed (dlerror system message: <dlerror>): <errno text>";
  // keep only <dlerror>, without its leading "<file>: ".
  std::string detail = what;
  if (auto pos = what.find("dlerror system message: "); pos != std::string::npos) {
    detail = what.substr(pos + 24);
    if (auto end = detail.rfind("): "); end != std::string::npos) detail.resize(end);
    else if (!detail.empty() && detail.back() == ')') detail.pop_back();
  }
  if (detail.rfind(file + ": ", 0) == 0) detail.erase(0, file.size() + 2);
  if (auto pos = detail.find("undefined symbol: "); pos != std::string::npos) {
    std::string symbol = detail.substr(pos + 18);
    if (auto end = symbol.find_first_of(" \t\n"); end != std::string::npos) symbol.resize(end);
    return fmt::format(
        "{}: cannot load: undefined symbol {}. Usually the plugin was built against a different LibTorch, "
        "kforge SDK or _GLIBCXX_USE_CXX11_ABI than this kforge; rebuild it with find_package(kforge) "
        "against this installation (kforge --version prints the versions).",
        file, demangle(symbol));
  }
  if (detail.find("GLIBCXX_") != std::string::npos || detail.find("CXXABI_") != std::string::npos) {
    return fmt::format(
        "{}: cannot load: {}. It was built with a newer C++ compiler than this system's libstdc++; "
        "rebuild it with this system's compiler.",
        file, detail);
  }
  // "<dependency>: cannot open shared object file: <errno text>": a library it needs is missing; a
  // garbled name (non-printing bytes) means the file itself is damaged.
  if (const size_t pos = detail.find(": cannot open shared object file"); pos != std::string::npos) {
    const std::string needed = printable(detail.substr(0, pos));
    return fmt::format(
        "{}: not a loadable shared library: it needs the library '{}', which the dynamic loader cannot find ({}). "
        "If that is a real library, make it findable (LD_LIBRARY_PATH, or the plugin's RUNPATH); if the name looks "
        "garbled, the file is damaged: rebuild it or remove it from the plugin directory.",
        file, needed, detail.substr(pos + 2));
  }
  if (is_damaged_file_message(detail)) {
    return fmt::format(
        "{}: not a loadable shared library ({}). Only kforge plugin libraries named libkforge_*.so belong in "
        "a plugin directory; remove or rename this file, or rebuild it if it is a damaged plugin.",
        file, printable(detail));
  }
  return fmt::format("{}: cannot load: {}", file, printable(detail));
}

std::string platform(bool cuda) { return cuda ? "CUDA" : "CPU"; }

std::string kind_names() {
  std::string out;
  for (const sdk::KindInfo& k : sdk::kKinds) out += fmt::format("{}{}", out.empty() ? "" : ", ", k.name);
  return out;
}

}  // namespace

void PluginFile::refuse(std::string reason) {
  ok = false;
  error = std::move(reason);
}

kforge_build_info host_build_info() { return sdk::detail::this_build(); }

PluginFile open_plugin(const std::filesystem::path& path) {
  PluginFile plugin;
  plugin.path = path;
  const std::string file = path.string();
  if (const std::string problem = elf_layout_problem(path); !problem.empty()) {
    plugin.refuse(fmt::format("{}: not a loadable shared library: {}. Copy or rebuild the file again.", file, problem));
    return plugin;
  }
  try {
    plugin.library = std::make_shared<boost::dll::shared_library>(
        path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    plugin.refuse(explain_load_failure(path, e.what()));
    return plugin;
  }
  // Never unload: factories, vtables and exceptions from this library may outlive any owner.
  static auto* keep_loaded = new std::vector<std::shared_ptr<boost::dll::shared_library>>();
  keep_loaded->push_back(plugin.library);

  if (!plugin.library->has(KFORGE_PLUGIN_ENTRY_SYMBOL)) {
    plugin.refuse(fmt::format(
        "{}: no entry point '{}'. Is it a kforge plugin (built with KFORGE_PLUGIN(...) from "
        "<kforge/sdk/plugin.h>)? Remove it from the plugin directory or rebuild it.",
        file, KFORGE_PLUGIN_ENTRY_SYMBOL));
    return plugin;
  }
  auto entry = plugin.library->get<const kforge_plugin_info*()>(KFORGE_PLUGIN_ENTRY_SYMBOL);
  const kforge_plugin_info* info = entry();
  if (info == nullptr) {
    plugin.refuse(fmt::format("{}: {}() returned null; the plugin is broken, rebuild it.", file,
                              KFORGE_PLUGIN_ENTRY_SYMBOL));
    return plugin;
  }
  const kforge_build_info host = host_build_info();
  const kforge_build_info& build = info->build;  // frozen leading fields: always readable
  plugin.abi_version = build.abi_version;
  if (build.abi_version == host.abi_version && build.struct_size != host.struct_size) {
    plugin.refuse(fmt::format(
        "{}: its kforge_build_info is {} bytes, but plugin ABI {} defines it as {} bytes. The plugin "
        "was not built from the kforge SDK headers (or they were edited); rebuild it with KFORGE_PLUGIN(...) "
        "from kforge-sdk {}.",
        file, build.struct_size, host.abi_version, host.struct_size, host.sdk_version));
    return plugin;
  }
  if (build.abi_version != host.abi_version) {
    plugin.refuse(fmt::format(
        "{}: built against kforge plugin ABI {}; this kforge speaks ABI {} (kforge-sdk {}). "
        "Rebuild the plugin against kforge-sdk {}, or use a kforge that speaks ABI {}.",
        file, build.abi_version, host.abi_version, host.sdk_version, host.sdk_version, build.abi_version));
    return plugin;
  }
  plugin.sdk_version = str(build.sdk_version);
  plugin.torch_version = str(build.torch_version);
  plugin.cxx11_abi = build.cxx11_abi;
  plugin.cuda = build.cuda != 0;
  plugin.name = str(info->name);
  plugin.version = str(info->version);
  plugin.description = str(info->description);
  for (uint32_t i = 0; i < info->n_components; ++i) {
    const kforge_component_info& c = info->components[i];
    ComponentMeta meta{str(c.kind), str(c.name), str(c.version), str(c.summary), {}, c.capabilities, {}};
    for (uint32_t k = 0; k < c.n_keys; ++k) {
      const kforge_config_key& key = c.keys[k];
      if (key.type == nullptr) {
        meta.core_keys.push_back(str(key.name));  // reads(...): a key its section has
        continue;
      }
      meta.keys.push_back({str(key.name), str(key.type), str(key.default_value), str(key.doc), str(key.allowed),
                           key.status, str(key.reason), key.flags});
    }
    meta.enabled_by = str(c.enabled_by);
    for (uint32_t k = 0; k < c.n_hook_points; ++k) meta.hook_points.push_back(str(c.hook_points[k]));
    meta.validate = c.validate;
    plugin.components.push_back(std::move(meta));
  }

  if (plugin.torch_version == host.torch_version && plugin.cxx11_abi != host.cxx11_abi) {
    plugin.refuse(fmt::format(
        "{}: built with _GLIBCXX_USE_CXX11_ABI={}; this kforge uses _GLIBCXX_USE_CXX11_ABI={} (LibTorch {}). "
        "std::string and other standard types differ between the two, so rebuild the plugin with "
        "-D_GLIBCXX_USE_CXX11_ABI={} (find_package(kforge) sets it).",
        file, plugin.cxx11_abi, host.cxx11_abi, host.torch_version, host.cxx11_abi));
    return plugin;
  }
  if (plugin.torch_version != host.torch_version || plugin.cxx11_abi != host.cxx11_abi) {
    plugin.refuse(fmt::format(
        "{}: built against LibTorch {} (cxx11-abi={}, {}); this kforge uses LibTorch {} "
        "(cxx11-abi={}, {}). Tensors cross the plugin boundary as C++ objects, so these must match "
        "exactly: rebuild the plugin against this LibTorch (find_package(kforge) sets the flags).",
        file, plugin.torch_version, plugin.cxx11_abi, platform(plugin.cuda), host.torch_version,
        host.cxx11_abi, platform(host.cuda != 0)));
    return plugin;
  }
  if (plugin.cuda != (host.cuda != 0)) {
    plugin.refuse(fmt::format(
        "{}: built for a {} LibTorch; this kforge is a {} build. Rebuild the plugin {} "
        "KFORGE_WITH_CUDA, or use a {} build of kforge (cmake -DKFORGE_WITH_CUDA={}).",
        file, platform(plugin.cuda), platform(host.cuda != 0), plugin.cuda ? "without" : "with",
        platform(plugin.cuda), plugin.cuda ? "ON" : "OFF"));
    return plugin;
  }
  for (const auto& c : plugin.components) {
    if (sdk::find_kind(c.kind) == nullptr) {
      plugin.refuse(fmt::format("{}: component '{}' has unknown kind '{}'. Allowed kinds: {}.", file, c.name, c.kind,
                                kind_names()));
      return plugin;
    }
    if (c.name.empty()) {
      plugin.refuse(fmt::format("{}: a {} component has an empty name; give it one.", file, c.kind));
      return plugin;
    }
    for (const auto& key : c.keys) {
      try {
        config::declared_key_spec(declared_key(key), c.kind + " '" + c.name + "'");
      } catch (const std::exception& e) {
        std::string what = e.what();
        if (what.find("'" + key.name + "'") == std::string::npos) {
          what = fmt::format("{} '{}' key '{}': {}", c.kind, c.name, key.name, what);
        }
        plugin.refuse(fmt::format("{}: {}. Fix the component's kforge_config_key list.", file, what));
        return plugin;
      }
    }
    if ((c.capabilities & ~KFORGE_CAP_ALL) != 0) {
      plugin.refuse(fmt::format(
          "{}: {} '{}' declares capability flags {:#x}, which plugin ABI {} does not define (it defines {:#x}). "
          "Declare only KFORGE_CAP_* flags of the kforge SDK you build against.",
          file, c.kind, c.name, c.capabilities & ~KFORGE_CAP_ALL, host.abi_version, KFORGE_CAP_ALL));
      return plugin;
    }
    try {
      declared_core_keys(c);
    } catch (const std::exception& e) {
      plugin.refuse(fmt::format("{}: {} Fix the component's reads(...) keys.", file, e.what()));
      return plugin;
    }
    try {
      check_enabled_by(c);
    } catch (const std::exception& e) {
      plugin.refuse(fmt::format("{}: {} Fix the component's enabled_by(...).", file, e.what()));
      return plugin;
    }
    if (!c.hook_points.empty() && c.kind != sdk::kind::model) {
      plugin.refuse(
          fmt::format("{}: {} '{}' declares hook points, which only a model has. Remove its hook_points(...).", file,
                      c.kind, c.name));
      return plugin;
    }
  }
  plugin.info = info;
  plugin.ok = true;
  return plugin;
}

}  // namespace kforge::plugins
