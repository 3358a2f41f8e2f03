// Data test helpers (see data_test_util.h).
#include "support/data_test_util.h"

#include <ATen/ATen.h>

#include <fstream>

#include "support/test_host.h"
#include "plugins/components.h"

namespace kforge::test {

void write_raw_npy(const std::filesystem::path& path, const std::string& descr, bool fortran, const std::string& shape,
                   const std::string& data, int major_version) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  const size_t prefix = major_version == 1 ? 10 : 12;
  size_t total = prefix + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  dict.resize(total - prefix - 1, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major_version);
  out += '\0';
  const size_t len = dict.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (major_version != 1) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  std::ofstream(path, std::ios::binary) << out << dict << data;
}

namespace {
std::string le_bytes(const std::vector<int64_t>& values, int width) {
  std::string s;
  for (int64_t v : values) {
    for (int b = 0; b < width; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
  }
  return s;
}
}  // namespace

std::string u16_bytes(const std::vector<int64_t>& values) { return le_bytes(values, 2); }
std::string u32_bytes(const std::vector<int64_t>& values) { return le_bytes(values, 4); }

std::vector<int64_t> arange(int64_t start, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + i;
  return v;
}

std::unique_ptr<sdk::Dataset> open_dataset(const std::filesystem::path& dir, const std::string& pattern,
                                           int64_t seq_len, const std::string& data_toml, int64_t vocab_size) {
  // Plugin libraries stay loaded for the life of the process; one host serves every test.
  static const auto host = load_builtin_plugins();
  const std::string toml = "[train]\nseq_len = " + std::to_string(seq_len) + "\n[data]\ndataset_path = \"" +
                           dir.string() + "\"\nfile_pattern = \"" + pattern + "\"\n" + data_toml;
  const config::JobConfig job = job_from_toml(toml, host->registry);
  const plugins::Components comps(host->registry, job);
  return comps.dataset(dir.string(), pattern, vocab_size);
}

std::vector<int64_t> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace kforge::test
