// tokenizer.json -> BpeTokenizer: each section read and checked against what kforge implements.
#include "data/hf_tokenizer_json.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "data/bpe_tokenizer.h"
#include "data/byte_level.h"
#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

using nlohmann::json;

/// Reads one tokenizer.json; every refusal names the file, the JSON path and the value found there.
class HfTokenizerJson {
 public:
  explicit HfTokenizerJson(const std::filesystem::path& path) : path_(path), root_(parse(path)) {}

  std::unique_ptr<TokenizerBackend> load() {
    const json& model = at(root_, "model", "model");
    expect_value(model, "model", "type", "BPE", "the model type (kforge reads byte-level BPE tokenizers)");
    for (const char* key : {"dropout", "continuing_subword_prefix", "end_of_word_suffix"}) {
      if (model.contains(key) && !model[key].is_null() && model[key] != "")
        refuse("model." + std::string(key), model[key]);
    }
    if (flag(model, "model", "byte_fallback", false)) refuse("model.byte_fallback", model["byte_fallback"]);
    const bool nfc = read_normalizer();
    std::vector<std::string> patterns = read_pre_tokenizer();
    read_decoder();

    std::vector<std::string> tokens;
    const json& vocab = at(model, "vocab", "model.vocab");
    if (!vocab.is_object()) refuse("model.vocab", "(not an object)");
    // The ids of an N-token vocab are 0 to N-1 (the table is sized by the highest: a stray large id would ask for
    // gigabytes).
    const auto entries = static_cast<int64_t>(vocab.size());
    for (const auto& [text, id] : vocab.items()) {
      const auto bytes = unicode_to_bytes(text);
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= entries || !bytes) {
        refuse(fmt::format("model.vocab[\"{}\"]", text), id,
               fmt::format("a byte-level token (characters of GPT-2's byte mapping) with an id from 0 to {}, "
                           "one per token of the {}-token vocab",
                           entries - 1, entries));
      }
      const auto index = static_cast<size_t>(id.get<int64_t>());
      if (index >= tokens.size()) tokens.resize(index + 1);
      tokens[index] = *bytes;
    }
    const BpeModel::MergeList merges = read_merges(at(model, "merges", "model.merges"));

    BpeTokenizer::Options options;
    options.kind = "hf-bpe";
    options.path = path_.string();
    options.nfc = nfc;
    options.added = read_added_tokens();
    const json config = read_tokenizer_config();
    options.name = config_token(config, "tokenizer_class");
    if (options.name.empty()) options.name = path_.filename().string();
    BpeModel bpe(std::move(tokens), &merges, flag(model, "model", "ignore_merges", false),
                 fmt::format("'{}' model.merges", path_.string()));
    const auto id_of = [&](const std::string& text) -> int {
      for (const auto& token : options.added) {
        if (token.content == text) return token.id;
      }
      return bpe.find(text).value_or(-1);
    };
    const auto first_added = [&](std::initializer_list<const char*> names) {
      for (const char* name : names) {
        for (const auto& token : options.added) {
          if (token.content == name) return token.id;
        }
      }
      return -1;
    };
    const auto from_config = [&](const char* key) -> std::optional<int> {
      const std::string text = config_token(config, key);
      if (text.empty()) return std::nullopt;
      const int id = id_of(text);
      if (id < 0) refuse_config(key, text);
      return id;
    };
    options.special.eos = from_config("eos_token").value_or(first_added({"<|endoftext|>", "<|end_of_text|>", "</s>"}));
    options.special.bos = from_config("bos_token").value_or(first_added({"<|begin_of_text|>", "<s>"}));
    options.special.pad = from_config("pad_token").value_or(-1);
    if (model.contains("unk_token") && model["unk_token"].is_string()) {
      options.special.unk = id_of(model["unk_token"].get<std::string>());
    }
    const std::string origin = fmt::format("'{}' pre_tokenizer", path_.string());
    return std::make_unique<BpeTokenizer>(std::move(bpe), Pretokenizer(patterns, origin), std::move(options));
  }

 private:
  static json parse(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw sdk::Error(fmt::format("tokenizer '{}': cannot be read", path.string()));
    try {
      return json::parse(in);
    } catch (const json::exception& e) {
      throw sdk::Error(fmt::format("tokenizer '{}' is not valid JSON (truncated?): {}", path.string(), e.what()));
    }
  }

  [[noreturn]] void refuse(const std::string& where, const json& value, const std::string& allowed = "") const {
    throw sdk::Error(fmt::format("tokenizer '{}': {} = {} is not supported{}", path_.string(), where,
                                 value.dump().substr(0, 200),
                                 allowed.empty() ? "" : " (kforge reads " + allowed + ")"));
  }

  [[noreturn]] void refuse_config(const char* key, const std::string& text) const {
    throw sdk::Error(fmt::format("tokenizer '{}': tokenizer_config.json's {} '{}' is not a token of the tokenizer",
                                 path_.string(), key, text));
  }

  /// object[key] as a bool, `fallback` when it is absent or null; another type is refused naming where.key.
  bool flag(const json& object, const std::string& where, const char* key, bool fallback) const {
    if (!object.is_object() || !object.contains(key) || object[key].is_null()) return fallback;
    if (!object[key].is_boolean()) refuse(where + "." + key, object[key], "true or false");
    return object[key].get<bool>();
  }

  /// object[key] as a string, "" when `object` is no object or the key is absent; another type is refused.
  std::string text(const json& object, const std::string& where, const char* key) const {
    if (!object.is_object() || !object.contains(key)) return "";
    if (!object[key].is_string()) refuse(where + "." + key, object[key], "a string");
    return object[key].get<std::string>();
  }

  const json& at(const json& object, const char* key, const std::string& where) const {
    if (!object.is_object() || !object.contains(key)) {
      throw sdk::Error(fmt::format("tokenizer '{}': {} is missing", path_.string(), where));
    }
    return object[key];
  }

  void expect_value(const json& object, const std::string& where, const char* key, const char* value,
                    const char* what) const {
    const json& found = at(object, key, where + "." + key);
    if (found != value) refuse(where + "." + key, found, fmt::format("{} \"{}\"", what, value));
  }

  bool read_normalizer() const {
    const json& normalizer = root_.value("normalizer", json());
    if (normalizer.is_null()) return false;
    if (text(normalizer, "normalizer", "type") != "NFC") {
      refuse("normalizer", normalizer, "null or {\"type\": \"NFC\"}");
    }
    return true;
  }

  /// The regexes, in order; a ByteLevel step is required (the vocabulary is byte-level).
  std::vector<std::string> read_pre_tokenizer() const {
    const json& pre = at(root_, "pre_tokenizer", "pre_tokenizer");
    const bool sequence = text(pre, "pre_tokenizer", "type") == "Sequence";
    const json steps = sequence ? at(pre, "pretokenizers", "pre_tokenizer.pretokenizers") : json::array({pre});
    if (!steps.is_array()) refuse("pre_tokenizer.pretokenizers", steps, "a list of steps");
    std::vector<std::string> patterns;
    bool byte_level = false;
    for (size_t i = 0; i < steps.size(); ++i) {
      const json& step = steps[i];
      const std::string where = sequence ? fmt::format("pre_tokenizer.pretokenizers[{}]", i) : "pre_tokenizer";
      const std::string type = text(step, where, "type");
      if (type == "ByteLevel" && !byte_level) {
        if (flag(step, where, "add_prefix_space", false)) refuse(where + ".add_prefix_space", step["add_prefix_space"]);
        if (flag(step, where, "use_regex", true)) patterns.emplace_back(kGpt2Pattern);
        byte_level = true;
      } else if (type == "Split" && !byte_level) {
        const json& pattern = at(step, "pattern", where + ".pattern");
        if (!pattern.is_object() || !pattern.contains("Regex") || !pattern["Regex"].is_string()) {
          refuse(where + ".pattern", pattern, "{\"Regex\": ...}");
        }
        expect_value(step, where, "behavior", "Isolated", "the Split behavior");
        if (flag(step, where, "invert", false)) refuse(where + ".invert", step["invert"]);
        patterns.push_back(pattern["Regex"].get<std::string>());
      } else {
        refuse(where, step, "Split {Regex, Isolated} steps followed by one ByteLevel");
      }
    }
    if (!byte_level) refuse("pre_tokenizer", pre, "a byte-level BPE: a ByteLevel pre-tokenizer");
    return patterns;
  }

  void read_decoder() const {
    const json& decoder = root_.value("decoder", json());
    if (!decoder.is_null() && text(decoder, "decoder", "type") != "ByteLevel") {
      refuse("decoder", decoder, "the ByteLevel decoder");
    }
  }

  BpeModel::MergeList read_merges(const json& merges) const {
    if (!merges.is_array()) refuse("model.merges", "(not an array)");
    BpeModel::MergeList out;
    out.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
      const json& merge = merges[i];
      std::string left, right;
      if (merge.is_string()) {
        const std::string text = merge.get<std::string>();
        const auto space = text.find(' ');
        if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
          refuse(fmt::format("model.merges[{}]", i), merge, "\"a b\" or [\"a\", \"b\"]");
        }
        left = text.substr(0, space);
        right = text.substr(space + 1);
      } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
        left = merge[0].get<std::string>();
        right = merge[1].get<std::string>();
      } else {
        refuse(fmt::format("model.merges[{}]", i), merge, "\"a b\" or [\"a\", \"b\"]");
      }
      auto l = unicode_to_bytes(left), r = unicode_to_bytes(right);
      if (!l || !r) refuse(fmt::format("model.merges[{}]", i), merge, "byte-level tokens");
      out.emplace_back(std::move(*l), std::move(*r));
    }
    return out;
  }

  std::vector<AddedToken> read_added_tokens() const {
    std::vector<AddedToken> out;
    const json& added = root_.value("added_tokens", json::array());
    if (!added.is_array()) refuse("added_tokens", added, "a list of {\"id\": N, \"content\": \"...\"}");
    for (size_t i = 0; i < added.size(); ++i) {
      const json& token = added[i];
      const std::string where = fmt::format("added_tokens[{}]", i);
      if (!token.is_object() || !token.contains("content") || !token["content"].is_string() || !token.contains("id") ||
          !token["id"].is_number_integer() || token["id"].get<int64_t>() < 0) {
        refuse(where, token, "{\"id\": N, \"content\": \"...\"}");
      }
      for (const char* name : {"single_word", "lstrip", "rstrip"}) {
        if (flag(token, where, name, false)) refuse(where + "." + name, token[name]);
      }
      out.push_back(AddedToken{token["content"].get<std::string>(), static_cast<int>(token["id"].get<int64_t>())});
    }
    return out;
  }

  json read_tokenizer_config() const {
    const auto config = path_.parent_path() / "tokenizer_config.json";
    std::ifstream in(config, std::ios::binary);
    if (!in) return json::object();
    try {
      return json::parse(in);
    } catch (const json::exception& e) {
      throw sdk::Error(
          fmt::format("tokenizer '{}': '{}' is not valid JSON: {}", path_.string(), config.string(), e.what()));
    }
  }

  /// tokenizer_config.json's `key`: a string, or an AddedToken object's content; empty when absent or otherwise.
  static std::string config_token(const json& config, const char* key) {
    const json& value = config.is_object() ? config.value(key, json()) : json();
    if (value.is_string()) return value.get<std::string>();
    if (value.is_object() && value.contains("content") && value["content"].is_string()) return value["content"];
    return "";
  }

  std::filesystem::path path_;
  json root_;
};

}  // namespace

std::unique_ptr<TokenizerBackend> load_hf_tokenizer_json(const std::filesystem::path& path) {
  return HfTokenizerJson(path).load();
}

}  // namespace kforge::data
