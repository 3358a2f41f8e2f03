// kforge SDK version: recorded into every plugin's build facts.
#pragma once

#define KFORGE_SDK_VERSION "0.1.0"
