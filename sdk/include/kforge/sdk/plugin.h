// Plugin authoring helpers: KFORGE_PLUGIN(...) defines the one exported entry point.
//
//   constexpr kforge_component_info kComponents[] = {
//       KFORGE_COMPONENT(kforge::sdk::kind::optimizer, "lion", "1.0.0", "Sign-momentum optimizer"),
//   };
//   void register_all(kforge::sdk::Registrar& r) { r.add_optimizer("lion", make_lion); }
//   KFORGE_PLUGIN("my-optimizers", "1.0.0", "Lion for kforge", kComponents, register_all)
#pragma once

#include <torch/version.h>

#include <cstdio>
#include <exception>
#include <iterator>

#include "kforge/sdk/abi.h"
#include "kforge/sdk/kinds.h"
#include "kforge/sdk/registrar.h"
#include "kforge/sdk/version.h"

#ifdef KFORGE_WITH_CUDA
#define KFORGE_DETAIL_CUDA 1
#else
#define KFORGE_DETAIL_CUDA 0
#endif

namespace kforge::sdk::detail {

/// The build facts of the translation unit that expands KFORGE_PLUGIN.
constexpr kforge_build_info this_build() {
  return kforge_build_info{sizeof(kforge_build_info), KFORGE_PLUGIN_ABI_VERSION, KFORGE_SDK_VERSION,
                           TORCH_VERSION, _GLIBCXX_USE_CXX11_ABI, KFORGE_DETAIL_CUDA, __VERSION__};
}

/// Runs a plugin's registration function without letting an exception cross the C boundary.
template <class Fn>
int run_register(void* registrar, char* err, size_t err_len, Fn&& fn) noexcept {
  const char* message = "unknown exception";
  try {
    fn(*static_cast<Registrar*>(registrar));
    return 0;
  } catch (const std::exception& e) {
    if (err != nullptr && err_len > 0) std::snprintf(err, err_len, "%s", e.what());
    return 1;
  } catch (...) {
    if (err != nullptr && err_len > 0) std::snprintf(err, err_len, "%s", message);
    return 1;
  }
}

}  // namespace kforge::sdk::detail

/// Component metadata without extra config keys.
#define KFORGE_COMPONENT(KIND, NAME, VERSION, SUMMARY) \
  kforge_component_info { KIND, NAME, VERSION, SUMMARY, 0u, nullptr }

/// Component metadata with an array of kforge_config_key the component accepts.
#define KFORGE_COMPONENT_WITH_KEYS(KIND, NAME, VERSION, SUMMARY, KEYS) \
  kforge_component_info { KIND, NAME, VERSION, SUMMARY, static_cast<uint32_t>(std::size(KEYS)), KEYS }

/// Defines the exported entry point. COMPONENTS is an array of kforge_component_info;
/// REGISTER_FN is callable as void(kforge::sdk::Registrar&).
#define KFORGE_PLUGIN(NAME, VERSION, DESCRIPTION, COMPONENTS, REGISTER_FN)                               \
  extern "C" __attribute__((visibility("default"))) const kforge_plugin_info* kforge_plugin_entry(void) { \
    static const kforge_plugin_info info{                                                                  \
        ::kforge::sdk::detail::this_build(),                                                               \
        NAME,                                                                                              \
        VERSION,                                                                                           \
        DESCRIPTION,                                                                                       \
        static_cast<uint32_t>(std::size(COMPONENTS)),                                                      \
        COMPONENTS,                                                                                        \
        [](void* registrar, char* err, size_t err_len) noexcept -> int {                                   \
          return ::kforge::sdk::detail::run_register(registrar, err, err_len, REGISTER_FN);                \
        }};                                                                                                \
    return &info;                                                                                          \
  }
