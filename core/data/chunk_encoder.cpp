// encode_chunk: nlohmann::json parses each JSON Lines line; Tokenizer::encode (const, thread-safe) encodes.
#include "data/chunk_encoder.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "data/tokenizer.h"

namespace kforge::data {
namespace {

// The document text of one JSON Lines line, or the reason it has none.
std::optional<std::string> jsonl_text(std::string_view line, const std::string& field, std::string& reason) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    if (const size_t at = what.find("] "); what.rfind("[json.exception", 0) == 0 && at != std::string::npos) {
      what = what.substr(at + 2);
    }
    reason = fmt::format("not valid JSON ({})", what);
    return std::nullopt;
  }
  if (!value.is_object()) {
    reason = fmt::format("a JSON {}, not an object with a \"{}\" field", value.type_name(), field);
    return std::nullopt;
  }
  const auto it = value.find(field);
  if (it == value.end()) {
    std::vector<std::string> keys;
    for (const auto& [key, _] : value.items()) keys.push_back(fmt::format("\"{}\"", key));
    reason = fmt::format("no \"{}\" field (it has {}; choose the field with --text-field)", field,
                         keys.empty() ? std::string("none") : fmt::format("{}", fmt::join(keys, ", ")));
    return std::nullopt;
  }
  if (!it->is_string()) {
    reason = fmt::format("field \"{}\" is a {}, not a string", field, it->type_name());
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace

EncodedChunk encode_chunk(const TextChunk& chunk, InputFormat format, const ChunkEncoding& how) {
  EncodedChunk out;
  out.input = chunk.input;
  out.input_position = chunk.input_position;
  out.text_bytes = chunk.text_bytes;
  auto line_text = [&](const TextChunk::Line& l) { return std::string_view(chunk.text).substr(l.offset, l.size); };
  auto end_document = [&](size_t first_token) {
    ++out.documents;
    if (how.tokenizer == nullptr) return;
    out.tokens.push_back(how.eos_id);
    out.document_tokens.push_back(static_cast<int64_t>(out.tokens.size() - first_token));
  };
  size_t begin = 0;
  for (const size_t end : chunk.doc_ends) {
    const size_t first_token = out.tokens.size();
    if (format == InputFormat::text) {
      if (how.tokenizer != nullptr) {
        for (size_t i = begin; i < end; ++i) {
          const std::vector<int> ids = how.tokenizer->encode(line_text(chunk.lines[i]));
          out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
        }
      }
      end_document(first_token);
    } else {
      const TextChunk::Line& line = chunk.lines[begin];  // one line a document
      std::string reason;
      const std::optional<std::string> text = jsonl_text(line_text(line), how.text_field, reason);
      if (!text) {
        out.bad_lines.push_back({line.number, std::move(reason)});
      } else if (text->empty()) {
        ++out.empty_documents;
      } else {
        if (how.tokenizer != nullptr) {
          const std::vector<int> ids = how.tokenizer->encode(*text);
          out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
        }
        end_document(first_token);
      }
    }
    begin = end;
  }
  return out;
}

}  // namespace kforge::data
