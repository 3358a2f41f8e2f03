// Key support: what this kforge does with each key and section of the schema (honours it, or,
// for what it does not implement, refuses it or warns that it has no effect).
#pragma once

#include <string>

#include "config/value.h"

namespace kforge::config {

enum class Support {
  Unset,     ///< no decision recorded: a schema bug (the schema test fails on it)
  Honoured,  ///< the key does what it says
  Refused,   ///< not implemented, and it would change what is trained or saved: a value that asks
             ///< for something (other than `inert`) refuses the run
  NoEffect,  ///< not implemented, speed or an outside service only: a value other than `inert`
             ///< set in the file or on the command line warns once
};

struct KeySupport {
  Support support = Support::Unset;
  std::string why;  ///< for Refused / NoEffect: what this kforge lacks, in a few words
  Value inert;      ///< the value that asks for nothing; Null: the key's default
};

/// kforge's decision for `key` of the table `section` (a section name such as "data", or a nested
/// table's schema name such as "data.datasets" or "freeze"). Unset for a key the table does not know (plugin keys:
/// their plugin honours them).
KeySupport key_support(const std::string& section, const std::string& key);

}  // namespace kforge::config
