// A dist-layer source that includes a header of train, a layer above it: must not compile.
#include "train/trainer.h"
