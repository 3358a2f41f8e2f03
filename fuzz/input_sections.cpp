// Splitting a fuzz input into named files on "#@<name>" lines (see input_sections.h).
#include "input_sections.h"

namespace kforge::fuzz {

std::vector<InputSection> input_sections(std::string_view input, const std::string& first) {
  std::vector<InputSection> sections{{first, ""}};
  size_t pos = 0;
  while (pos < input.size()) {
    const size_t end = input.find('\n', pos);
    const size_t next = end == std::string_view::npos ? input.size() : end + 1;
    const std::string_view line = input.substr(pos, next - pos);
    if (line.substr(0, 2) == "#@") {
      const size_t name_end = end == std::string_view::npos ? line.size() : line.size() - 1;
      sections.push_back({std::string(line.substr(2, name_end - 2)), ""});
    } else {
      sections.back().text += line;
    }
    pos = next;
  }
  return sections;
}

}  // namespace kforge::fuzz
