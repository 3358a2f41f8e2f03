// WikiText's documents, mirroring lm-eval-harness v0.4.x: the page split of EleutherAI/wikitext_document_level's
// loader (_generate_examples) and tasks/wikitext/preprocess_wikitext.py's wikitext_detokenizer.
#include "eval_tasks/convert_wikitext.h"

#include "eval_tasks/python_text.h"
#include "eval_tasks/raw_records.h"

namespace kforge::eval_tasks {
namespace {

// re.sub(r"/' [0-9]/", r"/'[0-9]/", s): lm-eval's replacement is the literal text "/'[0-9]/".
std::string wikitext_digit_quotes(std::string_view text) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = text.find("/' ", pos)) != std::string_view::npos;) {
    if (hit + 4 < text.size() && text[hit + 3] >= '0' && text[hit + 3] <= '9' && text[hit + 4] == '/') {
      out.append(text.substr(pos, hit - pos));
      out.append("/'[0-9]/");
      pos = hit + 5;
    } else {
      out.append(text.substr(pos, hit + 1 - pos));
      pos = hit + 1;
    }
  }
  out.append(text.substr(pos));
  return out;
}

// Python's open() reads \r\n and \r as \n.
std::string wikitext_universal_newlines(std::string_view text) {
  return py_replace(py_replace(text, "\r\n", "\n"), "\r", "\n");
}

bool wikitext_page_header(std::string_view line) {
  const std::string read = py_strip(py_replace(py_replace(line, "= = =", "==="), "= =", "=="));
  return read.rfind("= ", 0) == 0 && read.size() >= 2 && read.compare(read.size() - 2, 2, " =") == 0;
}

}  // namespace

std::vector<std::string> wikitext_pages(std::string_view text) {
  const std::string all = wikitext_universal_newlines(text);
  std::vector<std::string> pages;
  std::string page;
  bool first_line = true;
  size_t pos = 0;
  while (true) {
    const size_t end = all.find('\n', pos);
    const std::string_view line = std::string_view(all).substr(pos, end == std::string::npos ? end : end - pos);
    if (wikitext_page_header(line)) {
      if (!first_line && !py_strip(page).empty()) pages.push_back(page);
      page.clear();
      first_line = true;
    }
    if (!first_line) page += '\n';
    page.append(line);
    first_line = false;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  pages.push_back(page);
  return pages;
}

std::string wikitext_detokenize(std::string_view page) {
  std::string s = py_replace(page, "s '", "s'");  // contractions
  s = wikitext_digit_quotes(s);
  for (const auto& [from, to] : std::initializer_list<std::pair<const char*, const char*>>{
           {" @-@ ", "-"}, {" @,@ ", ","}, {" @.@ ", "."},  // number separators
           {" : ", ": "}, {" ; ", "; "}, {" . ", ". "}, {" ! ", "! "}, {" ? ", "? "}, {" , ", ", "}}) {  // punctuation
    s = py_replace(s, from, to);
  }
  s = py_strip_inside(s, '(', ')');  // double brackets
  s = py_strip_inside(s, '[', ']');
  s = py_strip_inside(s, '{', '}');
  s = py_strip_inside(s, '"', '"');
  s = py_strip_inside(s, '\'', '\'');
  for (const auto& [from, to] : std::initializer_list<std::pair<const char*, const char*>>{
           {"= = = =", "===="}, {"= = =", "==="}, {"= =", "=="},  // miscellaneous
           {" \u00b0 ", "\u00b0"}, {" \n", "\n"}, {"\n ", "\n"}, {" N ", " 1 "}, {" 's", "'s"}}) {
    s = py_replace(s, from, to);
  }
  return s;
}

ConvertedTask convert_wikitext(const std::vector<std::filesystem::path>& raw) {
  const std::filesystem::path& file = raw.at(0);
  const auto to_doc = [](const std::string& page) {
    return nlohmann::json{{"text", wikitext_detokenize(page)}, {"page", page}};
  };
  std::vector<nlohmann::json> docs;
  if (file.extension() == ".jsonl") {
    docs = raw_jsonl_docs(file, [&](const RawRecord& r) { return to_doc(raw_string(r, r.value, "page")); });
  } else {
    for (const std::string& page : wikitext_pages(read_raw_text(file))) docs.push_back(to_doc(page));
  }
  return {.name = "wikitext",
          .version = 2,
          .output_type = "loglikelihood_rolling",
          .eval_split = "test",
          .eval_docs = std::move(docs),
          .metrics = {"word_perplexity", "byte_perplexity", "bits_per_byte"}};
}

}  // namespace kforge::eval_tasks
