// kforge extract: activation capture (being built; owned by its issue-20 helper, replaced whole).
#include "cli/commands.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {

int cmd_extract(int, char**) { throw sdk::Error("kforge extract is not built yet"); }

}  // namespace kforge::cli
