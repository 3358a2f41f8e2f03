#include "support/npy.h"

#include <ATen/ATen.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kforge::test {

void write_npy(const std::filesystem::path& path, const at::Tensor& tensor) {
  const at::Tensor t = tensor.detach().contiguous().cpu();
  std::string descr;
  if (t.scalar_type() == at::kFloat) descr = "<f4";
  else if (t.scalar_type() == at::kDouble) descr = "<f8";
  else if (t.scalar_type() == at::kLong) descr = "<i8";
  else throw std::runtime_error("write_npy: unsupported dtype");
  std::string shape = "(";
  for (int64_t d = 0; d < t.dim(); ++d) shape += std::to_string(t.size(d)) + (t.dim() == 1 ? "," : d + 1 < t.dim() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
}

at::Tensor read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("read_npy: cannot open " + path.string());
  char magic[8];
  in.read(magic, 8);
  uint16_t len = 0;
  in.read(reinterpret_cast<char*>(&len), 2);
  std::string header(len, '\0');
  in.read(header.data(), len);
  at::ScalarType type;
  if (header.find("<f4") != std::string::npos) type = at::kFloat;
  else if (header.find("<f8") != std::string::npos) type = at::kDouble;
  else if (header.find("<i8") != std::string::npos) type = at::kLong;
  else throw std::runtime_error("read_npy: unsupported dtype in " + path.string());
  std::vector<int64_t> shape;
  const auto open = header.find("'shape': (") + 10;
  std::stringstream dims(header.substr(open, header.find(')', open) - open));
  std::string item;
  while (std::getline(dims, item, ',')) {
    if (item.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(item));
  }
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(type));
  in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
  return t;
}

}  // namespace kforge::test
