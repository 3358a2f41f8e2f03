// A dist-layer source that includes a header of config, a layer below it: compiles.
#include "config/job_config.h"
