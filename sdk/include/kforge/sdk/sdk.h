// Everything a plugin author includes.
#pragma once

#include "kforge/sdk/param_groups.h"
#include "kforge/sdk/plugin.h"
