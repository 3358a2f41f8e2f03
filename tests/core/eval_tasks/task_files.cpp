// The authored tasks: lowercase words the tests' tiny SentencePiece tokenizer knows, some accented characters
// (acc_norm counts characters, bits_per_byte bytes).
#include "core/eval_tasks/task_files.h"

#include <fstream>

namespace kforge::test::eval_tasks {
namespace {

void write(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

}  // namespace

std::string write_tasks(const std::filesystem::path& dir) {
  write(dir / "choice" / "task.toml",
        "name = \"choice\"\nversion = 2\noutput_type = \"multiple_choice\"\neval_docs = \"test.jsonl\"\n"
        "num_fewshot = 1\ndescription = \"pick the word.\\n\\n\"\ngroup = \"grp\"\n");
  write(dir / "choice" / "test.jsonl",
        "{\"query\": \"the cat sat on the\", \"choices\": [\"mat\", \"moon river\", \"caf\\u00e9\"], \"gold\": 0}\n"
        "{\"query\": \"one two three\", \"choices\": [\"four\", \"five six\"], \"gold\": 0}\n"
        "{\"query\": \"a b c\", \"choices\": [\"d\", \"e f g h\", \"x\"], \"gold\": 1}\n"
        "{\"query\": \"red green\", \"choices\": [\"blue\", \"yellow\"], \"gold\": 1}\n");
  write(dir / "partial" / "task.toml",
        "name = \"partial\"\nversion = 1\noutput_type = \"multiple_choice\"\neval_docs = \"dev.jsonl\"\n"
        "fewshot_docs = \"train.jsonl\"\nnum_fewshot = 2\nmetrics = [\"acc\"]\ngroup = \"grp\"\n");
  write(dir / "partial" / "dev.jsonl",
        "{\"queries\": [\"the dog chased the cat because the dog\", \"the dog chased the cat because the cat\"], "
        "\"continuation\": \"was fast\", \"gold\": 0}\n"
        "{\"queries\": [\"sun rose so it\", \"moon rose so it\"], \"continuation\": \"was day\", \"gold\": 1}\n"
        "{\"queries\": [\"a ran\", \"b ran\"], \"continuation\": \"home\", \"gold\": 0}\n");
  write(dir / "partial" / "train.jsonl",
        "{\"queries\": [\"x is\", \"y is\"], \"continuation\": \"big\", \"gold\": 1}\n"
        "{\"queries\": [\"tea is\", \"milk is\"], \"continuation\": \"hot\", \"gold\": 0}\n"
        "{\"queries\": [\"cold is\", \"warm is\"], \"continuation\": \"nice\", \"gold\": 1}\n");
  write(dir / "last_word" / "task.toml",
        "name = \"last_word\"\nversion = 0\noutput_type = \"loglikelihood\"\neval_docs = \"test.jsonl\"\n");
  write(dir / "last_word" / "test.jsonl",
        "{\"query\": \"the quick brown fox jumps over the lazy\", \"continuation\": \"dog\"}\n"
        "{\"query\": \"one two three four\", \"continuation\": \"five\"}\n"
        "{\"query\": \"she sells sea shells by the sea\", \"continuation\": \"shore\"}\n");
  write(dir / "rolling" / "task.toml",
        "name = \"rolling\"\nversion = 1\noutput_type = \"loglikelihood_rolling\"\neval_docs = \"test.jsonl\"\n");
  write(dir / "rolling" / "test.jsonl",
        "{\"text\": \"the history of the city begins with a small village by the river where people fished and "
        "traded and built houses of wood and stone over many long years of work\"}\n"
        "{\"text\": \" short text, with spaces\", \"page\": \" short  text ,\\twith   spaces \"}\n"
        "{\"text\": \"na\\u00efve caf\\u00e9 r\\u00e9sum\\u00e9\"}\n");
  write(dir / "answer" / "task.toml",
        "name = \"answer\"\nversion = 3\noutput_type = \"generate_until\"\neval_docs = \"test.jsonl\"\n"
        "until = [\"\\n\", \" q\"]\nmax_gen_toks = 6\ntarget_delimiter = \" \"\n");
  write(dir / "answer" / "test.jsonl",
        "{\"query\": \"question: what comes after one? answer:\", \"answer\": \"two\"}\n"
        "{\"query\": \"the the the the\", \"answer\": \"the\"}\n"
        "{\"query\": \"a b c\", \"answer\": \" d \"}\n");
  return "choice,partial,last_word,rolling,answer";
}

}  // namespace kforge::test::eval_tasks
