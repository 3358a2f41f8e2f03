// WikiText-2 (raw) to the task "wikitext": each Wikipedia page's perplexity (loglikelihood_rolling), the page split
// and detokenized as lm-eval-harness v0.4.x's tasks/wikitext does.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// The pages of a wiki.*.raw file as EleutherAI/wikitext_document_level splits it: a new page starts at each line
/// that, with "= = =" read as "===" and "= =" as "==" and stripped, starts with "= " and ends with " =" (a top-level
/// " = Title = " header; "== Section ==" lines stay in their page); pages of only whitespace are dropped, the last
/// page is kept.
std::vector<std::string> wikitext_pages(std::string_view text);

/// lm-eval's wikitext_detokenizer(), step by step: " @-@ " to "-", " , " to ", ", spaces inside brackets and quotes
/// removed, " N " to " 1 ", ...
std::string wikitext_detokenize(std::string_view page);

/// raw = {wiki.test.raw} (wikitext-2-raw-v1), or a JSON Lines file of {"page"} records (the Hugging Face
/// EleutherAI/wikitext_document_level test split). Each document: text = the detokenized page, page = the page as
/// read (lm-eval counts the words and bytes of word_perplexity and byte_perplexity on it). Throws sdk::ConfigError
/// naming a file it cannot read.
ConvertedTask convert_wikitext(const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
