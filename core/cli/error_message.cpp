// error_message: c10::Error's what_without_backtrace, every other exception's what().
#include "cli/error_message.h"

#include <c10/util/Exception.h>

namespace kforge::cli {

std::string error_message(const std::exception& e) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&e)) return torch_error->what_without_backtrace();
  return e.what();
}

}  // namespace kforge::cli
