// The default warning sink: stderr.
#include "image_text_io/warn.h"

#include <iostream>

namespace kforge::image_text {

Warn stderr_warn() {
  return [](const std::string& message) { std::cerr << "warning: " << message << "\n"; };
}

}  // namespace kforge::image_text
