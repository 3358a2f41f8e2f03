// kforge report: the run report (being built; owned by its issue-20 helper, replaced whole).
#include "cli/commands.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {

int cmd_report(int, char**) { throw sdk::Error("kforge report is not built yet"); }

}  // namespace kforge::cli
