// Packing ([data] pack_sequences): the EOS id that splits the training windows into documents, and the
// model's consent to document-masked attention.
#pragma once

#include <cstdint>

#include "config/job_config.h"

namespace kforge::train {

/// -1 unless [data] pack_sequences = true. Then the EOS id of the tokenizer at [data] tokenizer_path or,
/// without one, the eos_id of prepare-data's metadata.json beside the training shards (in the data
/// directory or its parent). Throws sdk::ConfigError when the model (its component's KFORGE_CAP_* flags
/// `model_capabilities`) does not declare KFORGE_CAP_DOCUMENT_MASK, or when neither source gives an EOS id.
int64_t packing_eos_id(const config::JobConfig& job, uint32_t model_capabilities);

}  // namespace kforge::train
