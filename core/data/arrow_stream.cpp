// read_arrow_rows: Arrow IPC stream messages (Schema, RecordBatch) parsed from their flatbuffers by hand, every
// offset checked against the bytes read, and the requested string and binary columns' values handed out row by row.
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

// A field's place in every record batch: its index among the field nodes and that of its first buffer.
struct NodePlace {
  size_t node = 0, buffer = 0;
};

// Where a requested column's node and buffers are, and those of the struct columns above it.
struct ColumnPlace {
  std::vector<NodePlace> structs;  // outermost first
  NodePlace leaf;
  int offset_bytes = 0;  // 4 or 8; 0: not found
};

struct Layout {
  size_t nodes = 0, buffers = 0;  // of the whole schema
  std::vector<std::vector<std::string>> wanted;  // each requested column's names, outermost first
  std::vector<ColumnPlace> columns;
  std::vector<std::string> top;                          // the top-level columns' names
  std::vector<std::pair<std::string, std::string>> kids;  // (top-level struct, child) names
};

std::vector<std::string> split_path(const std::string& path) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) return {path};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

// The column's place when `field` (of type `type`, at `here`, below `structs`) is requested column k.
void take_column(const Flat& f, const Flat::Table& field, uint8_t type, const ArrowColumn& column,
                 const std::vector<NodePlace>& structs, NodePlace here, ColumnPlace& place) {
  const bool text = column.kind == ArrowKind::text;
  if (text ? type != kUtf8 && type != kLargeUtf8 : type != kBinary && type != kLargeBinary) {
    f.fail_at(field.pos, fmt::format("column '{}' has Arrow type tag {}, not {}", column.path, type,
                                     text ? "a string (utf8 or large_utf8)" : "binary (binary or large_binary)"));
  }
  place.structs = structs;
  place.leaf = here;
  place.offset_bytes = type == kUtf8 || type == kBinary ? 4 : 8;
}

// Adds the nodes and buffers of `field` and its children (pre-order, as record batches list them), placing the
// requested columns among them; `names` are the field's ancestors' and `structs` their places, while every ancestor
// is a struct (`addressable`).
void count_layout(const Flat& f, const Flat::Table& field, const std::vector<ArrowColumn>& columns, Layout& layout,
                  std::vector<std::string>& names, std::vector<NodePlace>& structs, bool addressable) {
  if (names.size() > 64) f.fail_at(field.pos, "Arrow field nesting deeper than 64");
  if (layout.nodes >= 65536) f.fail_at(field.pos, "more than 65536 Arrow fields");
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
  const NodePlace here{layout.nodes, layout.buffers};
  names.push_back(name);
  if (names.size() == 1) layout.top.push_back(name);
  if (names.size() == 2) layout.kids.emplace_back(names[0], name);
  for (size_t k = 0; addressable && k < columns.size(); ++k) {
    if (layout.columns[k].offset_bytes == 0 && layout.wanted[k] == names) {
      take_column(f, field, type, columns[k], structs, here, layout.columns[k]);
    }
  }
  layout.nodes += 1;
  layout.buffers += buffers;
  const bool is_struct = type == kStruct;
  if (is_struct) structs.push_back(here);
  const Flat::Vector children = f.vector(field, 5, 4);
  for (size_t i = 0; i < children.count; ++i) {
    count_layout(f, f.table_at(children, i), columns, layout, names, structs, addressable && is_struct);
  }
  if (is_struct) structs.pop_back();
  names.pop_back();
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

Layout schema_layout(const Flat& f, const Flat::Table& schema, const std::vector<ArrowColumn>& columns) {
  if (f.scalar<int16_t>(schema, 0, 0) != 0) {
    f.fail_at(schema.pos, "the stream is big-endian; kforge reads little-endian");
  }
  Layout layout;
  for (const ArrowColumn& c : columns) layout.wanted.push_back(split_path(c.path));
  layout.columns.resize(columns.size());
  const Flat::Vector fields = f.vector(schema, 1, 4);
  std::vector<std::string> names;
  std::vector<NodePlace> structs;
  for (size_t i = 0; i < fields.count; ++i) {
    count_layout(f, f.table_at(fields, i), columns, layout, names, structs, true);
  }
  for (size_t k = 0; k < columns.size(); ++k) {
    if (layout.columns[k].offset_bytes != 0) continue;
    std::string there = fmt::format("its columns: {}", quoted_list(layout.top));
    if (layout.wanted[k].size() == 2) {
      std::vector<std::string> kids;
      for (const auto& [parent, kid] : layout.kids) {
        if (parent == layout.wanted[k][0]) kids.push_back(kid);
      }
      if (!kids.empty()) there = fmt::format("the children of '{}': {}", layout.wanted[k][0], quoted_list(kids));
    }
    f.fail_at(schema.pos, fmt::format("no column '{}' ({}); name the column with [data] hf_dataset_text_field (and "
                                      "hf_dataset_image_field, hf_dataset_prompt_field for image-text data)",
                                      columns[k].path, there));
  }
  return layout;
}

// The stream, read at any offset, every read checked against its size.
class Source {
 public:
  Source(std::istream& in, const std::string& name) : in_(in), name_(name) {
    in_.seekg(0, std::ios::end);
    size_ = static_cast<uint64_t>(in_.tellg());
  }
  uint64_t size() const { return size_; }
  void read(uint64_t at, uint64_t n, std::string& into, const char* what) {
    if (at > size_ || n > size_ - at) {
      fail(name_, at, fmt::format("truncated: {} of {} bytes expected, {} left", what, n, at > size_ ? 0 : size_ - at));
    }
    into.resize(static_cast<size_t>(n));
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(at));
    if (n > 0 && !in_.read(into.data(), static_cast<std::streamsize>(n))) {
      fail(name_, at, fmt::format("cannot read {}", what));
    }
  }

 private:
  std::istream& in_;
  const std::string& name_;
  uint64_t size_ = 0;
};

// One requested column's arrays in a record batch.
struct Arrays {
  std::vector<std::string> struct_validity;  // each struct's above it, "" when it has no nulls
  std::string validity, offsets, data;       // validity "" when it has no nulls; data "" for a binary column
  uint64_t data_at = 0, data_size = 0;       // the data buffer's place in the stream
};

// Reads one record batch's arrays of the requested columns (from the body at `body_at` of `body_length` bytes) and
// hands out its rows from `first_row`.
class BatchReader {
 public:
  BatchReader(const Flat& f, const Flat::Table& batch, Source& src, const std::string& name, uint64_t body_at,
              int64_t body_length)
      : f_(f), src_(src), name_(name), body_at_(body_at), body_length_(body_length) {
    if (f.indirect(batch, 3) != 0) {
      f.fail_at(batch.pos, "the record batch is compressed (LZ4 or ZSTD body), which kforge does not read; save the "
                           "dataset uncompressed");
    }
    length_ = f.scalar<int64_t>(batch, 0, 0);
    if (length_ < 0) f.fail_at(batch.pos, fmt::format("record batch of {} rows", length_));
    nodes_ = f.vector(batch, 1, 16);
    buffers_ = f.vector(batch, 2, 16);
  }
  int64_t length() const { return length_; }
  void check_counts(const Layout& layout) const {
    if (nodes_.count != layout.nodes || buffers_.count != layout.buffers) {
      fail(name_, body_at_, fmt::format("record batch has {} field nodes and {} buffers; the schema needs {} and {}",
                                             nodes_.count, buffers_.count, layout.nodes, layout.buffers));
    }
  }
  Arrays arrays(const ColumnPlace& place, ArrowKind kind) const {
    Arrays a;
    for (const NodePlace& s : place.structs) a.struct_validity.push_back(validity(s));
    a.validity = validity(place.leaf);
    read_buffer(place.leaf.buffer + 1, a.offsets);
    const uint64_t need = static_cast<uint64_t>(length_) + 1;
    if (length_ > 0 && a.offsets.size() / static_cast<size_t>(place.offset_bytes) < need) {
      fail(name_, body_at_, fmt::format("offsets buffer of {} bytes too short for {} values", a.offsets.size(),
                                             length_));
    }
    const auto [offset, size] = buffer(place.leaf.buffer + 2);
    a.data_at = body_at_ + static_cast<uint64_t>(offset);
    a.data_size = static_cast<uint64_t>(size);
    if (kind == ArrowKind::text) read_buffer(place.leaf.buffer + 2, a.data);
    return a;
  }

 private:
  std::pair<int64_t, int64_t> buffer(size_t k) const {
    const size_t at = buffers_.start + 16 * k;
    const int64_t offset = f_.read<int64_t>(at), size = f_.read<int64_t>(at + 8);
    if (offset < 0 || size < 0 || offset > body_length_ || size > body_length_ - offset) {
      f_.fail_at(at, fmt::format("buffer [{}, +{}) outside the {}-byte message body", offset, size, body_length_));
    }
    return {offset, size};
  }
  void read_buffer(size_t k, std::string& into) const {
    const auto [offset, size] = buffer(k);
    src_.read(body_at_ + static_cast<uint64_t>(offset), static_cast<uint64_t>(size), into, "a buffer");
  }
  // The node's validity bitmap ("" without nulls), its length checked against the batch's.
  std::string validity(const NodePlace& p) const {
    const size_t node = nodes_.start + 16 * p.node;
    const int64_t length = f_.read<int64_t>(node), null_count = f_.read<int64_t>(node + 8);
    if (length != length_ || null_count < 0 || null_count > length) {
      f_.fail_at(node, fmt::format("field node length {} null count {} in a record batch of {} rows", length,
                                   null_count, length_));
    }
    std::string bits;
    if (null_count == 0) return bits;
    read_buffer(p.buffer, bits);
    if (bits.size() < static_cast<uint64_t>(length + 7) / 8) {
      fail(name_, body_at_, fmt::format("validity bitmap of {} bytes too short for {} values", bits.size(), length));
    }
    return bits;
  }

  const Flat& f_;
  Source& src_;
  const std::string& name_;
  uint64_t body_at_;
  int64_t body_length_;
  int64_t length_ = 0;
  Flat::Vector nodes_, buffers_;
};

bool is_set(const std::string& bits, int64_t i) {
  return bits.empty() || ((static_cast<uint8_t>(bits[static_cast<size_t>(i / 8)]) >> (i % 8)) & 1) != 0;
}

int64_t offset_at(const std::string& offsets, int64_t i, int width) {
  if (width == 4) {
    int32_t v;
    std::memcpy(&v, offsets.data() + i * 4, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, offsets.data() + i * 8, 8);
  return v;
}

}  // namespace

int64_t read_arrow_rows(std::istream& in, const std::string& name, const std::vector<ArrowColumn>& columns,
                        const std::function<void(int64_t row, const std::vector<ArrowCell>& cells)>& on_row) {
  Source src(in, name);
  const uint64_t size = src.size();
  if (size >= 6) {
    std::string magic;
    src.read(0, 6, magic, "the magic");
    if (magic == "ARROW1") {
      fail(name, 0, "the Arrow IPC file format (ARROW1), which kforge does not read; it reads the stream format "
                    "that `datasets`' save_to_disk writes");
    }
  }
  std::optional<Layout> layout;
  int64_t rows = 0;
  uint64_t at = 0;
  std::string word, metadata;
  std::vector<ArrowCell> cells(columns.size());
  const auto length_at = [&] {
    src.read(at, 4, word, "a message length");
    at += 4;
    uint32_t length;
    std::memcpy(&length, word.data(), 4);
    return length;
  };
  while (at < size) {
    const uint64_t message_at = at;
    uint32_t length = length_at();
    if (length == 0xFFFFFFFFu) length = length_at();  // the continuation marker of format 0.15 and later
    if (length == 0) break;  // end of stream
    const uint64_t metadata_at = at;
    src.read(at, length, metadata, "message metadata");
    at += length;
    const Flat f(metadata, name, metadata_at);
    const Flat::Table message = f.root();
    const uint8_t header = f.scalar<uint8_t>(message, 1, 0);
    const int64_t body_length = f.scalar<int64_t>(message, 3, 0);
    if (body_length < 0) f.fail_at(message.pos, fmt::format("negative body length {}", body_length));
    const uint64_t body_at = at;
    if (static_cast<uint64_t>(body_length) > size - at) {
      fail(name, at, fmt::format("truncated: a message body of {} bytes expected, {} left", body_length, size - at));
    }
    at += static_cast<uint64_t>(body_length);
    const auto header_table = f.child(message, 2);
    if (!header_table) f.fail_at(message.pos, "message without a header");
    if (header == kSchema) {
      if (layout) fail(name, message_at, "a second schema message");
      layout = schema_layout(f, *header_table, columns);
    } else if (header == kDictionaryBatch) {
      fail(name, message_at, "a dictionary batch: dictionary-encoded columns are not read; save the dataset without "
                             "dictionary encoding");
    } else if (header == kRecordBatch) {
      if (!layout) fail(name, message_at, "a record batch before the schema");
      const BatchReader batch(f, *header_table, src, name, body_at, body_length);
      batch.check_counts(*layout);
      std::vector<Arrays> arrays;
      for (size_t k = 0; k < columns.size(); ++k) arrays.push_back(batch.arrays(layout->columns[k], columns[k].kind));
      for (int64_t i = 0; i < batch.length(); ++i) {
        for (size_t k = 0; k < columns.size(); ++k) {
          const Arrays& a = arrays[k];
          ArrowCell& cell = cells[k];
          cell = ArrowCell{};
          bool present = is_set(a.validity, i);
          for (const std::string& bits : a.struct_validity) present = present && is_set(bits, i);
          if (!present) continue;
          const int width = layout->columns[k].offset_bytes;
          const int64_t begin = offset_at(a.offsets, i, width), end = offset_at(a.offsets, i + 1, width);
          if (begin < 0 || end < begin || static_cast<uint64_t>(end) > a.data_size) {
            fail(name, body_at, fmt::format("value {} of column '{}' spans bytes [{}, {}) of a {}-byte data buffer", i,
                                            columns[k].path, begin, end, a.data_size));
          }
          cell.null = false;
          cell.file_offset = a.data_at + static_cast<uint64_t>(begin);
          cell.size = static_cast<uint64_t>(end - begin);
          if (columns[k].kind == ArrowKind::text) {
            cell.bytes = std::string_view(a.data).substr(static_cast<size_t>(begin), static_cast<size_t>(cell.size));
          }
        }
        on_row(rows + i, cells);
      }
      rows += batch.length();
    } else {
      fail(name, message_at, fmt::format("message type {} in a record batch stream", header));
    }
  }
  if (!layout) fail(name, at, "no schema message: not an Arrow IPC stream");
  return rows;
}

ArrowTextCount read_arrow_texts(std::istream& in, const std::string& name, const std::string& column,
                                const std::function<void(std::string_view)>& on_text) {
  ArrowTextCount count;
  const auto on_row = [&](int64_t, const std::vector<ArrowCell>& cells) {
    if (cells[0].null) {
      ++count.nulls;
    } else {
      on_text(cells[0].bytes);
    }
  };
  count.rows = read_arrow_rows(in, name, {{column, ArrowKind::text}}, on_row);
  return count;
}

ArrowTextCount read_arrow_texts(const std::filesystem::path& path, const std::string& column,
                                const std::function<void(std::string_view)>& on_text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw sdk::Error(fmt::format("cannot open Arrow file '{}'", path.string()));
  return read_arrow_texts(in, path.string(), column, on_text);
}

}  // namespace kforge::data
