// read_arrow_texts: Arrow IPC stream messages (Schema, RecordBatch) parsed from their flatbuffers by hand,
// every offset checked against the bytes read, and the utf8 / large_utf8 values of one column handed out.
#include "data/arrow_stream.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

// Type union tags of Schema.fbs (Type) and of Message.fbs (MessageHeader).
enum TypeTag : uint8_t {
  kNull = 1, kInt, kFloat, kBinary, kUtf8, kBool, kDecimal, kDate, kTime, kTimestamp, kInterval, kList, kStruct,
  kUnion, kFixedSizeBinary, kFixedSizeList, kMap, kDuration, kLargeBinary, kLargeUtf8, kLargeList, kRunEndEncoded,
  kBinaryView, kUtf8View, kListView, kLargeListView
};
enum HeaderTag : uint8_t { kSchema = 1, kDictionaryBatch = 2, kRecordBatch = 3 };

[[noreturn]] void fail(const std::string& name, uint64_t offset, const std::string& what) {
  throw sdk::Error(fmt::format("Arrow file '{}', byte {}: {}", name, offset, what));
}

// One flatbuffer (a message's metadata) starting at byte `base` of the file.
class Flat {
 public:
  struct Table {
    size_t pos = 0, vtable = 0, vtable_size = 0, size = 0;
  };
  struct Vector {
    size_t start = 0, count = 0;
  };

  Flat(std::string_view bytes, const std::string& name, uint64_t base) : b_(bytes), name_(name), base_(base) {}

  [[noreturn]] void fail_at(size_t pos, const std::string& what) const { fail(name_, base_ + pos, what); }

  template <typename T>
  T read(size_t pos) const {
    if (pos > b_.size() || b_.size() - pos < sizeof(T)) fail_at(pos, "flatbuffer offset past the message metadata");
    T v;
    std::memcpy(&v, b_.data() + pos, sizeof(T));
    return v;
  }

  Table table(size_t pos) const {
    Table t;
    t.pos = pos;
    const int64_t vt = static_cast<int64_t>(pos) - read<int32_t>(pos);
    if (vt < 0 || static_cast<size_t>(vt) >= b_.size()) fail_at(pos, "flatbuffer vtable offset out of range");
    t.vtable = static_cast<size_t>(vt);
    t.vtable_size = read<uint16_t>(t.vtable);
    t.size = read<uint16_t>(t.vtable + 2);
    if (t.vtable_size < 4 || t.vtable_size % 2 != 0 || t.vtable + t.vtable_size > b_.size() ||
        t.size < 4 || pos + t.size > b_.size()) {
      fail_at(t.vtable, "damaged flatbuffer vtable");
    }
    return t;
  }
  Table root() const { return table(read<uint32_t>(0)); }

  /// The position of field `id` of `t`, 0 when absent.
  size_t field(const Table& t, int id) const {
    const size_t slot = 4 + 2 * static_cast<size_t>(id);
    if (slot + 2 > t.vtable_size) return 0;
    const uint16_t off = read<uint16_t>(t.vtable + slot);
    if (off == 0) return 0;
    if (off < 4 || off >= t.size) fail_at(t.vtable + slot, "flatbuffer field offset outside its table");
    return t.pos + off;
  }
  template <typename T>
  T scalar(const Table& t, int id, T fallback) const {
    const size_t p = field(t, id);
    return p == 0 ? fallback : read<T>(p);
  }
  /// The target of offset field `id`, 0 when absent.
  size_t indirect(const Table& t, int id) const {
    const size_t p = field(t, id);
    if (p == 0) return 0;
    const size_t target = p + read<uint32_t>(p);
    if (target >= b_.size()) fail_at(p, "flatbuffer offset past the message metadata");
    return target;
  }
  std::optional<Table> child(const Table& t, int id) const {
    const size_t p = indirect(t, id);
    return p == 0 ? std::nullopt : std::optional<Table>(table(p));
  }
  Vector vector(const Table& t, int id, size_t element_size) const {
    const size_t p = indirect(t, id);
    if (p == 0) return {};
    const size_t n = read<uint32_t>(p);
    if (n > (b_.size() - p - 4) / element_size) fail_at(p, fmt::format("flatbuffer vector of {} elements overruns", n));
    return {p + 4, n};
  }
  Table table_at(const Vector& v, size_t i) const {
    const size_t e = v.start + 4 * i;
    return table(e + read<uint32_t>(e));
  }
  std::string string(const Table& t, int id) const {
    const Vector v = vector(t, id, 1);
    return std::string(b_.substr(v.start, v.count));
  }

 private:
  std::string_view b_;
  const std::string& name_;
  uint64_t base_;
};

// Where the column's node and buffers are in every record batch, and its offset width.
struct ColumnPlace {
  size_t node = 0, buffer = 0, nodes = 0, buffers = 0;  // nodes, buffers: of the whole schema
  int offset_bytes = 0;                                 // 0: no such column
};

// Adds the nodes and buffers of `field` and its children (pre-order, as record batches list them).
void count_layout(const Flat& f, const Flat::Table& field, ColumnPlace& place, int depth) {
  if (depth > 64) f.fail_at(field.pos, "Arrow field nesting deeper than 64");
  if (place.nodes >= 65536) f.fail_at(field.pos, "more than 65536 Arrow fields");
  const uint8_t type = f.scalar<uint8_t>(field, 2, 0);
  const std::string name = f.string(field, 0);
  if (f.indirect(field, 4) != 0) {
    f.fail_at(field.pos, fmt::format("column '{}' is dictionary-encoded, which kforge does not read; save the dataset "
                                     "without dictionary encoding",
                                     name));
  }
  size_t buffers = 0;
  switch (type) {
    case kNull: case kRunEndEncoded:
      buffers = 0;
      break;
    case kStruct: case kFixedSizeList:
      buffers = 1;
      break;
    case kInt: case kFloat: case kBool: case kDecimal: case kDate: case kTime: case kTimestamp: case kInterval:
    case kFixedSizeBinary: case kDuration: case kList: case kMap: case kLargeList:
      buffers = 2;
      break;
    case kBinary: case kUtf8: case kLargeBinary: case kLargeUtf8: case kListView: case kLargeListView:
      buffers = 3;
      break;
    case kUnion: {
      const auto u = f.child(field, 3);
      buffers = u && f.scalar<int16_t>(*u, 0, 0) == 1 ? 2 : 1;  // Dense: type ids and offsets; Sparse: type ids
      break;
    }
    default:
      f.fail_at(field.pos, fmt::format("column '{}' has Arrow type tag {}, which kforge cannot skip (view types are "
                                       "not read)",
                                       name, type));
  }
  place.nodes += 1;
  place.buffers += buffers;
  const Flat::Vector children = f.vector(field, 5, 4);
  for (size_t i = 0; i < children.count; ++i) count_layout(f, f.table_at(children, i), place, depth + 1);
}

ColumnPlace schema_place(const Flat& f, const Flat::Table& schema, const std::string& column) {
  if (f.scalar<int16_t>(schema, 0, 0) != 0) {
    f.fail_at(schema.pos, "the stream is big-endian; kforge reads little-endian");
  }
  const Flat::Vector fields = f.vector(schema, 1, 4);
  ColumnPlace place;
  std::string names;
  for (size_t i = 0; i < fields.count; ++i) {
    const Flat::Table field = f.table_at(fields, i);
    const std::string name = f.string(field, 0);
    names += (names.empty() ? "'" : ", '") + name + "'";
    if (name == column && place.offset_bytes == 0) {
      const uint8_t type = f.scalar<uint8_t>(field, 2, 0);
      if (type != kUtf8 && type != kLargeUtf8) {
        f.fail_at(field.pos, fmt::format("column '{}' has Arrow type tag {}, not a string (utf8 or large_utf8)",
                                         column, type));
      }
      place.node = place.nodes;
      place.buffer = place.buffers;
      place.offset_bytes = type == kUtf8 ? 4 : 8;
    }
    count_layout(f, field, place, 0);
  }
  if (place.offset_bytes == 0) {
    f.fail_at(schema.pos, fmt::format("no column '{}' (its columns: {}); name the text column with "
                                      "[data] hf_dataset_text_field",
                                      column, names.empty() ? "none" : names));
  }
  return place;
}

template <typename Offset>
void emit_texts(const std::string& name, uint64_t body_at, std::string_view validity, std::string_view offsets,
                std::string_view data, int64_t length, bool has_nulls, ArrowTextCount& count,
                const std::function<void(std::string_view)>& on_text) {
  if (length == 0) return;
  if (offsets.size() / sizeof(Offset) < static_cast<uint64_t>(length) + 1) {
    fail(name, body_at, fmt::format("offsets buffer of {} bytes too short for {} values", offsets.size(), length));
  }
  if (has_nulls && validity.size() < static_cast<uint64_t>(length + 7) / 8) {
    fail(name, body_at, fmt::format("validity bitmap of {} bytes too short for {} values", validity.size(), length));
  }
  for (int64_t i = 0; i < length; ++i) {
    if (has_nulls && !((static_cast<uint8_t>(validity[i / 8]) >> (i % 8)) & 1)) {
      ++count.nulls;
      continue;
    }
    Offset begin, end;
    std::memcpy(&begin, offsets.data() + i * sizeof(Offset), sizeof(Offset));
    std::memcpy(&end, offsets.data() + (i + 1) * sizeof(Offset), sizeof(Offset));
    if (begin < 0 || end < begin || static_cast<uint64_t>(end) > data.size()) {
      fail(name, body_at, fmt::format("value {} spans bytes [{}, {}) of a {}-byte data buffer", i, begin, end,
                                      data.size()));
    }
    on_text(data.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin)));
  }
}

// The column's values in one record batch's metadata `f` and `body` (read from byte `body_at`).
void read_batch(const Flat& f, const Flat::Table& batch, std::string_view body, uint64_t body_at,
                const ColumnPlace& place, const std::string& name, ArrowTextCount& count,
                const std::function<void(std::string_view)>& on_text) {
  if (f.indirect(batch, 3) != 0) {
    f.fail_at(batch.pos, "the record batch is compressed (LZ4 or ZSTD body), which kforge does not read; save the "
                         "dataset uncompressed");
  }
  count.rows += f.scalar<int64_t>(batch, 0, 0);
  const Flat::Vector nodes = f.vector(batch, 1, 16), buffers = f.vector(batch, 2, 16);
  if (nodes.count != place.nodes || buffers.count != place.buffers) {
    f.fail_at(batch.pos, fmt::format("record batch has {} field nodes and {} buffers; the schema needs {} and {}",
                                     nodes.count, buffers.count, place.nodes, place.buffers));
  }
  const auto node = nodes.start + 16 * place.node;
  const int64_t length = f.read<int64_t>(node), null_count = f.read<int64_t>(node + 8);
  if (length < 0 || null_count < 0 || null_count > length) {
    f.fail_at(node, fmt::format("field node length {} null count {}", length, null_count));
  }
  std::string_view part[3];
  for (size_t k = 0; k < 3; ++k) {
    const size_t at = buffers.start + 16 * (place.buffer + k);
    const int64_t offset = f.read<int64_t>(at), size = f.read<int64_t>(at + 8);
    if (offset < 0 || size < 0 || static_cast<uint64_t>(offset) > body.size() ||
        static_cast<uint64_t>(size) > body.size() - static_cast<uint64_t>(offset)) {
      f.fail_at(at, fmt::format("buffer [{}, +{}) outside the {}-byte message body", offset, size, body.size()));
    }
    part[k] = body.substr(static_cast<size_t>(offset), static_cast<size_t>(size));
  }
  if (place.offset_bytes == 4) {
    emit_texts<int32_t>(name, body_at, part[0], part[1], part[2], length, null_count > 0, count, on_text);
  } else {
    emit_texts<int64_t>(name, body_at, part[0], part[1], part[2], length, null_count > 0, count, on_text);
  }
}

}  // namespace

ArrowTextCount read_arrow_texts(std::istream& in, const std::string& name, const std::string& column,
                                const std::function<void(std::string_view)>& on_text) {
  in.seekg(0, std::ios::end);
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  uint64_t at = 0;
  const auto take = [&](std::string& into, uint64_t n, const char* what) {
    if (n > size - at) fail(name, at, fmt::format("truncated: {} of {} bytes expected, {} left", what, n, size - at));
    into.resize(static_cast<size_t>(n));
    if (!in.read(into.data(), static_cast<std::streamsize>(n))) fail(name, at, fmt::format("cannot read {}", what));
    at += n;
  };
  if (size >= 6) {
    std::string magic(6, '\0');
    in.read(magic.data(), 6);
    in.seekg(0);
    if (magic == "ARROW1") {
      fail(name, 0, "the Arrow IPC file format (ARROW1), which kforge does not read; it reads the stream format "
                    "that `datasets`' save_to_disk writes");
    }
  }
  ArrowTextCount count;
  std::optional<ColumnPlace> place;
  std::string word, metadata, body;
  while (at < size) {
    const uint64_t message_at = at;
    take(word, 4, "a message length");
    uint32_t length;
    std::memcpy(&length, word.data(), 4);
    if (length == 0xFFFFFFFFu) {  // the continuation marker of format 0.15 and later
      take(word, 4, "a message length");
      std::memcpy(&length, word.data(), 4);
    }
    if (length == 0) break;  // end of stream
    const uint64_t metadata_at = at;
    take(metadata, length, "message metadata");
    const Flat f(metadata, name, metadata_at);
    const Flat::Table message = f.root();
    const uint8_t header = f.scalar<uint8_t>(message, 1, 0);
    const int64_t body_length = f.scalar<int64_t>(message, 3, 0);
    if (body_length < 0) f.fail_at(message.pos, fmt::format("negative body length {}", body_length));
    const uint64_t body_at = at;
    take(body, static_cast<uint64_t>(body_length), "a message body");
    const auto header_table = f.child(message, 2);
    if (!header_table) f.fail_at(message.pos, "message without a header");
    if (header == kSchema) {
      if (place) fail(name, message_at, "a second schema message");
      place = schema_place(f, *header_table, column);
    } else if (header == kDictionaryBatch) {
      fail(name, message_at, "a dictionary batch: dictionary-encoded columns are not read; save the dataset without "
                             "dictionary encoding");
    } else if (header == kRecordBatch) {
      if (!place) fail(name, message_at, "a record batch before the schema");
      read_batch(f, *header_table, body, body_at, *place, name, count, on_text);
    } else {
      fail(name, message_at, fmt::format("message type {} in a record batch stream", header));
    }
  }
  if (!place) fail(name, at, "no schema message: not an Arrow IPC stream");
  return count;
}

ArrowTextCount read_arrow_texts(const std::filesystem::path& path, const std::string& column,
                                const std::function<void(std::string_view)>& on_text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw sdk::Error(fmt::format("cannot open Arrow file '{}'", path.string()));
  return read_arrow_texts(in, path.string(), column, on_text);
}

}  // namespace kforge::data
