// A restricted reader of Python pickles (protocols 2-5): data only, and only the globals a caller allows.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::interop {

/// One value of a pickle. Nothing is ever called: a class or function the pickle names (a "global") stays a name,
/// and what the pickle builds with it (REDUCE, NEWOBJ, BUILD) stays an `object` holding that name, its arguments and
/// its state for the caller to interpret. Values may be shared (the pickle's memo); they live in a PickleDocument.
struct PickleValue {
  enum class Kind { none, boolean, integer, big_integer, floating, string, bytes, list, tuple, dict, global, object,
                    persistent_id };
  Kind kind = Kind::none;
  bool boolean = false;
  int64_t integer = 0;
  double floating = 0;
  std::string text;                       ///< string (UTF-8), bytes, or a global's / object's "module.name"
  std::vector<const PickleValue*> items;  ///< list and tuple elements; a dict's keys and values, alternating
  const PickleValue* args = nullptr;      ///< object: the arguments it was built from (a tuple); persistent_id: its id
  const PickleValue* state = nullptr;     ///< object: what BUILD gave it, or nullptr

  /// A dict's value for the string key `key`, or nullptr (also when this is not a dict).
  const PickleValue* get(std::string_view key) const;
  /// "dict", "object torch.Size", ...: for messages.
  std::string describe() const;
};

/// Every value one pickle built; `root` is what it returns.
struct PickleDocument {
  std::deque<PickleValue> values;
  const PickleValue* root = nullptr;
};

/// Reads `bytes` (a whole pickle, ending at STOP). `allowed` lists the globals ("module.name") the pickle may name;
/// any other is refused with an sdk::Error naming it and `origin`. Built-in meanings: collections.OrderedDict()
/// becomes a dict, _codecs.encode(s, "latin1") bytes (protocol 2's way of writing bytes) and torch.Size(t) a tuple.
/// Throws sdk::Error naming `origin`, the byte offset and the opcode for anything malformed or unsupported.
PickleDocument read_pickle(std::string_view bytes, const std::set<std::string>& allowed, const std::string& origin);

}  // namespace kforge::interop
