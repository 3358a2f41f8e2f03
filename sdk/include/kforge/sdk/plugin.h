// Plugin authoring helpers: KFORGE_PLUGIN(...) defines the one exported entry point.
//
//   constexpr kforge_config_key kLionKeys[] = {
//       kforge::sdk::reads("lr"), kforge::sdk::reads("weight_decay"),
//       {"lion_beta", "float", "0.9", "interpolation factor", "0..1"},
//   };
//   constexpr kforge_component_info kComponents[] = {
//       KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "lion", "1.0.0", "Sign-momentum optimizer", kLionKeys),
//   };
//   void register_all(kforge::sdk::Registrar& r) { r.add_optimizer("lion", make_lion); }
//   KFORGE_PLUGIN("my-optimizers", "1.0.0", "Lion for kforge", kComponents, register_all)
#pragma once

#include <torch/version.h>

#include <cstdio>
#include <exception>
#include <iterator>

#include "kforge/sdk/abi.h"
#include "kforge/sdk/config_rules.h"
#include "kforge/sdk/kinds.h"
#include "kforge/sdk/registrar.h"
#include "kforge/sdk/version.h"

#ifdef KFORGE_WITH_CUDA
#define KFORGE_DETAIL_CUDA 1
#else
#define KFORGE_DETAIL_CUDA 0
#endif

namespace kforge::sdk {

/// Trait: the config keys (an array of kforge_config_key) a component reads in its kind's section.
struct ConfigKeys {
  const kforge_config_key* keys;
  uint32_t count;
};
template <size_t N>
constexpr ConfigKeys config_keys(const kforge_config_key (&keys)[N]) {
  return {keys, static_cast<uint32_t>(N)};
}

/// A key of a component's kind's section that the section already has (e.g. [optimizer] lr), which the component
/// reads: the host checks that the section has it and lists it with the component's own keys.
constexpr kforge_config_key reads(const char* name) {
  return {name, nullptr, nullptr, nullptr, nullptr, KFORGE_KEY_HONOURED, nullptr};
}

/// A component's own key that is a key of its kind's section whenever its plugin is loaded, whichever component the
/// config selects (KFORGE_KEY_FLAG_IN_SECTION), e.g. section_key({"rex_alpha", "float", "1.0", "REX exponent", "0<.."}).
constexpr kforge_config_key section_key(kforge_config_key key) {
  key.flags |= KFORGE_KEY_FLAG_IN_SECTION;
  return key;
}

/// Trait: the component's rules on the resolved config (kforge_component_info.validate), e.g.
/// validator<check_lion>() for `void check_lion(const kforge::sdk::ResolvedConfig&)`, which throws
/// kforge::sdk::RuleError (RuleSection::require) on a broken rule.
struct Validator {
  int (*fn)(const char*, char*, size_t);
};

/// Trait: KFORGE_CAP_* flags (abi.h), e.g. capabilities(KFORGE_CAP_NEEDS_WHOLE_MATRICES).
struct Capabilities {
  uint32_t flags;
};
constexpr Capabilities capabilities(uint32_t flags) { return {flags}; }

/// Trait: a bool core key of its kind's section that, when true, selects the component as if its
/// name were in the kind's list, e.g. enabled_by("enable_tensorboard") for a metric backend.
struct EnabledBy {
  const char* key;
};
constexpr EnabledBy enabled_by(const char* key) { return {key}; }

/// Trait: the tensors a model can hand out during forward() (Model::capture), as patterns with
/// {layer} for a block index, e.g. {"layers.{layer}.residual", "layers.{layer}.attention"}.
struct HookPoints {
  const char* const* points;
  uint32_t count;
};
template <size_t N>
constexpr HookPoints hook_points(const char* const (&points)[N]) {
  return {points, static_cast<uint32_t>(N)};
}

}  // namespace kforge::sdk

namespace kforge::sdk::detail {

constexpr void apply(kforge_component_info& c, ConfigKeys keys) {
  c.n_keys = keys.count;
  c.keys = keys.keys;
}
constexpr void apply(kforge_component_info& c, Validator v) { c.validate = v.fn; }
constexpr void apply(kforge_component_info& c, Capabilities caps) { c.capabilities |= caps.flags; }
constexpr void apply(kforge_component_info& c, EnabledBy e) { c.enabled_by = e.key; }
constexpr void apply(kforge_component_info& c, HookPoints h) {
  c.n_hook_points = h.count;
  c.hook_points = h.points;
}

/// What KFORGE_COMPONENT expands to.
template <class... Traits>
constexpr kforge_component_info component(const char* kind, const char* name, const char* version,
                                          const char* summary, Traits... traits) {
  kforge_component_info c{kind, name, version, summary, 0u, nullptr, 0u, nullptr, 0u, nullptr, nullptr};
  (apply(c, traits), ...);
  return c;
}

/// The C entry point of validator<Rules>().
template <void (*Rules)(const ResolvedConfig&)>
int validate_entry(const char* config_json, char* out, size_t out_len) noexcept {
  return run_rules(config_json, out, out_len, Rules);
}

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

namespace kforge::sdk {

/// The Validator trait of a rules function (see Validator).
template <void (*Rules)(const ResolvedConfig&)>
constexpr Validator validator() {
  return {&detail::validate_entry<Rules>};
}

}  // namespace kforge::sdk

/// Component metadata: KFORGE_COMPONENT(KIND, NAME, VERSION, SUMMARY, traits...), where each trait
/// is kforge::sdk::config_keys(...), capabilities(...), enabled_by(...), hook_points(...) or validator<Fn>(),
/// in any order.
#define KFORGE_COMPONENT(KIND, NAME, VERSION, SUMMARY, ...) \
  ::kforge::sdk::detail::component(KIND, NAME, VERSION, SUMMARY __VA_OPT__(, ) __VA_ARGS__)

/// Component metadata with an array of kforge_config_key the component accepts, then other traits.
#define KFORGE_COMPONENT_WITH_KEYS(KIND, NAME, VERSION, SUMMARY, KEYS, ...) \
  KFORGE_COMPONENT(KIND, NAME, VERSION, SUMMARY, ::kforge::sdk::config_keys(KEYS) __VA_OPT__(, ) __VA_ARGS__)

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
