// The restricted pickle reader (see pickle_reader.h): a stack machine over the data opcodes of protocols 2-5.
#include "interop/pickle_reader.h"

#include <fmt/format.h>

#include <cstring>
#include <unordered_map>

#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace {

using Kind = PickleValue::Kind;

class PickleMachine {
 public:
  PickleMachine(std::string_view bytes, const std::set<std::string>& allowed, const std::string& origin)
      : bytes_(bytes), allowed_(allowed), origin_(origin) {}

  PickleDocument run() {
    while (true) {
      if (pos_ >= bytes_.size()) fail("the pickle ends before its STOP opcode");
      opcode_at_ = pos_;
      opcode_ = static_cast<uint8_t>(bytes_[pos_++]);
      if (opcode_ == '.') break;
      step();
    }
    if (stack_.size() != 1 || !marks_.empty()) fail(fmt::format("STOP with {} values on the stack", stack_.size()));
    doc_.root = stack_.back();
    return std::move(doc_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw sdk::Error(fmt::format("{}: not a pickle this reader accepts: {} (opcode 0x{:02x} at byte {})", origin_,
                                 what, opcode_, opcode_at_));
  }

  std::string_view take(uint64_t n) {
    if (n > bytes_.size() - pos_) fail(fmt::format("{} bytes wanted, {} left", n, bytes_.size() - pos_));
    const std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  uint64_t unsigned_le(size_t n) {
    const std::string_view b = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
    return v;
  }

  std::string line() {
    const size_t end = bytes_.find('\n', pos_);
    if (end == std::string_view::npos) fail("a GLOBAL name without its newline");
    std::string out(bytes_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }

  PickleValue* make(Kind kind) {
    doc_.values.emplace_back();
    doc_.values.back().kind = kind;
    return &doc_.values.back();
  }

  void push(PickleValue* v) { stack_.push_back(v); }

  PickleValue* pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("a value wanted from an empty stack (or mark)");
    PickleValue* v = stack_.back();
    stack_.pop_back();
    return v;
  }

  PickleValue* top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("a value wanted from an empty stack (or mark)");
    return stack_.back();
  }

  // The values since the last MARK, which is removed.
  std::vector<PickleValue*> pop_mark() {
    if (marks_.empty()) fail("no MARK to pop to");
    std::vector<PickleValue*> out(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return out;
  }

  PickleValue* tuple_of(const std::vector<PickleValue*>& items) {
    PickleValue* t = make(Kind::tuple);
    t->items.assign(items.begin(), items.end());
    return t;
  }

  void append_to(PickleValue* target, const std::vector<PickleValue*>& items) {
    if (target->kind != Kind::list) fail(fmt::format("APPEND to a {}", target->describe()));
    target->items.insert(target->items.end(), items.begin(), items.end());
  }

  void set_items(PickleValue* target, const std::vector<PickleValue*>& pairs) {
    if (target->kind != Kind::dict) fail(fmt::format("SETITEM on a {}", target->describe()));
    if (pairs.size() % 2 != 0) fail("SETITEMS with a key but no value");
    target->items.insert(target->items.end(), pairs.begin(), pairs.end());
  }

  // A new list or dict holding `items` (LIST, DICT).
  PickleValue* filled(Kind kind, const std::vector<PickleValue*>& items) {
    PickleValue* container = make(kind);
    if (kind == Kind::list) {
      append_to(container, items);
    } else {
      set_items(container, items);
    }
    return container;
  }

  PickleValue* global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    if (!allowed_.count(full)) {
      throw sdk::Error(fmt::format("{}: the pickle names {}, which this reader does not accept (it reads the "
                                   "checkpoint format's own classes only; nothing in the file is run)",
                                   origin_, full));
    }
    PickleValue* g = make(Kind::global);
    g->text = full;
    return g;
  }

  // callable(*args), as a value: a few built-ins are understood, everything else becomes an object.
  PickleValue* reduce(const PickleValue* callable, PickleValue* args) {
    if (callable->kind != Kind::global) fail(fmt::format("REDUCE calls a {}", callable->describe()));
    if (args->kind != Kind::tuple) fail(fmt::format("REDUCE with {} arguments", args->describe()));
    const std::string& name = callable->text;
    if (name == "collections.OrderedDict" && args->items.empty()) return make(Kind::dict);
    if (name == "torch.Size" && args->items.size() == 1 && args->items[0]->kind == Kind::tuple) {
      return const_cast<PickleValue*>(args->items[0]);  // every value is the machine's own: only viewed as const
    }
    if (name == "_codecs.encode") return latin1(args);
    PickleValue* o = make(Kind::object);
    o->text = name;
    o->args = args;
    return o;
  }

  // _codecs.encode(text, "latin1"): each code point of the UTF-8 text below 256 is one byte.
  PickleValue* latin1(const PickleValue* args) {
    if (args->items.size() != 2 || args->items[0]->kind != Kind::string || args->items[1]->kind != Kind::string ||
        (args->items[1]->text != "latin1" && args->items[1]->text != "latin-1")) {
      fail("_codecs.encode other than (str, 'latin1')");
    }
    PickleValue* out = make(Kind::bytes);
    const std::string& s = args->items[0]->text;
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<uint8_t>(s[i]);
      if (c < 0x80) {
        out->text.push_back(static_cast<char>(c));
      } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size() && c <= 0xC3) {
        out->text.push_back(static_cast<char>(((c & 0x1F) << 6) | (static_cast<uint8_t>(s[++i]) & 0x3F)));
      } else {
        fail("_codecs.encode of a character above U+00FF");
      }
    }
    return out;
  }

  PickleValue* integer(int64_t v) {
    PickleValue* out = make(Kind::integer);
    out->integer = v;
    return out;
  }

  // LONG1/LONG4: little-endian two's complement; wider than 64 bits stays a big_integer without a value.
  PickleValue* long_integer(uint64_t n) {
    const std::string_view b = take(n);
    if (n > 8) return make(Kind::big_integer);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
    if (n > 0 && n < 8 && (static_cast<uint8_t>(b[n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);
    return integer(static_cast<int64_t>(v));
  }

  PickleValue* text_value(Kind kind, uint64_t n) {
    PickleValue* out = make(kind);
    out->text = std::string(take(n));
    return out;
  }

  void memo_put(uint64_t index) { memo_[index] = top(); }

  PickleValue* memo_get(uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) fail(fmt::format("memo entry {} read before it was written", index));
    return it->second;
  }

  void step() {
    switch (opcode_) {
      case 0x80: take(1); return;           // PROTO
      case 0x95: take(8); return;           // FRAME: a length hint only
      case '(': marks_.push_back(stack_.size()); return;
      case '0': pop(); return;
      case '1': pop_mark(); return;
      case '2': push(top()); return;        // DUP
      case 'N': push(make(Kind::none)); return;
      case 0x88:
      case 0x89: {
        PickleValue* b = make(Kind::boolean);
        b->boolean = opcode_ == 0x88;
        push(b);
        return;
      }
      case 'J': push(integer(static_cast<int32_t>(static_cast<uint32_t>(unsigned_le(4))))); return;
      case 'K': push(integer(static_cast<int64_t>(unsigned_le(1)))); return;
      case 'M': push(integer(static_cast<int64_t>(unsigned_le(2)))); return;
      case 0x8a: push(long_integer(unsigned_le(1))); return;
      case 0x8b: push(long_integer(unsigned_le(4))); return;
      case 'G': {
        const std::string_view b = take(8);
        uint64_t bits = 0;
        for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(b[i]);  // big-endian
        PickleValue* f = make(Kind::floating);
        std::memcpy(&f->floating, &bits, sizeof bits);
        push(f);
        return;
      }
      case 0x8c: push(text_value(Kind::string, unsigned_le(1))); return;
      case 'X': push(text_value(Kind::string, unsigned_le(4))); return;
      case 0x8d: push(text_value(Kind::string, unsigned_le(8))); return;
      case 'C': push(text_value(Kind::bytes, unsigned_le(1))); return;
      case 'B': push(text_value(Kind::bytes, unsigned_le(4))); return;
      case 0x8e: push(text_value(Kind::bytes, unsigned_le(8))); return;
      case ')': push(make(Kind::tuple)); return;
      case 't': push(tuple_of(pop_mark())); return;
      case 0x85:
      case 0x86:
      case 0x87: {
        std::vector<PickleValue*> items(static_cast<size_t>(opcode_ - 0x84));
        for (size_t i = items.size(); i-- > 0;) items[i] = pop();
        push(tuple_of(items));
        return;
      }
      case ']': push(make(Kind::list)); return;
      case 'l': push(filled(Kind::list, pop_mark())); return;
      case 'a': {
        PickleValue* v = pop();
        append_to(top(), {v});
        return;
      }
      case 'e': {
        std::vector<PickleValue*> items = pop_mark();
        append_to(top(), items);
        return;
      }
      case '}': push(make(Kind::dict)); return;
      case 'd': push(filled(Kind::dict, pop_mark())); return;
      case 's': {
        PickleValue* v = pop();
        PickleValue* k = pop();
        set_items(top(), {k, v});
        return;
      }
      case 'u': {
        std::vector<PickleValue*> pairs = pop_mark();
        set_items(top(), pairs);
        return;
      }
      case 'c': {
        const std::string module = line();
        push(global(module, line()));
        return;
      }
      case 0x93: {
        PickleValue* name = pop();
        PickleValue* module = pop();
        if (module->kind != Kind::string || name->kind != Kind::string) fail("STACK_GLOBAL of non-strings");
        push(global(module->text, name->text));
        return;
      }
      case 'R': {
        PickleValue* args = pop();
        PickleValue* callable = pop();
        push(reduce(callable, args));
        return;
      }
      case 0x81:
      case 0x92: {  // NEWOBJ cls(*args), NEWOBJ_EX cls(*args, **kwargs)
        PickleValue* kwargs = opcode_ == 0x92 ? pop() : nullptr;
        PickleValue* args = pop();
        PickleValue* cls = pop();
        if (cls->kind != Kind::global || args->kind != Kind::tuple) fail("NEWOBJ of a non-class or without a tuple");
        if (kwargs && (kwargs->kind != Kind::dict || !kwargs->items.empty())) fail("NEWOBJ_EX with keyword arguments");
        PickleValue* o = make(Kind::object);
        o->text = cls->text;
        o->args = args;
        push(o);
        return;
      }
      case 'b': {
        PickleValue* state = pop();
        PickleValue* target = top();
        if (target->kind != Kind::object || target->state != nullptr) fail(fmt::format("BUILD on a {}", target->describe()));
        target->state = state;
        return;
      }
      case 'Q': {
        PickleValue* id = make(Kind::persistent_id);
        id->args = pop();
        push(id);
        return;
      }
      case 'q': memo_put(unsigned_le(1)); return;
      case 'r': memo_put(unsigned_le(4)); return;
      case 0x94: memo_put(memo_.size()); return;
      case 'h': push(memo_get(unsigned_le(1))); return;
      case 'j': push(memo_get(unsigned_le(4))); return;
      default: fail("an opcode this reader does not read");
    }
  }

  std::string_view bytes_;
  const std::set<std::string>& allowed_;
  const std::string& origin_;
  size_t pos_ = 0, opcode_at_ = 0;
  uint8_t opcode_ = 0;
  PickleDocument doc_;
  std::vector<PickleValue*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PickleValue*> memo_;
};

}  // namespace

const PickleValue* PickleValue::get(std::string_view key) const {
  if (kind != Kind::dict) return nullptr;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    if (items[i]->kind == Kind::string && items[i]->text == key) return items[i + 1];
  }
  return nullptr;
}

std::string PickleValue::describe() const {
  static const char* const names[] = {"None",  "bool", "int",  "int",    "float",  "str",          "bytes",
                                      "list",  "tuple", "dict", "global", "object", "persistent id"};
  const std::string base = names[static_cast<int>(kind)];
  return kind == Kind::global || kind == Kind::object ? base + " " + text : base;
}

PickleDocument read_pickle(std::string_view bytes, const std::set<std::string>& allowed, const std::string& origin) {
  return PickleMachine(bytes, allowed, origin).run();
}

}  // namespace kforge::interop
