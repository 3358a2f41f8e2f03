// torch.save files: the zip through LibTorch's PyTorchStreamReader, the pickle through the restricted reader.
#include "interop/torch_save.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>

#include <cstring>
#include <set>

#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace {

using Kind = PickleValue::Kind;

// The zip's bytes, as PyTorchStreamReader reads them.
class MemoryAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit MemoryAdapter(std::string_view bytes) : bytes_(bytes) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= bytes_.size()) return 0;
    const size_t count = std::min<size_t>(n, bytes_.size() - pos);
    std::memcpy(buf, bytes_.data() + pos, count);
    return count;
  }

 private:
  std::string_view bytes_;
};

// torch's typed storage classes, as torch.save names a tensor's storage.
const std::map<std::string, at::ScalarType>& storage_dtypes() {
  static const std::map<std::string, at::ScalarType> dtypes = {
      {"torch.FloatStorage", at::kFloat}, {"torch.DoubleStorage", at::kDouble}, {"torch.HalfStorage", at::kHalf},
      {"torch.BFloat16Storage", at::kBFloat16}, {"torch.LongStorage", at::kLong}, {"torch.IntStorage", at::kInt},
      {"torch.ShortStorage", at::kShort}, {"torch.CharStorage", at::kChar}, {"torch.ByteStorage", at::kByte},
      {"torch.BoolStorage", at::kBool}};
  return dtypes;
}

// What a torch.save pickle of tensors, Python containers and a NumPy random state names.
const std::set<std::string>& saved_globals() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out = {"torch._utils._rebuild_tensor_v2", "collections.OrderedDict", "_codecs.encode"};
    for (const auto& [name, dtype] : storage_dtypes()) out.insert(name);
    for (const char* numpy : {"numpy.core.multiarray", "numpy._core.multiarray"}) {
      out.insert(std::string(numpy) + "._reconstruct");
      out.insert(std::string(numpy) + ".scalar");
    }
    out.insert("numpy.ndarray");
    out.insert("numpy.dtype");
    return out;
  }();
  return names;
}

std::string record_text(caffe2::serialize::PyTorchStreamReader& reader, const std::string& name) {
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

std::vector<int64_t> int_tuple(const PickleValue* v, const std::string& what) {
  if (v->kind != Kind::tuple) throw sdk::Error(fmt::format("{} is a {}, not a tuple", what, v->describe()));
  std::vector<int64_t> out;
  for (const PickleValue* d : v->items) {
    if (d->kind != Kind::integer || d->integer < 0) throw sdk::Error(fmt::format("{} holds {}", what, d->describe()));
    out.push_back(d->integer);
  }
  return out;
}

}  // namespace

TorchSaved::TorchSaved(std::string_view bytes, std::string origin) : origin_(std::move(origin)) {
  std::string pickle;
  try {
    caffe2::serialize::PyTorchStreamReader reader(std::make_shared<MemoryAdapter>(bytes));
    if (reader.hasRecord("byteorder") && record_text(reader, "byteorder") != "little") {
      throw sdk::Error(fmt::format("{}: written on a big-endian machine; only little-endian files are read", origin_));
    }
    pickle = record_text(reader, "data.pkl");
    for (const std::string& name : reader.getAllRecords()) {
      if (name.rfind("data/", 0) == 0) records_[name.substr(5)] = record_text(reader, name);
    }
  } catch (const c10::Error& e) {
    throw sdk::Error(fmt::format("{}: not a torch.save file ({})", origin_, e.what_without_backtrace()));
  }
  doc_ = read_pickle(pickle, saved_globals(), origin_);
}

at::Tensor TorchSaved::tensor(const PickleValue& value, const std::string& what) const {
  const std::string where = fmt::format("{}: {}", origin_, what);
  if (value.kind != Kind::object || value.text != "torch._utils._rebuild_tensor_v2" || value.args->items.size() < 4) {
    throw sdk::Error(fmt::format("{} is a {}, not a tensor", where, value.describe()));
  }
  const auto& args = value.args->items;
  const PickleValue* pid = args[0]->kind == Kind::persistent_id ? args[0]->args : nullptr;
  // ('storage', <class>, key, location, numel)
  if (pid == nullptr || pid->kind != Kind::tuple || pid->items.size() < 3 || pid->items[1]->kind != Kind::global ||
      pid->items[2]->kind != Kind::string || !storage_dtypes().count(pid->items[1]->text)) {
    throw sdk::Error(fmt::format("{}: its storage is not a typed torch storage", where));
  }
  const at::ScalarType dtype = storage_dtypes().at(pid->items[1]->text);
  const auto record = records_.find(pid->items[2]->text);
  if (record == records_.end()) {
    throw sdk::Error(fmt::format("{}: storage record data/{} is missing", where, pid->items[2]->text));
  }
  const int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
  const auto storage_bytes = static_cast<int64_t>(record->second.size());
  if (storage_bytes % element != 0) {
    throw sdk::Error(fmt::format("{}: storage of {} bytes is not whole {} elements", where, storage_bytes,
                                 c10::toString(dtype)));
  }
  if (args[1]->kind != Kind::integer || args[1]->integer < 0) {
    throw sdk::Error(fmt::format("{}: storage offset is {}", where, args[1]->describe()));
  }
  const int64_t offset = args[1]->integer;
  const std::vector<int64_t> sizes = int_tuple(args[2], where + " size");
  const std::vector<int64_t> strides = int_tuple(args[3], where + " stride");
  if (sizes.size() != strides.size()) throw sdk::Error(fmt::format("{}: size and stride differ in length", where));
  // The view's last element must lie inside the storage (an empty view reads nothing), and it holds no more elements
  // than the storage (torch.save of DCP's and KempnerForge's tensors: no expanded views).
  const int64_t storage_numel = storage_bytes / element;
  int64_t numel = 1;
  for (const int64_t size : sizes) {
    numel = size != 0 && numel > storage_numel / size ? storage_numel + 1 : numel * size;  // saturates past the storage
  }
  if (numel > storage_numel) {
    throw sdk::Error(fmt::format("{}: a view of shape {} is larger than its storage of {} elements", where,
                                 c10::str(c10::IntArrayRef(sizes)), storage_numel));
  }
  int64_t last = offset;
  bool empty = numel == 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 0 && strides[d] > storage_numel / sizes[d] + 1) {
      throw sdk::Error(fmt::format("{}: dimension {} (size {}, stride {}) reaches past its storage", where, d,
                                   sizes[d], strides[d]));
    }
    if (sizes[d] > 0) last += (sizes[d] - 1) * strides[d];
  }
  if (!empty && last >= storage_numel) {
    throw sdk::Error(fmt::format("{}: the view reaches element {} of a storage of {}", where, last, storage_numel));
  }
  at::Tensor storage = at::empty({storage_numel}, at::TensorOptions().dtype(dtype));
  std::memcpy(storage.data_ptr(), record->second.data(), record->second.size());
  if (empty) return at::empty(sizes, storage.options());
  return storage.as_strided(sizes, strides, offset).clone(at::MemoryFormat::Contiguous);
}

}  // namespace kforge::interop
