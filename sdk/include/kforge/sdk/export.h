// Symbol visibility for the SDK library (everything else is built with hidden visibility).
#pragma once

#define KFORGE_SDK_API __attribute__((visibility("default")))
