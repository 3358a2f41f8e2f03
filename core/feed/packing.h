// Packing ([data] pack_sequences): the EOS id that splits the training windows into documents, and the
// model's consent to document-masked attention.
#pragma once

#include <cstdint>

#include "config/job_config.h"

namespace kforge::feed {

/// -1 unless [data] pack_sequences = true. Then the EOS id of the tokenizer at [data] tokenizer_path or,
/// without one, the eos_id of prepare-data's metadata.json beside the training shards (in the data
/// directory or its parent; of a mixture, every source's that has one, which must agree). Throws
/// sdk::ConfigError when the model (its component's KFORGE_CAP_* flags `model_capabilities`) does not
/// declare KFORGE_CAP_DOCUMENT_MASK, when neither gives an EOS id, or when a mixture's sources disagree
/// (naming them).
int64_t packing_eos_id(const config::JobConfig& job, uint32_t model_capabilities);

}  // namespace kforge::feed
