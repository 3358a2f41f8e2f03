// kforge convert: Hugging Face export and import (being built; owned by its issue-20 helper, replaced whole).
#include "cli/commands.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {

int cmd_convert(int, char**) { throw sdk::Error("kforge convert is not built yet"); }

}  // namespace kforge::cli
