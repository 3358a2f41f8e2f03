// kforge report: a self-contained report.html with plots of a run directory (report/report_page.h).
#include <cerrno>
#include <cstring>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/version.h"
#include "report/report_page.h"
#include "report/run_record.h"

namespace kforge::cli {
namespace {

constexpr const char* kReportCommand = "kforge report";

// Writes `text` to `path` through a temporary file renamed into place, so a reader never sees half a page.
void write_report_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      throw sdk::Error("cannot write " + tmp.string() + ": " + std::strerror(errno) +
                       " (pass --out FILE in a writable directory)");
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

cxxopts::Options report_options() {
  cxxopts::Options options(kReportCommand,
                           "Write one self-contained HTML page (inline SVG, no network) with plots of a run\n"
                           "directory (checkpoint.dir, or metrics.run_dir): loss and eval loss, learning rate,\n"
                           "grad norm, tokens/s, MFU, memory, per-source loss (loss/<name>) and any other metric\n"
                           "in metrics.jsonl, with checkpoints, resumes, process ends and crashes (runs.jsonl)\n"
                           "and NaN skips marked on the step axis; the resolved config and plugin set of the\n"
                           "newest checkpoint; the environment (CPU, BLAS, threads, versions) runs.jsonl records.\n"
                           "Exit codes: 0 written, 1 could not write, 2 bad arguments or not a run directory.");
  options.positional_help("RUN_DIR");
  options.add_options()("run-dir", "the run directory", cxxopts::value<std::string>())(
      "out", "the page to write (default RUN_DIR/report.html)", cxxopts::value<std::string>())(
      "log-y", "open the loss charts in log scale (the page has a switch)")("h,help", "this help");
  options.parse_positional({"run-dir"});
  return options;
}

int cmd_report(int argc, char** argv) {
  cxxopts::Options options = report_options();
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  if (!args.count("run-dir")) return usage_error(options, "missing RUN_DIR");
  const std::filesystem::path run_dir = args["run-dir"].as<std::string>();
  const std::filesystem::path out =
      args.count("out") ? std::filesystem::path(args["out"].as<std::string>()) : run_dir / "report.html";
  report::RunRecord run;
  try {
    run = report::read_run_record(run_dir);
  } catch (const std::exception& e) {
    std::cerr << kReportCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  try {
    write_report_file(
        out, report::render_report(run, {args.count("log-y") > 0, std::string("kforge ") + KFORGE_SDK_VERSION}));
  } catch (const std::exception& e) {
    std::cerr << kReportCommand << ": " << e.what() << "\n";
    return kExitFailure;
  }
  std::cout << kReportCommand << ": wrote " << out.string() << " (" << run.lines.size() << " metric lines, "
            << run.checkpoints.size() << " checkpoints, " << run.processes.size() << " processes)\n";
  return kExitOk;
}

}  // namespace kforge::cli
