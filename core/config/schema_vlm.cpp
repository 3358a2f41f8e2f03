// The [vlm] section of the schema: the host's keys, common to every arch (an arch's own are its strategy's).
#include "config/schema_keys.h"
#include "config/schema_sections.h"

namespace kforge::config {
namespace {

using schema_parts::int_key;
using schema_parts::string_key;
using schema_parts::string_list_value;
using schema_parts::table_list_key;
using schema_parts::typed_dict_key;

Value freeze_directive(const char* module, bool frozen) {
  Value v = Value::make_table();
  v.set("module", Value::string(module));
  v.set("frozen", Value::boolean(frozen));
  return v;
}

// module_patterns: the three base aliases (KempnerForge's defaults; an arch adds its own alias by declaring a
// module_patterns default of its own), sorted by name as every resolved dict is.
Value module_patterns() {
  Value v = Value::make_table();
  for (const char* alias : {"adapter", "transformer", "vision_encoder"}) {
    v.set(alias, string_list_value({alias, std::string(alias) + ".*"}));
  }
  return v;
}

}  // namespace

SectionSpec schema_parts::vlm_section() {
  return {"vlm",
          {string_key("arch", "joint_decoder", "VLM architecture (a modality_strategy plugin)"),
           string_key("dataset", "image_text",
                      "image-text data reader (an image_text_dataset plugin) of [data] dataset_path"),
           int_key("max_text_len", 512, "fixed text length (padded)"),
           int_key("max_image_bytes", int64_t{64} << 20, "largest image (or WebDataset member) read, in bytes"),
           table_list_key("freeze", &schema_parts::freeze_spec_schema(), "static freeze directives ([[vlm.freeze]])",
                          Value::make_list({freeze_directive("vision_encoder", true)})),
           table_list_key("freeze_schedule", &schema_parts::freeze_stage_schema(),
                          "freeze stages by step ([[vlm.freeze_schedule]])"),
           typed_dict_key("module_patterns", KeyType::StringList, module_patterns(),
                          "module alias -> fnmatch patterns over parameter names")},
          true,
          "vision-language model; arch picks the architecture (a modality_strategy plugin, which adds its keys; "
          "requires [vision_encoder])"};
}

}  // namespace kforge::config
