// Program headers and loadable segments against the file size (see elf_layout.h).
#include "plugins/elf_layout.h"

#include <elf.h>
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace kforge::plugins {

std::string elf_layout_problem(const std::filesystem::path& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (ec || !in.read(reinterpret_cast<char*>(&header), sizeof header)) return "";
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_phentsize != sizeof(Elf64_Phdr)) {
    return "";
  }
  const uint64_t table_end = header.e_phoff + uint64_t{header.e_phnum} * sizeof(Elf64_Phdr);
  if (header.e_phoff > size || table_end > size) {
    return fmt::format("its program headers end at byte {}, past the end of the file ({} bytes): it is truncated",
                       table_end, size);
  }
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  in.seekg(static_cast<std::streamoff>(header.e_phoff));
  if (!in.read(reinterpret_cast<char*>(segments.data()), static_cast<std::streamsize>(table_end - header.e_phoff))) {
    return "";
  }
  for (size_t k = 0; k < segments.size(); ++k) {
    const Elf64_Phdr& s = segments[k];
    if ((s.p_type == PT_LOAD || s.p_type == PT_DYNAMIC) && (s.p_offset > size || s.p_filesz > size - s.p_offset)) {
      return fmt::format("segment {} (bytes {} to {}) ends past the end of the file ({} bytes): it is truncated", k,
                         s.p_offset, s.p_offset + s.p_filesz, size);
    }
  }
  return "";
}

}  // namespace kforge::plugins
