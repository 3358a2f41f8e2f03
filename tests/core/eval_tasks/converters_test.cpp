// Golden tests of the benchmark converters: hand-written records in each benchmark's raw format, converted, against
// the prompts, choices and gold indices lm-eval-harness v0.4.x builds from them (written out from its task code:
// hellaswag/utils.py, arc_easy.yaml, mmlu/default/_default_template_yaml, piqa.yaml, preprocess_winogrande.py,
// lambada_openai.yaml, wikitext/preprocess_wikitext.py and wikitext_document_level's page split).
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <fstream>

#include "eval_tasks/benchmark_converters.h"
#include "eval_tasks/python_text.h"
#include "eval_tasks/requests.h"
#include "eval_tasks/task_spec.h"
#include "eval_tasks/task_writer.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::eval_tasks {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path raw_file(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories((dir / name).parent_path());
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

// The one task a single-task benchmark makes.
ConvertedTask converted(const std::string& benchmark, const std::vector<fs::path>& raw) {
  std::vector<ConvertedTask> tasks = convert_benchmark(benchmark, raw);
  EXPECT_EQ(tasks.size(), 1u);
  return tasks.at(0);
}

std::string config_error(const std::string& benchmark, const std::vector<fs::path>& raw) {
  return test::config_error_of([&] { convert_benchmark(benchmark, raw); });
}

TEST(PythonText, StripCapitalizeAndReplaceAsPythonDoes) {
  EXPECT_EQ(py_strip(" \t\u00a0x y\u3000\n"), "x y");
  EXPECT_EQ(py_strip("\u200bx"), "\u200bx");  // a zero-width space is not whitespace to Python
  EXPECT_EQ(py_capitalize("tomatoes NEED Eight"), "Tomatoes need eight");
  EXPECT_EQ(py_capitalize("\u00e9COLE"), "\u00c9cole");
  EXPECT_EQ(py_capitalize("\u01c6a"), "\u01c5a");  // the first letter in title case (dz digraph), not upper case
  EXPECT_EQ(py_replace("a   b", "  ", " "), "a  b");  // non-overlapping, left to right
  EXPECT_EQ(py_strip_inside("f ( a ) ( b", '(', ')'), "f (a) ( b");
}

TEST(HellaswagConverter, QueryAndEndingsAsLmEvalPreprocessesThem) {
  const fs::path dir = test::temp_dir("convert_hellaswag");
  const fs::path val = raw_file(dir, "hellaswag_val.jsonl", R"({"ind": 4, "activity_label": "Removing ice from car", )"
      R"("ctx_a": "Then, the man writes over the snow covering the window of a car, )"
      R"(and a woman wearing winter clothes smiles.", "ctx_b": "then", "endings": [", )"
      R"(the man adds wax to the windshield and cuts it.", ", a person board a ski lift, )"
      R"(while two men supporting the head of the person wearing winter clothes snow as the we girls sled.", ", )"
      R"(the man puts on a christmas coat, knitted with netting.", ", )"
      R"(the man continues removing the snow on his car."], "label": 3}
{"activity_label": "Home and Garden", "ctx_a": "[header] How to grow tomatoes [title] Pick a sunny spot.", )"
      R"("ctx_b": "tomatoes NEED Eight hours of sun. [step] Water them daily.", )"
      R"("endings": [" [substeps] Mulch  the soil [title] Keep it moist. ", "Plant them   in the shade.", )"
      R"("[title] Buy seeds", "Wait [unclosed\n] for rain"], "label": "0"}

{"activity_label": "\u00c9lan", "ctx_a": "", "ctx_b": "\u00c9COLE starts.", "endings": ["a", "b"], "label": 1}
)");
  const fs::path train = raw_file(dir, "hellaswag_train.jsonl",
                                  R"({"activity_label": "Cooking", "ctx_a": "A", "ctx_b": "b", "endings": ["x", "y"], )"
      R"("label": 1})");
  const ConvertedTask task = converted("hellaswag", {val, train});
  EXPECT_EQ(task.name, "hellaswag");
  EXPECT_EQ(task.output_type, "multiple_choice");
  EXPECT_EQ(task.eval_split, "validation");
  EXPECT_EQ(task.fewshot_split, "train");
  EXPECT_EQ(task.num_fewshot, 0);
  EXPECT_EQ(task.metrics, (std::vector<std::string>{"acc", "acc_norm"}));
  ASSERT_EQ(task.eval_docs.size(), 3u);
  EXPECT_EQ(task.eval_docs[0],
            (json{{"query",
                   "Removing ice from car: Then, the man writes over the snow covering the window of a car, and a "
                   "woman wearing winter clothes smiles. Then"},
                  {"choices",
                   {", the man adds wax to the windshield and cuts it.",
                    ", a person board a ski lift, while two men supporting the head of the person wearing winter "
                    "clothes snow as the we girls sled.",
                    ", the man puts on a christmas coat, knitted with netting.",
                    ", the man continues removing the snow on his car."}},
                  {"gold", 3}}));
  // " [title]" becomes ". ", brackets within a line go, then "  " becomes " " once (three spaces leave two); the
  // strip comes first, so an ending that began with a bracket keeps the space after it.
  EXPECT_EQ(task.eval_docs[1],
            (json{{"query",
                   "Home and Garden: How to grow tomatoes. Pick a sunny spot. Tomatoes need eight hours of sun. water "
                   "them daily."},
                  {"choices", {" Mulch the soil. Keep it moist.", "Plant them  in the shade.", " Buy seeds",
                               "Wait [unclosed\n] for rain"}},
                  {"gold", 0}}));
  EXPECT_EQ(task.eval_docs[2],
            (json{{"query", "\u00c9lan: \u00c9cole starts."}, {"choices", {"a", "b"}}, {"gold", 1}}));
  ASSERT_EQ(task.fewshot_docs.size(), 1u);
  EXPECT_EQ(task.fewshot_docs[0], (json{{"query", "Cooking: A B"}, {"choices", {"x", "y"}}, {"gold", 1}}));
}

TEST(HellaswagConverter, ARecordWithoutALabelNamesItsFileAndLine) {
  const fs::path dir = test::temp_dir("convert_hellaswag_test_split");
  const fs::path test_split = raw_file(dir, "hellaswag_test.jsonl", R"({"activity_label": "A", "ctx_a": "b", )"
      R"("ctx_b": "c", "endings": ["d"], "label": 0}
{"activity_label": "A", "ctx_a": "b", "ctx_b": "c", "endings": ["d"]}
)");
  test::expect_has(config_error("hellaswag", {test_split}), {test_split.string() + ":2", "\"label\""});
  const fs::path bad_label = raw_file(dir, "bad_label.jsonl", R"({"activity_label": "A", "ctx_a": "b", "ctx_b": "c", )"
      R"("endings": ["d"], "label": 4})");
  test::expect_has(config_error("hellaswag", {bad_label}), {bad_label.string() + ":1", "\"label\" = 4", "1 options"});
}

TEST(ArcConverter, QuestionAnswerPromptAndTheAnswerKeysIndex) {
  const fs::path dir = test::temp_dir("convert_arc");
  const fs::path test_split = raw_file(dir, "ARC-Challenge-Test.jsonl", R"({"id": "Mercury_7175875", )"
      R"("question": {"stem": "An astronomer observes that a planet rotates faster after a meteorite impact. )"
      R"(Which is the most likely effect of this increase in rotation?", )"
      R"("choices": [{"text": "Planetary density will decrease.", "label": "A"}, )"
      R"({"text": "Planetary years will become longer.", "label": "B"}, )"
      R"({"text": "Planetary days will become shorter.", "label": "C"}, )"
      R"({"text": "Planetary gravity will become stronger.", "label": "D"}]}, "answerKey": "C"}
{"id": "NYSEDREGENTS_2015_4_8", "question": {"stem": "Which is a mammal? ", "choices": [{"text": "shark", )"
      R"("label": "1"}, {"text": "whale", "label": "2"}, {"text": "trout", "label": "3"}]}, "answerKey": "2"}
)");
  const ConvertedTask task = converted("arc_challenge", {test_split});
  EXPECT_EQ(task.name, "arc_challenge");
  EXPECT_EQ(task.eval_split, "test");
  EXPECT_EQ(task.fewshot_split, "");
  EXPECT_EQ(task.metrics, (std::vector<std::string>{"acc", "acc_norm"}));
  ASSERT_EQ(task.eval_docs.size(), 2u);
  EXPECT_EQ(task.eval_docs[0],
            (json{{"query",
                   "Question: An astronomer observes that a planet rotates faster after a meteorite impact. Which is "
                   "the most likely effect of this increase in rotation?\nAnswer:"},
                  {"choices",
                   {"Planetary density will decrease.", "Planetary years will become longer.",
                    "Planetary days will become shorter.", "Planetary gravity will become stronger."}},
                  {"gold", 2}}));
  // Numeric labels are looked up like letters; the stem is not stripped ({{question}} renders it as it is).
  EXPECT_EQ(task.eval_docs[1], (json{{"query", "Question: Which is a mammal? \nAnswer:"},
                                     {"choices", {"shark", "whale", "trout"}},
                                     {"gold", 1}}));
  EXPECT_EQ(converted("arc_easy", {test_split}).name, "arc_easy");
  const fs::path bad = raw_file(dir, "bad.jsonl", R"({"question": {"stem": "Q", "choices": [{"text": "a", )"
      R"("label": "A"}]}, "answerKey": "E"})");
  test::expect_has(config_error("arc_easy", {bad}), {bad.string() + ":1", "answerKey \"E\""});
}

TEST(MmluConverter, OneFiveShotTaskPerSubjectWithLmEvalsPrompt) {
  const fs::path dir = test::temp_dir("convert_mmlu") / "data";
  raw_file(dir, "test/high_school_physics_test.csv",
           "\"  What is the SI unit of force?\n\",Newton,Joule,Watt,Pascal,A\n"
           "\"Which is \"\"heavier\"\", 1 kg of iron or 1 kg of feathers?\", Iron,Feathers,\"Both, equally\","
           "Neither,C\r\n");
  std::string dev;
  for (int i = 0; i < 5; ++i) dev += "Dev question " + std::to_string(i) + "?,a,b,c,d,D\n";
  raw_file(dir, "dev/high_school_physics_dev.csv", dev);
  raw_file(dir, "test/abstract_algebra_test.csv", "Find 1+1 in Z_2.,0,1,2,3,A");
  raw_file(dir, "dev/abstract_algebra_dev.csv", dev);
  const std::vector<ConvertedTask> tasks = convert_benchmark("mmlu", {dir});
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].name, "mmlu_abstract_algebra");
  EXPECT_EQ(tasks[0].description,
            "The following are multiple choice questions (with answers) about abstract algebra.\n\n");
  const ConvertedTask& physics = tasks[1];
  EXPECT_EQ(physics.name, "mmlu_high_school_physics");
  EXPECT_EQ(physics.group, "mmlu");
  EXPECT_EQ(physics.description,
            "The following are multiple choice questions (with answers) about high school physics.\n\n");
  EXPECT_EQ(physics.num_fewshot, 5);
  EXPECT_EQ(physics.eval_split, "test");
  EXPECT_EQ(physics.fewshot_split, "dev");
  EXPECT_EQ(physics.metrics, std::vector<std::string>{"acc"});
  const json letters = {"A", "B", "C", "D"};
  ASSERT_EQ(physics.eval_docs.size(), 2u);
  // question.strip(); the choices as they are (" Iron" keeps its space); quoted commas and doubled quotes read as
  // Python's csv module reads them.
  EXPECT_EQ(physics.eval_docs[0],
            (json{{"query", "What is the SI unit of force?\nA. Newton\nB. Joule\nC. Watt\nD. Pascal\nAnswer:"},
                  {"choices", letters},
                  {"gold", 0}}));
  EXPECT_EQ(physics.eval_docs[1],
            (json{{"query",
                   "Which is \"heavier\", 1 kg of iron or 1 kg of feathers?\nA.  Iron\nB. Feathers\nC. Both, "
                   "equally\nD. Neither\nAnswer:"},
                  {"choices", letters},
                  {"gold", 2}}));
  ASSERT_EQ(physics.fewshot_docs.size(), 5u);
  EXPECT_EQ(physics.fewshot_docs[4],
            (json{{"query", "Dev question 4?\nA. a\nB. b\nC. c\nD. d\nAnswer:"}, {"choices", letters}, {"gold", 3}}));
}

// lm-eval's MMLU takes its examples with the first_n sampler: the first five dev questions in file order, whatever the
// seed, not random.Random(seed).sample's draw of them.
TEST(MmluConverter, FewShotExamplesAreTheFirstFiveDevQuestionsInFileOrder) {
  const fs::path dir = test::temp_dir("convert_mmlu_first_n") / "data";
  std::string dev;
  for (int i = 0; i < 7; ++i) dev += "Dev question " + std::to_string(i) + "?,a,b,c,d,B\n";
  raw_file(dir, "dev/virology_dev.csv", dev);
  raw_file(dir, "test/virology_test.csv", "Test question?,a,b,c,d,A\n");
  const ConvertedTask task = converted("mmlu", {dir});
  EXPECT_TRUE(task.first_n_fewshot);
  const fs::path task_dir = test::temp_dir("convert_mmlu_first_n_tasks");
  write_task(task_dir, task);
  const TaskSpec spec = load_task(task_dir, "mmlu_virology");
  std::string expected = task.description;
  for (int i = 0; i < 5; ++i) {
    expected += "Dev question " + std::to_string(i) + "?\nA. a\nB. b\nC. c\nD. d\nAnswer: B\n\n";
  }
  expected += "Test question?\nA. a\nB. b\nC. c\nD. d\nAnswer:";
  for (uint64_t seed : {1234u, 7u}) {
    const std::vector<Request> requests = build_requests(spec, spec.num_fewshot, 0, seed);
    ASSERT_EQ(requests.size(), 4u);
    EXPECT_EQ(requests[0].context, expected) << "seed " << seed;
    EXPECT_EQ(requests[1].continuation, " B");
  }
}

TEST(MmluConverter, MissingDevFilesAndMalformedRowsAreNamed) {
  const fs::path dir = test::temp_dir("convert_mmlu_errors") / "data";
  test::expect_has(config_error("mmlu", {dir}), {dir.string(), "no test/<subject>_test.csv", "dev/ and test/"});
  raw_file(dir, "test/anatomy_test.csv", "Q,a,b,c,d,A\n");
  test::expect_has(config_error("mmlu", {dir}), {"MMLU subject anatomy", "anatomy_dev.csv"});
  raw_file(dir, "dev/anatomy_dev.csv", "Q,a,b,c,d,A\nQ2,a,b,c,E\n");
  test::expect_has(config_error("mmlu", {dir}), {"anatomy_dev.csv:2", "5 fields"});
  raw_file(dir, "dev/anatomy_dev.csv", "Q,a,b,c,d,E\n");
  test::expect_has(config_error("mmlu", {dir}), {"anatomy_dev.csv:1", "\"E\" is not A, B, C or D"});
  raw_file(dir, "dev/anatomy_dev.csv", "\"Q,a,b,c,d,A\n");
  test::expect_has(config_error("mmlu", {dir}), {"anatomy_dev.csv:1", "quoted field is not closed"});
}

TEST(PiqaConverter, GoalAsQuestionAndTheLabelsFilesAnswers) {
  const fs::path dir = test::temp_dir("convert_piqa");
  const fs::path valid = raw_file(dir, "valid.jsonl", R"({"id": "a", "goal": "When boiling butter, when it's ready, )"
      R"(you can", "sol1": "Pour it onto a plate", "sol2": "Pour it into a jar"}
{"id": "b", "goal": "how do you open a jar?", "sol1": "twist the lid.", "sol2": "hit the lid."}
)");
  const fs::path labels = raw_file(dir, "valid-labels.lst", "1\n0\n");
  const ConvertedTask task = converted("piqa", {valid, labels});
  EXPECT_EQ(task.name, "piqa");
  EXPECT_EQ(task.eval_split, "validation");
  ASSERT_EQ(task.eval_docs.size(), 2u);
  EXPECT_EQ(task.eval_docs[0], (json{{"query", "Question: When boiling butter, when it's ready, you can\nAnswer:"},
                                     {"choices", {"Pour it onto a plate", "Pour it into a jar"}},
                                     {"gold", 1}}));
  EXPECT_EQ(task.eval_docs[1], (json{{"query", "Question: how do you open a jar?\nAnswer:"},
                                     {"choices", {"twist the lid.", "hit the lid."}},
                                     {"gold", 0}}));
  const fs::path short_labels = raw_file(dir, "short-labels.lst", "1\n");
  test::expect_has(config_error("piqa", {valid, short_labels}), {"holds 1 labels", "holds 2 records"});
  test::expect_has(config_error("piqa", {valid, labels, valid}), {"--from piqa takes valid.jsonl valid-labels.lst",
                                                                    "got 3 paths"});
}

TEST(WinograndeConverter, PartialContextsAndTheSharedContinuation) {
  const fs::path dir = test::temp_dir("convert_winogrande");
  const fs::path dev = raw_file(dir, "dev.jsonl", R"({"qID": "1", )"
      R"("sentence": "Sarah was a much better surgeon than Maria so _ always got the harder cases.", )"
      R"("option1": "Sarah", "option2": "Maria", "answer": "1"}
{"qID": "2", "sentence": "The trophy doesn't fit into the brown suitcase because the _   is too large. ", )"
      R"("option1": "trophy", "option2": "suitcase", "answer": "2"}
)");
  const ConvertedTask task = converted("winogrande", {dev});
  EXPECT_EQ(task.name, "winogrande");
  EXPECT_EQ(task.metrics, std::vector<std::string>{"acc"});
  ASSERT_EQ(task.eval_docs.size(), 2u);
  EXPECT_EQ(task.eval_docs[0],
            (json{{"queries",
                   {"Sarah was a much better surgeon than Maria so Sarah",
                    "Sarah was a much better surgeon than Maria so Maria"}},
                  {"continuation", "always got the harder cases."},
                  {"gold", 0}}));
  // The context keeps the text up to the blank as it is; the continuation is stripped.
  EXPECT_EQ(task.eval_docs[1],
            (json{{"queries",
                   {"The trophy doesn't fit into the brown suitcase because the trophy",
                    "The trophy doesn't fit into the brown suitcase because the suitcase"}},
                  {"continuation", "is too large."},
                  {"gold", 1}}));
  const fs::path bad = raw_file(dir, "bad.jsonl", R"({"sentence": "No blank here.", "option1": "a", "option2": "b", )"
      R"("answer": "1"})");
  test::expect_has(config_error("winogrande", {bad}), {bad.string() + ":1", "no \"_\""});
}

TEST(LambadaConverter, TheLastSpaceSeparatedWordIsTheContinuation) {
  const fs::path dir = test::temp_dir("convert_lambada");
  const fs::path test_split = raw_file(dir, "lambada_test.jsonl",
                                       R"({"text": "He reached for the switch and flicked it on. The room was empty"}
{"text": "she said\ngoodbye"}
{"text": "alone"}
)");
  const ConvertedTask task = converted("lambada_openai", {test_split});
  EXPECT_EQ(task.name, "lambada_openai");
  EXPECT_EQ(task.output_type, "loglikelihood");
  EXPECT_EQ(task.metrics, (std::vector<std::string>{"perplexity", "acc"}));
  ASSERT_EQ(task.eval_docs.size(), 3u);
  // lm-eval's target is " " + the word; here the task's target_delimiter " " supplies the space.
  EXPECT_EQ(task.eval_docs[0],
            (json{{"query", "He reached for the switch and flicked it on. The room was"}, {"continuation", "empty"}}));
  EXPECT_EQ(task.eval_docs[1], (json{{"query", "she"}, {"continuation", "said\ngoodbye"}}));  // split(' ') only
  EXPECT_EQ(task.eval_docs[2], (json{{"query", ""}, {"continuation", "alone"}}));
}

TEST(WikitextConverter, PagesSplitAtTitlesAndDetokenizedAsLmEvalDoes) {
  const fs::path dir = test::temp_dir("convert_wikitext");
  const std::string first_page =
      " = Robert Boulter = \n \n Robert Boulter is an English film , television and theatre actor . He had a guest "
      "@-@ starring role in 2000 . \n \n = = Career = = \n \n In 2006 , Boulter starred in the play Citizenship ( "
      "written by Mark Ravenhill ) . He weighed 1 @,@ 500 @.@ 5 kg , \" the best \" year ! \n ";
  const std::string second_page =
      " = Du Fu = \n \n Du Fu ( Wade \u2013 Giles : Tu Fu ; 712 \u2013 770 ) was a poet [ 1 ] . It was 20 \u00b0 C ; "
      "the N players ' team 's win /' 7/ . \n";
  const fs::path raw = raw_file(dir, "wiki.test.raw", " \n" + first_page + "\n" + second_page);
  const ConvertedTask task = converted("wikitext", {raw});
  EXPECT_EQ(task.name, "wikitext");
  EXPECT_EQ(task.version, 2);
  EXPECT_EQ(task.output_type, "loglikelihood_rolling");
  EXPECT_EQ(task.metrics, (std::vector<std::string>{"word_perplexity", "byte_perplexity", "bits_per_byte"}));
  ASSERT_EQ(task.eval_docs.size(), 2u);  // the blank line before the first title is no page
  EXPECT_EQ(task.eval_docs[0],
            (json{{"text",
                   " = Robert Boulter =\n\nRobert Boulter is an English film, television and theatre actor. He had a "
                   "guest-starring role in 2000.\n\n== Career ==\n\nIn 2006, Boulter starred in the play Citizenship "
                   "(written by Mark Ravenhill). He weighed 1,500.5 kg, \"the best\" year!\n"},
                  {"page", first_page}}));
  // lm-eval's "/' [0-9]/" rule writes the text "/'[0-9]/"; quotes pair up left to right.
  EXPECT_EQ(task.eval_docs[1],
            (json{{"text",
                   " = Du Fu =\n\nDu Fu (Wade \u2013 Giles: Tu Fu; 712 \u2013 770) was a poet [1]. It was 20\u00b0C; "
                   "the 1 players'team's win /'[0-9]/.\n"},
                  {"page", second_page}}));
  const fs::path jsonl = raw_file(dir, "test.jsonl", json{{"page", second_page}}.dump() + "\n");
  EXPECT_EQ(converted("wikitext", {jsonl}).eval_docs, std::vector<json>{task.eval_docs[1]});
}

TEST(TaskWriter, TaskTomlStringsReadBackExactly) {
  ConvertedTask task;
  task.name = "mmlu_x";
  task.version = 1;
  task.output_type = "multiple_choice";
  task.eval_split = "test";
  task.eval_docs = {json{{"query", "q"}, {"choices", {"A"}}, {"gold", 0}}};
  task.description = "About \"x\" \\ y.\n\n\ttab\x01";
  task.metrics = {"acc"};
  task.group = "mmlu";
  const fs::path dir = write_task(test::temp_dir("task_writer"), task);
  const toml::table toml = toml::parse_file((dir / "task.toml").string());
  EXPECT_EQ(toml["description"].value<std::string>(), task.description);
  EXPECT_EQ(toml["fewshot_delimiter"].value<std::string>(), "\n\n");
  EXPECT_EQ(toml["target_delimiter"].value<std::string>(), " ");
  EXPECT_EQ(toml["group"].value<std::string>(), "mmlu");
  EXPECT_FALSE(toml.contains("fewshot_docs"));
  EXPECT_EQ(toml.size(), 10u);  // name, version, output_type, eval_docs, num_fewshot, description, 2 delimiters,
                                // metrics, group
}

TEST(BenchmarkConverters, AnUnknownBenchmarkListsTheKnownOnes) {
  test::expect_has(config_error("hellaswagg", {"x.jsonl"}),
                   {"--from hellaswagg", "hellaswag, arc_easy, arc_challenge, mmlu, piqa, winogrande, lambada_openai, "
                                         "wikitext"});
  test::expect_has(config_error("hellaswag", {"/no/such/file.jsonl"}), {"cannot read /no/such/file.jsonl"});
}

}  // namespace
}  // namespace kforge::eval_tasks
