// Splits a fuzz input into named files, for targets whose parser reads several (a run directory, a tokenizer and
// the config next to it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::fuzz {

struct InputSection {
  std::string name;
  std::string text;
};

/// The text before the first line "#@<name>" is the section `first`; each such line starts the section <name>, which
/// runs to the next one (a name may come twice).
std::vector<InputSection> input_sections(std::string_view input, const std::string& first);

}  // namespace kforge::fuzz
