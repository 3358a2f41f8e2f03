// find_tatm_metadata: tokenized_info.dtype and vocab_size of tatm's metadata.yaml, parsed by libyaml.
#include "tatm_metadata.h"

#include <fmt/format.h>
#include <yaml.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>

#include "kforge/sdk/error.h"

namespace kforge::builtin::data {
namespace {

namespace fs = std::filesystem;

// A loaded YAML document, freed with its parser.
class YamlDocument {
 public:
  YamlDocument(const std::string& text, const std::string& file) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    if (yaml_parser_load(&parser_, &document_) == 0) {
      const std::string problem = parser_.problem != nullptr ? parser_.problem : "unreadable";
      const size_t line = parser_.problem_mark.line + 1;
      yaml_parser_delete(&parser_);
      throw sdk::ConfigError(
          fmt::format("{}:{}: not valid YAML ({}); tatm writes metadata.yaml with yaml.dump", file, line, problem));
    }
  }
  ~YamlDocument() {
    yaml_document_delete(&document_);
    yaml_parser_delete(&parser_);
  }
  YamlDocument(const YamlDocument&) = delete;
  YamlDocument& operator=(const YamlDocument&) = delete;

  yaml_node_t* root() { return yaml_document_get_root_node(&document_); }

  /// The value of `key` in mapping `map`, or nullptr.
  yaml_node_t* find(yaml_node_t* map, const char* key) {
    for (yaml_node_pair_t* pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; ++pair) {
      yaml_node_t* k = yaml_document_get_node(&document_, pair->key);
      if (k != nullptr && k->type == YAML_SCALAR_NODE && scalar(k) == key) {
        return yaml_document_get_node(&document_, pair->value);
      }
    }
    return nullptr;
  }

  static std::string scalar(const yaml_node_t* node) {
    return std::string(reinterpret_cast<const char*>(node->data.scalar.value), node->data.scalar.length);
  }

 private:
  yaml_parser_t parser_{};
  yaml_document_t document_{};
};

// A scalar that YAML reads as null (yaml.dump writes None as "null"), or no node at all.
bool is_null(const yaml_node_t* node) {
  if (node == nullptr) return true;
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  const std::string s = YamlDocument::scalar(node);
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::string line_of(const std::string& file, const yaml_node_t* node) {
  return fmt::format("{}:{}", file, node->start_mark.line + 1);
}

}  // namespace

std::optional<TatmMetadata> find_tatm_metadata(const fs::path& dir) {
  fs::path path;
  for (const char* name : {"metadata.yaml", "metadata.yml"}) {
    std::error_code ec;
    if (fs::is_regular_file(dir / name, ec)) {
      path = dir / name;
      break;
    }
  }
  if (path.empty()) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TatmMetadata out;
  out.file = path.string();
  YamlDocument doc(text, out.file);
  yaml_node_t* root = doc.root();
  if (root == nullptr) return out;  // an empty file
  if (root->type != YAML_MAPPING_NODE) {
    throw sdk::ConfigError(
        fmt::format("{}: the top level is not a mapping (tatm's metadata has name, dataset_path, "
                    "tokenized_info, ...)",
                    line_of(out.file, root)));
  }
  yaml_node_t* info = doc.find(root, "tokenized_info");
  if (is_null(info)) return out;
  if (info->type != YAML_MAPPING_NODE) {
    throw sdk::ConfigError(fmt::format("{}: tokenized_info is not a mapping", line_of(out.file, info)));
  }
  if (yaml_node_t* dtype = doc.find(info, "dtype"); !is_null(dtype)) {
    if (dtype->type != YAML_SCALAR_NODE) {
      throw sdk::ConfigError(fmt::format("{}: tokenized_info.dtype is not a string", line_of(out.file, dtype)));
    }
    out.dtype = YamlDocument::scalar(dtype);
  }
  if (yaml_node_t* vocab = doc.find(info, "vocab_size"); !is_null(vocab)) {
    const std::string s = vocab->type == YAML_SCALAR_NODE ? YamlDocument::scalar(vocab) : "";
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v <= 0) {
      throw sdk::ConfigError(fmt::format("{}: tokenized_info.vocab_size = {}: expected a positive integer",
                                         line_of(out.file, vocab), s.empty() ? "(not a scalar)" : s));
    }
    out.vocab_size = v;
  }
  return out;
}

}  // namespace kforge::builtin::data
