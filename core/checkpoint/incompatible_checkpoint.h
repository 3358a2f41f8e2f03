// IncompatibleCheckpoint: a checkpoint intact but of another schema version (not a damaged one).
#pragma once

#include "kforge/sdk/error.h"

namespace kforge::checkpoint {

/// Thrown by CheckpointManager::load. load_newest passes it on rather than skipping to an older
/// checkpoint: resuming an older step would silently drop the newer one's progress, and the fix
/// (the matching kforge, or a fresh start) is the user's choice.
class IncompatibleCheckpoint : public sdk::Error {
 public:
  using sdk::Error::Error;
};

}  // namespace kforge::checkpoint
