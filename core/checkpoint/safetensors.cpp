// safetensors files: streamed writing with a checksum, and decoding of the tensors asked for.
#include "checkpoint/safetensors.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "checkpoint/durable_file.h"
#include "checkpoint/fault_points.h"
#include "kforge/sdk/error.h"
#include "resilience/fault_point.h"

namespace kforge::checkpoint {
namespace {

struct DType {
  const char* name;
  at::ScalarType type;
};
constexpr DType kTypes[] = {{"F64", at::kDouble}, {"F32", at::kFloat}, {"BF16", at::kBFloat16}, {"F16", at::kHalf},
                            {"I64", at::kLong},   {"I32", at::kInt},   {"U8", at::kByte},       {"BOOL", at::kBool}};

const char* dtype_name(at::ScalarType t) {
  for (const auto& d : kTypes) {
    if (d.type == t) return d.name;
  }
  throw sdk::Error(fmt::format("safetensors: unsupported tensor dtype {}", c10::toString(t)));
}


// The 8-byte length and JSON header (padded to 8 bytes), and the tensors' contiguous CPU data in
// header order.
std::string header_of(const TensorMap& tensors, const std::map<std::string, std::string>& metadata,
                      std::vector<at::Tensor>& contiguous) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  size_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    at::Tensor t = tensor.detach().cpu().contiguous();
    const size_t bytes = t.nbytes();
    header[name] = {{"dtype", dtype_name(t.scalar_type())},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    contiguous.push_back(std::move(t));
  }
  std::string json = header.dump();
  while (json.size() % 8 != 0) json += ' ';
  const uint64_t length = json.size();
  return std::string(reinterpret_cast<const char*>(&length), 8) + json;
}

}  // namespace

std::string encode_safetensors(const TensorMap& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<at::Tensor> contiguous;
  std::string out = header_of(tensors, metadata, contiguous);
  for (const at::Tensor& t : contiguous) out.append(static_cast<const char*>(t.data_ptr()), t.nbytes());
  return out;
}

WrittenFile write_safetensors(const std::filesystem::path& path, const TensorMap& tensors,
                              const std::map<std::string, std::string>& metadata) {
  std::vector<at::Tensor> contiguous;
  const std::string header = header_of(tensors, metadata, contiguous);
  size_t data_bytes = 0;
  for (const at::Tensor& t : contiguous) data_bytes += t.nbytes();
  DurableFile file(path);
  file.write(header.data(), header.size());
  // The fault point halfway through the tensor bytes (a tensor may be split around it).
  size_t left_before_half = data_bytes / 2;
  bool passed_half = false;
  for (const at::Tensor& t : contiguous) {
    const auto* data = static_cast<const char*>(t.data_ptr());
    size_t size = t.nbytes();
    if (!passed_half && size >= left_before_half) {
      file.write(data, left_before_half);
      data += left_before_half;
      size -= left_before_half;
      passed_half = true;
      resilience::fault_point(kFaultPointShardPartial);
    } else if (!passed_half) {
      left_before_half -= size;
    }
    file.write(data, size);
  }
  if (!passed_half) resilience::fault_point(kFaultPointShardPartial);  // no tensor bytes at all
  resilience::fault_point(kFaultPointShardWritten);
  file.sync_and_close();
  return {file.bytes(), file.checksum()};
}

SafetensorsHeader read_safetensors_header(std::string_view bytes, const std::string& origin) {
  auto bad = [&](const std::string& what) {
    return sdk::Error(fmt::format("{}: not a valid safetensors file: {}", origin, what));
  };
  if (bytes.size() < 8) throw bad(fmt::format("{} bytes, shorter than the 8-byte header length", bytes.size()));
  uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  if (length > bytes.size() - 8) {
    throw bad(fmt::format("header claims {} bytes but the file has {} (truncated?)", length, bytes.size()));
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, length));
  } catch (const std::exception& e) {
    throw bad(std::string("header is not JSON: ") + e.what());
  }
  const uint64_t data_size = bytes.size() - 8 - length;
  SafetensorsHeader out;
  out.data_offset = static_cast<size_t>(8 + length);
  std::vector<std::tuple<size_t, size_t, std::string>> spans;  // [begin, end) of every tensor, and its name
  if (!header.is_object()) throw bad("header is not a JSON object");
  try {
    for (const auto& [name, info] : header.items()) {
      if (name == "__metadata__") {
        out.metadata = info.get<std::map<std::string, std::string>>();
        continue;
      }
      const std::string dtype = info.at("dtype").get<std::string>();
      const auto* type =
          std::find_if(std::begin(kTypes), std::end(kTypes), [&](const DType& d) { return dtype == d.name; });
      if (type == std::end(kTypes)) throw bad(fmt::format("tensor '{}' has unsupported dtype {}", name, dtype));
      SafetensorsEntry entry{type->type, info.at("shape").get<std::vector<int64_t>>(), 0, 0};
      const auto offsets = info.at("data_offsets").get<std::vector<size_t>>();
      size_t nbytes = c10::elementSize(type->type);
      for (const int64_t size : entry.shape) {
        if (size < 0) throw bad(fmt::format("tensor '{}' has a negative dimension", name));
        if (__builtin_mul_overflow(nbytes, static_cast<size_t>(size), &nbytes)) {
          throw bad(fmt::format("tensor '{}' has a shape whose byte count overflows", name));
        }
      }
      if (offsets.size() != 2 || offsets[1] < offsets[0] || offsets[1] - offsets[0] != nbytes) {
        throw bad(fmt::format("tensor '{}' offsets do not match its shape and dtype", name));
      }
      if (offsets[1] > data_size) {
        throw bad(fmt::format("tensor '{}' ends at byte {} but the data section has {} (truncated?)", name, offsets[1],
                              data_size));
      }
      entry.begin = offsets[0];
      entry.end = offsets[1];
      spans.emplace_back(offsets[0], offsets[1], name);
      out.tensors.emplace(name, std::move(entry));
    }
  } catch (const nlohmann::json::exception& e) {  // a missing field, or a field of the wrong type
    throw bad(std::string("malformed header entry: ") + e.what());
  }
  // The tensors tile the data section: no hole, no overlap, nothing after the last one.
  std::sort(spans.begin(), spans.end());
  size_t end = 0;
  for (const auto& [begin, span_end, name] : spans) {
    if (begin != end) {
      throw bad(fmt::format("tensor '{}' starts at byte {} of the data section, but the tensors before it end at {} ({})",
                            name, begin, end, begin < end ? "overlap" : "hole"));
    }
    end = span_end;
  }
  if (end != data_size) throw bad(fmt::format("{} trailing bytes after the last tensor", data_size - end));
  return out;
}

TensorMap decode_safetensors(std::string_view bytes, const std::string& origin, const TensorFilter& wanted,
                             std::map<std::string, std::string>* metadata) {
  SafetensorsHeader header = read_safetensors_header(bytes, origin);
  if (metadata != nullptr) *metadata = std::move(header.metadata);
  const std::string_view data = bytes.substr(header.data_offset);
  TensorMap out;
  for (const auto& [name, entry] : header.tensors) {
    if (wanted && !wanted(name)) continue;
    at::Tensor t = at::empty(entry.shape, at::TensorOptions().dtype(entry.dtype));
    if (entry.end > entry.begin) std::memcpy(t.data_ptr(), data.data() + entry.begin, entry.end - entry.begin);
    out.emplace(name, std::move(t));
  }
  return out;
}

}  // namespace kforge::checkpoint
