/* kforge plugin ABI: the C structs a plugin exports through its one entry point.
 * The leading fields of kforge_build_info are frozen forever so that any host can read them,
 * even from an incompatible plugin, and refuse it with a precise message. */
#ifndef KFORGE_SDK_ABI_H
#define KFORGE_SDK_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Bump on any change to these structs, to the component interfaces or to their meaning, and record
 * the headers' new fingerprint (tests/sdk's abi fingerprint test says how). */
#define KFORGE_PLUGIN_ABI_VERSION 22u
/* The name of the one symbol every plugin exports. */
#define KFORGE_PLUGIN_ENTRY_SYMBOL "kforge_plugin_entry"

#ifdef __cplusplus
extern "C" {
#endif

/* Facts of the plugin's build. FROZEN: struct_size and abi_version stay the first two fields. */
typedef struct kforge_build_info {
  uint32_t struct_size;      /* sizeof(kforge_build_info) as the plugin saw it */
  uint32_t abi_version;      /* KFORGE_PLUGIN_ABI_VERSION */
  const char* sdk_version;   /* KFORGE_SDK_VERSION, e.g. "0.1.0" */
  const char* torch_version; /* TORCH_VERSION of the LibTorch headers, e.g. "1.13.0" */
  int32_t cxx11_abi;         /* _GLIBCXX_USE_CXX11_ABI */
  int32_t cuda;              /* 1 when built for a CUDA LibTorch, 0 for CPU */
  const char* compiler;      /* __VERSION__, informational */
} kforge_build_info;

/* What kforge does with a key (kforge_config_key.status). */
#define KFORGE_KEY_HONOURED 0u  /* the key does what its doc says */
/* Not implemented, and it would change what is trained or saved: a value other than the default refuses the run,
 * naming `reason`. */
#define KFORGE_KEY_REFUSED 1u
/* Not implemented, speed or an outside service only: a value other than the default, set in the file or on the
 * command line, warns once with `reason`. */
#define KFORGE_KEY_NO_EFFECT 2u

/* One configuration key a component reads in its kind's section. A key with a NULL type is one that the section
 * already has (kforge's, e.g. [optimizer] lr): the component declares that it reads it, and only `name` counts. A
 * dict key (int_dict, string_list_dict) that the section already has as a dict of that type (e.g. [vlm]
 * module_patterns) adds the entries of its default to the section's default while the component is selected. */
typedef struct kforge_config_key {
  const char* name;          /* key inside the section, e.g. "lion_beta" */
  /* "bool" | "int" | "float" | "string" | "float_list" | "int_list" | "string_list" | "int_dict" (a table of
   * name = integer) | "string_list_dict" (a table of name = list of strings) */
  const char* type;
  const char* default_value; /* TOML literal of the default, e.g. "0.9", "\"cosine\"", "[0.9, 0.95]", "{ a = 1 }" */
  const char* doc;           /* one line */
  /* What values the host accepts (NULL or "": any of the type): a string key's values separated by '|', e.g.
   * "cosine|linear"; an int or float key's range "MIN..MAX", either end may be left out, e.g. "0..", "0..1", each
   * end included unless a '<' next to the dots excludes it: "0<.." (> 0), "..<1" (< 1), "0<..<1". */
  const char* allowed;
  uint32_t status;    /* KFORGE_KEY_* */
  const char* reason; /* what this component lacks, in a few words (REFUSED and NO_EFFECT keys) */
  uint32_t flags;     /* KFORGE_KEY_FLAG_* */
} kforge_config_key;

/* Flags of kforge_config_key.flags. A key of its kind's section whenever the component's plugin is loaded, whichever
 * component the config selects (KempnerForge's flat sections, e.g. [optimizer] muon_momentum): any config may set it
 * and the host checks its type and allowed values; the component reads it when selected. Without it, a component's
 * own key is one of its section while the component is selected. */
#define KFORGE_KEY_FLAG_IN_SECTION 1u

/* Capability flags of kforge_component_info.capabilities: what the host must know to drive the component. */
/* An optimizer whose update needs whole weight matrices (e.g. Muon's orthogonalisation), not FSDP row shards. */
#define KFORGE_CAP_NEEDS_WHOLE_MATRICES (1u << 0)
/* An optimizer that evaluates at other weights than it trains at (e.g. Schedule-Free AdamW): it overrides
 * Optimizer::use_eval_weights/use_train_weights, so evaluations and checkpoints hold those weights. */
#define KFORGE_CAP_HAS_EVAL_WEIGHTS (1u << 1)
/* A model laid out as Llama/Mixtral under kforge's parameter names (tok_embeddings, layers.N.attention.wq/wk/wv/wo
 * with rotate-half RoPE, feed_forward.w1/w2/w3 or moe experts, norm, output) whose [model] core keys mean what they
 * mean for the built-in transformer: `kforge convert` maps it to and from Hugging Face. */
#define KFORGE_CAP_LLAMA_LAYOUT (1u << 2)
/* A model that takes packed sequences: it overrides Model::set_documents, so attention stays within each document
 * and positions restart at each ([data] pack_sequences = true needs it). */
#define KFORGE_CAP_DOCUMENT_MASK (1u << 3)
/* A model that runs embeddings before its tokens: it overrides Model::forward_prefixed ([vlm] arch = "joint_decoder"
 * needs it for its image tokens). */
#define KFORGE_CAP_EMBEDDING_PREFIX (1u << 4)
/* A model that shards its MoE experts over the expert-parallel group ([distributed] ep > 1 needs it): it uses
 * BuildContext::expert_parallel and overrides Model::expert_shards. */
#define KFORGE_CAP_EXPERT_PARALLEL (1u << 5)
/* A model that splits its layers over the tensor-parallel group ([distributed] tp > 1 needs it): it uses
 * BuildContext::tensor_parallel, returns its vocabulary slice of the logits and overrides Model::tensor_shards. Or a
 * loss that reads such vocabulary-split logits when BuildContext::tensor_parallel is set (tp > 1 needs that too). */
#define KFORGE_CAP_TENSOR_PARALLEL (1u << 6)
/* A model that can run as pipeline stages ([distributed] pp > 1 needs it): forward() runs every block through
 * run_block() in order, between blocks carries one activation tensor [batch, seq, ...] and nothing else, lets a
 * block runner end it by throwing (sdk/model.h), and it overrides Model::embedding_params. */
#define KFORGE_CAP_PIPELINE (1u << 7)
/* A model that computes its linear layers in float8 when BuildContext::float8 is set ([train] mixed_precision = "fp8"
 * needs it): torchao's Float8Linear, TENSORWISE recipe, on the layers KempnerForge converts. */
#define KFORGE_CAP_FLOAT8 (1u << 8)
/* A modality strategy whose residual stream holds the text only (the image reaches it another way, e.g. through
 * cross-attention): the host's sequence budget ([model] max_seq_len, [train] seq_len) counts no image tokens. */
#define KFORGE_CAP_TEXT_RESIDUAL (1u << 9)
/* An adapter that pools the vision encoder's square grid of patch tokens ([vision_encoder] num_tokens = side x side)
 * in [adapter] pool_window x pool_window windows, ragged edge windows kept: ceil(side / pool_window)^2 tokens out,
 * which the host's sequence budget counts (and it refuses a num_tokens that is no perfect square). */
#define KFORGE_CAP_POOLS_PATCH_GRID (1u << 10)
/* Every flag this ABI defines; the host refuses a component declaring others. */
#define KFORGE_CAP_ALL                                                                                                \
  (KFORGE_CAP_NEEDS_WHOLE_MATRICES | KFORGE_CAP_HAS_EVAL_WEIGHTS | KFORGE_CAP_LLAMA_LAYOUT |                          \
   KFORGE_CAP_DOCUMENT_MASK | KFORGE_CAP_EMBEDDING_PREFIX | KFORGE_CAP_EXPERT_PARALLEL | KFORGE_CAP_TENSOR_PARALLEL | \
   KFORGE_CAP_PIPELINE | KFORGE_CAP_FLOAT8 | KFORGE_CAP_TEXT_RESIDUAL | KFORGE_CAP_POOLS_PATCH_GRID)

/* Static description of one component (listed without running plugin code). */
typedef struct kforge_component_info {
  const char* kind;    /* a kind of KFORGE_COMPONENT_KINDS (kforge/sdk/kinds.h), e.g. "optimizer" */
  const char* name;    /* the name a config selects it by, e.g. "adamw" */
  const char* version; /* semver of the component */
  const char* summary; /* one line */
  uint32_t n_keys;     /* the config keys of its kind's section it reads: its own, and those the section has */
  const kforge_config_key* keys;
  uint32_t capabilities; /* KFORGE_CAP_* flags */
  /* A bool key of its kind's section whose true value adds this component to the kind's selection
   * (kinds that select a list only), e.g. "enable_tensorboard"; NULL: selected by name only. */
  const char* enabled_by;
  uint32_t n_hook_points; /* a model's capturable tensors, e.g. "layers.{layer}.residual" (kforge extract) */
  const char* const* hook_points;
  /* The component's rules on a resolved config beyond each key's type and allowed values, run when the config
   * selects the component (NULL: none). `config_json` is {"world_size": N, "config": {"<section>": {"<key>":
   * value, ...}, ...}}: every section of the resolved config, N is 0 while the config loads and the number of
   * processes once the run starts (rules that need it run then). On a broken rule it writes {"section": "...",
   * "key": "...", "message": "..."} into `out` (key "": the section as a whole) and returns 1; the host reports
   * "<file>:<line>: [section] key = value: message". Returns 0 when the config keeps its rules. Never throws. */
  int (*validate)(const char* config_json, char* out, size_t out_len);
} kforge_component_info;

/* What kforge_plugin_entry() returns. `build` must stay the first member. */
typedef struct kforge_plugin_info {
  kforge_build_info build;
  const char* name;        /* plugin (library) name */
  const char* version;     /* plugin version */
  const char* description; /* one line */
  uint32_t n_components;
  const kforge_component_info* components;
  /* Registers factories into the host's kforge::sdk::Registrar (passed as void*).
   * Returns 0 on success; otherwise writes a message into err and returns non-zero.
   * Never throws. */
  int (*register_all)(void* registrar, char* err, size_t err_len);
} kforge_plugin_info;

typedef const kforge_plugin_info* (*kforge_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KFORGE_SDK_ABI_H */
