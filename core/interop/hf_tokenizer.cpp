// The tokenizer of an exported model: a byte copy of the SentencePiece model and its HF config.
#include "interop/hf_tokenizer.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checkpoint/durable_file.h"
#include "data/tokenizer.h"
#include "kforge/sdk/error.h"

namespace kforge::interop {

SpecialTokens export_tokenizer(const std::filesystem::path& spm_model, const std::filesystem::path& out,
                               int64_t vocab_size, int64_t max_seq_len) {
  const data::Tokenizer tokenizer(spm_model);
  if (tokenizer.kind() != "sentencepiece") {
    throw sdk::Error(
        fmt::format("{} is a {} tokenizer: kforge convert --to hf exports SentencePiece models only (copy "
                    "the tokenizer files into the output directory by hand)",
                    spm_model.string(), tokenizer.kind()));
  }
  if (tokenizer.vocab_size() > vocab_size) {
    throw sdk::Error(fmt::format("{}: the tokenizer has {} pieces but [model] vocab_size is {}", spm_model.string(),
                                 tokenizer.vocab_size(), vocab_size));
  }
  std::ifstream in(spm_model, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (!in) throw sdk::Error(fmt::format("{}: cannot be read", spm_model.string()));
  checkpoint::write_durable(out / "tokenizer.model", bytes.str());
  SpecialTokens ids;
  if (tokenizer.bos_id() >= 0) ids.bos_id = tokenizer.bos_id();
  if (tokenizer.eos_id() >= 0) ids.eos_id = tokenizer.eos_id();
  // LlamaTokenizer reads the pieces from tokenizer.model; the strings name SentencePiece's defaults.
  nlohmann::json config = {{"tokenizer_class", "LlamaTokenizer"},         {"model_max_length", max_seq_len},
                           {"add_bos_token", ids.bos_id.has_value()},     {"add_eos_token", false},
                           {"clean_up_tokenization_spaces", false},       {"legacy", true},
                           {"sp_model_kwargs", nlohmann::json::object()}, {"unk_token", "<unk>"}};
  if (ids.bos_id) config["bos_token"] = "<s>";
  if (ids.eos_id) config["eos_token"] = "</s>";
  checkpoint::write_durable(out / "tokenizer_config.json", config.dump(2) + "\n");
  return ids;
}

}  // namespace kforge::interop
