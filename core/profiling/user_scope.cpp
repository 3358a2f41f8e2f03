// UserScope (see user_scope.h).
#include "profiling/user_scope.h"

namespace kforge::profiling {

UserScope::UserScope(const char* name) : record_(at::RecordScope::USER_SCOPE) {
  if (record_.isActive()) record_.before(name);
}

}  // namespace kforge::profiling
