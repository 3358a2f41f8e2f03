// DCP `.metadata`: Metadata(state_dict_metadata, planner_data, storage_data, ...) read from its pickle.
#include "interop/dcp_metadata.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "interop/pickle_reader.h"
#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace {

using Kind = PickleValue::Kind;

// The classes .metadata pickles name: the DCP metadata dataclasses (torch >= 2.0 under torch.distributed.checkpoint,
// torch 1.13 under torch.distributed._shard), torch.Size, dtypes, the layout (torch.serialization._get_layout by name)
// and the path a StorageMeta may hold; builtins.getattr(<enum class>, name) is how Python >= 3.11 pickles the
// memory-format enum member (kept as data: nothing is called).
const std::set<std::string>& metadata_globals() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out = {"torch.Size",
                                 "torch.serialization._get_layout",
                                 "builtins.getattr",
                                 "pathlib.PosixPath",
                                 "torch.distributed.checkpoint.metadata.StorageMeta",
                                 "torch.distributed.checkpoint.metadata.TensorProperties",
                                 "torch.distributed.checkpoint.metadata._MEM_FORMAT_ENCODING",
                                 "torch.distributed.checkpoint.filesystem._StorageInfo",
                                 "torch.distributed._shard.checkpoint.filesystem._StorageInfo",
                                 "torch.distributed._shard.sharded_tensor.metadata.TensorProperties",
                                 "torch.distributed._shard.sharded_tensor.metadata.MEM_FORMAT_ENCODING"};
    for (const char* module : {"torch.distributed.checkpoint.metadata", "torch.distributed._shard.checkpoint.metadata"}) {
      for (const char* cls : {"Metadata", "TensorStorageMetadata", "ChunkStorageMetadata", "BytesStorageMetadata",
                              "MetadataIndex"}) {
        out.insert(std::string(module) + "." + cls);
      }
    }
    for (const char* dtype : {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                              "bool"}) {
      out.insert(std::string("torch.") + dtype);
    }
    return out;
  }();
  return names;
}

bool class_is(const PickleValue* v, std::string_view cls) {
  if (v == nullptr || v->kind != Kind::object) return false;
  const std::string& name = v->text;
  return name.size() > cls.size() && name.compare(name.size() - cls.size(), cls.size(), cls) == 0 &&
         name[name.size() - cls.size() - 1] == '.';
}

class MetadataParser {
 public:
  MetadataParser(std::string_view bytes, const std::string& origin)
      : origin_(origin), doc_(read_pickle(bytes, metadata_globals(), origin)) {}

  std::map<std::string, DcpItem> parse() {
    const PickleValue* root = doc_.root;
    if (!class_is(root, "Metadata")) fail(fmt::format("holds a {}, not DCP Metadata", root->describe()));
    const PickleValue* items = field(root, "state_dict_metadata", "Metadata");
    if (items->kind != Kind::dict) fail("Metadata.state_dict_metadata is not a dict");
    std::map<std::string, DcpItem> out;
    for (size_t i = 0; i + 1 < items->items.size(); i += 2) {
      const std::string key = string_of(items->items[i], "a state_dict_metadata key");
      out[key] = item(key, items->items[i + 1]);
    }
    attach_storage(field(root, "storage_data", "Metadata"), out);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw sdk::Error(fmt::format("{}: not DCP metadata this reader understands: {}", origin_, what));
  }

  // A dataclass field: from the dict BUILD gave the object.
  const PickleValue* field(const PickleValue* obj, std::string_view name, const std::string& where) const {
    const PickleValue* state = obj->state;
    const PickleValue* v = state ? state->get(name) : nullptr;
    if (v == nullptr) fail(fmt::format("{} has no field '{}'", where, name));
    return v;
  }

  std::string string_of(const PickleValue* v, const std::string& what) const {
    if (v->kind != Kind::string) fail(fmt::format("{} is a {}, not a string", what, v->describe()));
    return v->text;
  }

  int64_t integer_of(const PickleValue* v, const std::string& what) const {
    if (v->kind != Kind::integer) fail(fmt::format("{} is a {}, not an integer", what, v->describe()));
    return v->integer;
  }

  std::vector<int64_t> shape_of(const PickleValue* v, const std::string& what) const {
    if (v->kind != Kind::tuple && v->kind != Kind::list) fail(fmt::format("{} is a {}, not a shape", what, v->describe()));
    std::vector<int64_t> out;
    for (const PickleValue* d : v->items) {
      out.push_back(integer_of(d, what));
      if (out.back() < 0) fail(fmt::format("{} has a negative entry", what));
    }
    return out;
  }

  // TensorProperties' state: the tuple its __getstate__ returns (dtype first), or its fields.
  std::string dtype_of(const PickleValue* properties, const std::string& key) const {
    if (!class_is(properties, "TensorProperties") || properties->state == nullptr) {
      fail(fmt::format("'{}': properties are not TensorProperties", key));
    }
    const PickleValue* state = properties->state;
    const PickleValue* dtype = state->kind == Kind::tuple && !state->items.empty() ? state->items[0] : state->get("dtype");
    if (dtype == nullptr || dtype->kind != Kind::global) fail(fmt::format("'{}': no dtype in its properties", key));
    return dtype->text.substr(std::string("torch.").size());
  }

  DcpItem item(const std::string& key, const PickleValue* v) const {
    DcpItem out;
    if (class_is(v, "BytesStorageMetadata")) return out;
    if (!class_is(v, "TensorStorageMetadata")) fail(fmt::format("'{}' is described by a {}", key, v->describe()));
    const std::string where = fmt::format("'{}'", key);
    out.tensor = true;
    out.dtype = dtype_of(field(v, "properties", where), key);
    out.size = shape_of(field(v, "size", where), where + " size");
    const PickleValue* chunks = field(v, "chunks", where);
    if (chunks->kind != Kind::list) fail(where + " chunks is not a list");
    for (const PickleValue* c : chunks->items) {
      if (!class_is(c, "ChunkStorageMetadata")) fail(fmt::format("{} has a chunk that is a {}", where, c->describe()));
      DcpChunk chunk;
      chunk.offsets = shape_of(field(c, "offsets", where + " chunk"), where + " chunk offsets");
      chunk.sizes = shape_of(field(c, "sizes", where + " chunk"), where + " chunk sizes");
      if (chunk.offsets.size() != out.size.size() || chunk.sizes.size() != out.size.size()) {
        fail(fmt::format("{} has a chunk of {} dimensions in a tensor of {}", where, chunk.sizes.size(), out.size.size()));
      }
      for (size_t d = 0; d < out.size.size(); ++d) {
        if (chunk.offsets[d] > out.size[d] || chunk.sizes[d] > out.size[d] - chunk.offsets[d]) {
          fail(fmt::format("{} has a chunk outside its size in dimension {}", where, d));
        }
      }
      out.chunks.push_back(std::move(chunk));
    }
    return out;
  }

  // storage_data: MetadataIndex(fqn, offset) -> _StorageInfo(relative_path, offset, length[, transform_descriptors]).
  void attach_storage(const PickleValue* storage, std::map<std::string, DcpItem>& items) const {
    if (storage->kind != Kind::dict) fail("Metadata.storage_data is not a dict");
    std::map<std::pair<std::string, std::vector<int64_t>>, const PickleValue*> where;
    for (size_t i = 0; i + 1 < storage->items.size(); i += 2) {
      const PickleValue* index = storage->items[i];
      if (!class_is(index, "MetadataIndex")) fail(fmt::format("a storage_data key is a {}", index->describe()));
      const std::string fqn = string_of(field(index, "fqn", "MetadataIndex"), "MetadataIndex.fqn");
      const PickleValue* offset = index->state->get("offset");
      const std::vector<int64_t> offsets =
          offset == nullptr || offset->kind == Kind::none ? std::vector<int64_t>{} : shape_of(offset, "MetadataIndex.offset");
      where[{fqn, offsets}] = storage->items[i + 1];
    }
    for (auto& [key, item] : items) {
      if (!item.tensor) item.chunks.push_back({});
      for (DcpChunk& chunk : item.chunks) {
        const auto it = where.find({key, chunk.offsets});
        if (it == where.end()) fail(fmt::format("'{}' has a chunk with no storage_data entry", key));
        fill_storage(it->second, key, chunk);
      }
    }
  }

  void fill_storage(const PickleValue* info, const std::string& key, DcpChunk& chunk) const {
    if (!class_is(info, "_StorageInfo")) fail(fmt::format("'{}' is stored as a {}", key, info->describe()));
    const std::string where = fmt::format("'{}' storage", key);
    const PickleValue* transforms = info->state ? info->state->get("transform_descriptors") : nullptr;
    if (transforms != nullptr && transforms->kind != Kind::none && !transforms->items.empty()) {
      fail(fmt::format("{} went through stream transforms (as DCP's compression extension writes); save without them",
                       where));
    }
    chunk.file = string_of(field(info, "relative_path", where), where + " relative_path");
    if (chunk.file.empty() || chunk.file.find('/') != std::string::npos || chunk.file[0] == '.') {
      fail(fmt::format("{} names the file '{}', not one of the checkpoint directory's", where, chunk.file));
    }
    const int64_t offset = integer_of(field(info, "offset", where), where + " offset");
    const int64_t length = integer_of(field(info, "length", where), where + " length");
    if (offset < 0 || length < 0) fail(where + " has a negative offset or length");
    chunk.offset = static_cast<uint64_t>(offset);
    chunk.length = static_cast<uint64_t>(length);
  }

  const std::string& origin_;
  PickleDocument doc_;
};

}  // namespace

std::map<std::string, DcpItem> parse_dcp_metadata(std::string_view bytes, const std::string& origin) {
  return MetadataParser(bytes, origin).parse();
}

}  // namespace kforge::interop
