// kforge launch: spawns and supervises the local workers of a multi-process job, like torchrun:
// rendezvous variables per worker, signals forwarded, one failure stops the rest, every rank's exit
// status reported; workers die with the launcher and hold no other worker's descriptors. It runs in
// kforge-host and forks its workers without exec, so a node loads LibTorch (0.65 s of CPU) once, not once per rank.
#include "launch/launch.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxopts.hpp>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cmdline/parse_options.h"
#include "cmdline/process_exit_codes.h"
#include "launch/free_port.h"
#include "resilience/proc_stat.h"
#include "resilience/shutdown.h"

extern char** environ;

namespace kforge::launch {

using cmdline::kExitFailure;
using cmdline::kExitOk;
using cmdline::kExitUsage;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kTailLines = 20;
volatile std::sig_atomic_t g_pending_signal = 0;

void remember_signal(int sig) { g_pending_signal = sig; }

struct Worker {
  int rank = 0, local_rank = 0;
  pid_t pid = -1;
  int fd = -1;  ///< read end of the worker's stdout+stderr
  std::filesystem::path log_path;
  int log_fd = -1;
  std::string partial;  ///< an unfinished last line
  std::deque<std::string> tail;
  bool exited = false;
  int status = 0;  ///< from waitpid, once exited
  int code = 0;
};

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// "exited with code 1", "killed by SIGKILL (code 137)".
std::string describe_exit(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  const char* name = sigabbrev_np(WTERMSIG(status));
  return fmt::format("killed by {}{} (code {}){}", name != nullptr ? "SIG" : "signal ",
                     name != nullptr ? name : std::to_string(WTERMSIG(status)), exit_code(status),
                     WCOREDUMP(status) ? ", core dumped" : "");
}

// Writes `data` to `fd` (a log file), stopping at an error: the log is a copy, the supervision goes on.
void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

struct Layout {
  int nproc = 1, nnodes = 1, node_rank = 0, port = 0;
  std::string addr;
};

// The worker's environment: this process's, with the rendezvous variables set.
std::vector<std::string> worker_environment(const Worker& w, const Layout& layout) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"RANK", std::to_string(w.rank)},
      {"WORLD_SIZE", std::to_string(layout.nproc * layout.nnodes)},
      {"LOCAL_RANK", std::to_string(w.local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(layout.nproc)},
      {"GROUP_RANK", std::to_string(layout.node_rank)},
      {"MASTER_PORT", std::to_string(layout.port)},
      {"MASTER_ADDR", layout.addr},
      {"KFORGE_LAUNCHER_PID", std::to_string(::getpid())}};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(vars.begin(), vars.end(), [&](const auto& var) { return var.first == name; })) {
      env.push_back(entry);
    }
  }
  for (const auto& [name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> null_terminated(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// fork() copies only the calling thread: a worker forked while another thread held a lock would wait on it forever.
void require_one_thread() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0 && std::stoi(line.substr(8)) != 1) {
      throw std::logic_error("kforge launch forks its workers, but this process already runs " + line.substr(8) +
                             " threads: a launcher must start its workers before anything starts a thread");
    }
  }
}

// What exec would have closed: every descriptor marked close-on-exec (another worker's pipe, the log files).
void close_close_on_exec_descriptors() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  std::vector<int> marked;
  for (const dirent* entry; (entry = ::readdir(dir)) != nullptr;) {
    const int fd = std::atoi(entry->d_name);
    if (fd > STDERR_FILENO && fd != ::dirfd(dir) && (::fcntl(fd, F_GETFD) & FD_CLOEXEC)) marked.push_back(fd);
  }
  ::closedir(dir);
  for (int fd : marked) ::close(fd);
}

// What exec would have reset: a handled signal goes back to its default action (an ignored one stays ignored).
void default_signal_handlers() {
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (sig == SIGKILL || sig == SIGSTOP || ::sigaction(sig, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) || (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN)) {
      ::signal(sig, SIG_DFL);
    }
  }
}

// ps and /proc/PID/cmdline show the worker's own command line, as after an exec: the launcher's argv[0] and the
// worker's arguments, written over the launcher's argument area (fields 48-49 of /proc/self/stat). They always fit:
// the worker's arguments are some of the launcher's. The rest of the area becomes NUL bytes.
void show_command_line(const std::vector<std::string>& args) {
  const std::vector<std::string> stat = resilience::proc_stat_fields();
  if (stat.size() < 49) return;
  const uintptr_t arg_start = std::strtoull(stat[47].c_str(), nullptr, 10);
  const uintptr_t arg_end = std::strtoull(stat[48].c_str(), nullptr, 10);
  if (arg_start == 0 || arg_start >= arg_end) return;
  char* area = reinterpret_cast<char*>(arg_start);
  const size_t size = arg_end - arg_start;
  std::string title(area, strnlen(area, size));
  for (size_t k = 1; k < args.size(); ++k) title += '\0' + args[k];
  if (title.size() >= size) return;
  std::memcpy(area, title.data(), title.size());
  std::memset(area + title.size(), 0, size - title.size());
}

// The forked child becomes `kforge <worker command>` as if exec'd, without loading LibTorch again: its own process
// group (terminal signals reach the launcher only; it forwards them once), dead with the launcher (even of
// SIGKILL; a launcher gone before prctl is caught by the parent check), its output into its pipe, only the
// descriptors and signal handlers exec would have kept, the worker's environment. It never returns, not even by an
// exception into the launcher's code (noexcept: one would end the worker instead; host_main catches its own).
[[noreturn]] void become_worker(int out_fd, pid_t launcher, std::vector<std::string>& args,
                                std::vector<std::string>& env, WorkerMain worker_main) noexcept {
  std::vector<char*> argv = null_terminated(args), envp = null_terminated(env);
  environ = envp.data();  // first: what reads the environment in this process from now on reads the worker's
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) ::_exit(kExitFailure);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  close_close_on_exec_descriptors();  // out_fd too: the pipe ends are close-on-exec
  default_signal_handlers();
  show_command_line(args);
  const int code = worker_main(static_cast<int>(args.size()), argv.data());
  // Without the static destructors: LibTorch's unregister every operator, writing to pages this worker still
  // shares with the launcher, and copying them first cost a 2-rank job of the tests' tiny model 0.6-0.9 s.
  std::cout.flush();
  std::fflush(nullptr);
  ::_exit(code);
}

void spawn(Worker& w, const Layout& layout, const std::vector<std::string>& args, const fs::path& log_dir,
           WorkerMain worker_main) {
  int pipe_fds[2];
  // Close-on-exec: a worker must not hold another worker's pipe (it would keep that pipe open after the
  // launcher is gone, and the other worker blocked once the pipe is full).
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format(
        "cannot create the output pipe of rank {}: pipe(): {}; raise the open-file limit (ulimit -n) or start fewer "
        "workers",
        w.rank, std::strerror(errno)));
  }
  w.log_path = log_dir / fmt::format("rank_{}.log", w.rank);
  w.log_fd = ::open(w.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w.log_fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot write the log file {} of rank {}: {}; pass --log-dir DIR with a writable directory",
                    w.log_path.string(), w.rank, std::strerror(errno)));
  }
  // argv[0] is the front-end next to this kforge-host, as if the worker had been started as `kforge ...`.
  std::vector<std::string> argv_strings = {(fs::read_symlink("/proc/self/exe").parent_path() / "kforge").string()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = worker_environment(w, layout);
  const pid_t launcher = ::getpid();
  require_one_thread();
  std::cout.flush();  // what is buffered now would be written twice, once by the worker
  std::fflush(nullptr);
  // Blocked until the worker has its shutdown handlers: a signal forwarded while it starts asks it to
  // stop instead of killing it (kforge-host's commands unblock them).
  resilience::block_shutdown_signals(true);
  w.pid = ::fork();
  if (w.pid == 0) become_worker(pipe_fds[1], launcher, argv_strings, env_strings, worker_main);
  const int fork_errno = errno;
  resilience::block_shutdown_signals(false);
  ::close(pipe_fds[1]);
  if (w.pid < 0) {
    ::close(pipe_fds[0]);
    throw std::runtime_error(fmt::format(
        "cannot start rank {}: fork(): {}; check the process limit (ulimit -u) and free memory, or start fewer workers",
        w.rank, std::strerror(fork_errno)));
  }
  w.fd = pipe_fds[0];
}

// Moves what the worker wrote into its log file (and stderr for local rank 0); false at EOF.
bool drain(Worker& w) {
  char buffer[4096];
  const ssize_t n = ::read(w.fd, buffer, sizeof(buffer));
  if (n <= 0) {
    if (n < 0 && errno == EINTR) return true;
    ::close(w.fd);
    ::close(w.log_fd);
    w.fd = w.log_fd = -1;
    if (!w.partial.empty()) w.tail.push_back(w.partial);
    return false;
  }
  write_all(w.log_fd, buffer, static_cast<size_t>(n));
  if (w.local_rank == 0) std::cerr.write(buffer, n) << std::flush;
  w.partial.append(buffer, static_cast<size_t>(n));
  for (size_t eol; (eol = w.partial.find('\n')) != std::string::npos; w.partial.erase(0, eol + 1)) {
    w.tail.push_back(w.partial.substr(0, eol));
    if (w.tail.size() > kTailLines) w.tail.pop_front();
  }
  return true;
}

// True when the process is stopped (SIGSTOP, SIGTSTP, a debugger): it cannot act on SIGTERM and
// is what its peers' collectives were waiting for.
bool process_stopped(pid_t pid) {
  const std::vector<std::string> stat = resilience::proc_stat_fields(pid);
  return stat.size() > 2 && (stat[2] == "T" || stat[2] == "t");
}

// Stops the workers still running after `failed` ended: SIGTERM, and SIGKILL at once for a stopped
// one, named as the rank that hung the job.
void stop_others(std::vector<Worker>& workers, const Worker& failed) {
  for (auto& other : workers) {
    if (other.exited) continue;
    if (process_stopped(other.pid)) {
      std::cerr << fmt::format(
          "kforge launch: rank {} (pid {}) is stopped (SIGSTOP or a debugger): it hung the job's "
          "collectives, so rank {} timed out; killing it\n",
          other.rank, other.pid, failed.rank);
      ::kill(other.pid, SIGKILL);
    } else {
      ::kill(other.pid, SIGTERM);
    }
  }
}

int supervise(std::vector<Worker>& workers, double grace_sec) {
  bool forwarded = false;
  Worker* failed = nullptr;
  Clock::time_point kill_at{};
  for (;;) {
    if (const int sig = g_pending_signal) {
      g_pending_signal = 0;
      forwarded = true;
      for (auto& w : workers) {
        if (!w.exited) ::kill(w.pid, sig);
      }
    }
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (auto& w : workers) {
      if (w.fd >= 0) {
        fds.push_back({w.fd, POLLIN, 0});
        owners.push_back(&w);
      }
    }
    bool all_exited = true;
    for (auto& w : workers) all_exited &= w.exited;
    if (all_exited && fds.empty()) break;
    if (!fds.empty() && ::poll(fds.data(), fds.size(), 200) > 0) {
      for (size_t k = 0; k < fds.size(); ++k) {
        if (fds[k].revents != 0) drain(*owners[k]);
      }
    } else if (fds.empty()) {
      ::usleep(50 * 1000);  // output closed, a worker still exiting: check back on waitpid
    }
    // Of the workers that ended since the last look, blame one killed by a signal first: the
    // others most likely failed because it vanished from their collectives.
    Worker* first_failure = nullptr;
    for (auto& w : workers) {
      int status = 0;
      if (w.exited || ::waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
      w.exited = true;
      w.status = status;
      w.code = exit_code(status);
      if (w.code != 0 && (!first_failure || (WIFSIGNALED(status) && first_failure->code < 128))) first_failure = &w;
    }
    if (first_failure && !failed && !forwarded) {
      failed = first_failure;
      std::cerr << fmt::format("kforge launch: rank {} (pid {}) exited with code {}; stopping the other workers\n",
                               failed->rank, failed->pid, failed->code);
      stop_others(workers, *failed);
      kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_sec));
    }
    if (failed && Clock::now() >= kill_at) {
      for (auto& w : workers) {
        if (!w.exited) ::kill(w.pid, SIGKILL);
      }
    }
  }
  std::cerr << "kforge launch: exit status of every rank:\n";
  for (const Worker& w : workers) {
    std::cerr << fmt::format("  rank {} (pid {}): {}\n", w.rank, w.pid, describe_exit(w.status));
  }
  if (failed) {
    std::cerr << fmt::format(
        "kforge launch: the job failed: rank {} exited with code {}. Its last lines (all of them "
        "in {}):\n",
        failed->rank, failed->code, failed->log_path.string());
    for (const auto& line : failed->tail) std::cerr << "  " << line << "\n";
    return failed->code;
  }
  int code = kExitOk;
  for (const auto& w : workers) code = std::max(code, w.code);
  return code;
}

// Launch's own arguments, then the worker's command line: after `--`, or from the first argument
// that is neither an option nor an option's value (every launch option but --help takes one).
std::pair<std::vector<char*>, std::vector<std::string>> split_worker_command(int argc, char** argv) {
  std::vector<char*> own = {argv[0]};
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--") return {own, {argv + k + 1, argv + argc}};
    if (arg.empty() || arg[0] != '-') return {own, {argv + k, argv + argc}};
    own.push_back(argv[k]);
    const bool takes_value = arg != "-h" && arg != "--help" && arg.find('=') == std::string::npos;
    if (takes_value && k + 1 < argc) own.push_back(argv[++k]);
  }
  return {own, {}};
}

// An option's cxxopts names: its own and torchrun's ("nproc-per-node,nproc_per_node").
std::string and_torchrun_spelling(const std::string& name) {
  std::string underscored = name;
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  return underscored == name ? name : name + "," + underscored;
}

}  // namespace

cxxopts::Options launch_options() {
  cxxopts::Options options(
      "kforge launch",
      "Start N local worker processes of one job and supervise them (like torchrun):\n"
      "  kforge launch --nproc-per-node 2 [--] run cfg.toml [--section.key value]...\n"
      "Each worker runs `kforge <its command>` with RANK, WORLD_SIZE, LOCAL_RANK,\n"
      "LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and KFORGE_LAUNCHER_PID set; workers are\n"
      "forks of the launcher, which loads LibTorch once for all. SIGINT/SIGTERM/SIGUSR1 are forwarded\n"
      "to every worker. When a worker fails, the others get SIGTERM (SIGKILL after the grace\n"
      "period) and the launcher exits with the failing rank's code, printing its last lines.\n"
      "At the end it prints every rank's exit status (code, or the signal that killed it).\n"
      "Workers get SIGKILL if the launcher dies. Worker options (--plugin-dir DIR,\n"
      "--allow-unsafe-plugin-dir, --section.key=value) go after the worker command.\n"
      "Each worker's output goes to <log-dir>/rank_R.log; local rank 0's is also shown.\n"
      "torchrun's spellings of the options (--nproc_per_node, --master_addr, ...) work too.");
  const auto option = and_torchrun_spelling;
  options.add_options()(option("nproc-per-node"), "workers on this node", cxxopts::value<int>())(
      option("nnodes"), "nodes in the job", cxxopts::value<int>()->default_value("1"))(
      option("node-rank"), "this node's index", cxxopts::value<int>()->default_value("0"))(
      option("master-addr"), "rank 0's host", cxxopts::value<std::string>()->default_value("127.0.0.1"))(
      option("master-port"), "rendezvous port (default: a free port; required with --nnodes > 1)",
      cxxopts::value<int>())(option("log-dir"), "per-rank log files (default: a new temporary directory)",
                             cxxopts::value<std::string>())(
      option("grace-sec"), "seconds between SIGTERM and SIGKILL when stopping workers",
      cxxopts::value<double>()->default_value("30"))("h,help", "this help");
  return options;
}

int run_launch(int argc, char** argv, WorkerMain worker_main) {
  auto [own, worker_args] = split_worker_command(argc, argv);
  cxxopts::Options options = launch_options();
  const cmdline::ParsedOptions parsed = cmdline::parse_options(options, static_cast<int>(own.size()), own.data());
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  Layout layout;
  layout.nnodes = args["nnodes"].as<int>();
  layout.node_rank = args["node-rank"].as<int>();
  layout.addr = args["master-addr"].as<std::string>();
  std::string problem;
  if (!args.count("nproc-per-node") || args["nproc-per-node"].as<int>() < 1)
    problem = "--nproc-per-node N (>= 1) is required";
  else if (worker_args.empty())
    problem = "missing the worker command (e.g. run cfg.toml) after the options";
  else if (layout.nnodes < 1 || layout.node_rank < 0 || layout.node_rank >= layout.nnodes)
    problem = fmt::format("--node-rank {} is not in [0, --nnodes {})", layout.node_rank, layout.nnodes);
  else if (layout.nnodes > 1 && !args.count("master-port"))
    problem = "--master-port is required with --nnodes > 1";
  if (!problem.empty()) return cmdline::usage_error(options, problem);
  layout.nproc = args["nproc-per-node"].as<int>();
  layout.port = args.count("master-port") ? args["master-port"].as<int>() : free_local_port();
  const fs::path log_dir = args.count("log-dir")
                               ? fs::path(args["log-dir"].as<std::string>())
                               : fs::temp_directory_path() / fmt::format("kforge-launch-{}", ::getpid());
  fs::create_directories(log_dir);
  std::cerr << fmt::format("kforge launch: pid {}: {} workers (ranks {}..{} of {}), rendezvous {}:{}, logs in {}\n",
                           ::getpid(), layout.nproc, layout.node_rank * layout.nproc,
                           (layout.node_rank + 1) * layout.nproc - 1, layout.nproc * layout.nnodes, layout.addr,
                           layout.port, log_dir.string());

  struct sigaction action {};
  action.sa_handler = remember_signal;  // no SA_RESTART: poll() wakes up to forward it
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGUSR1}) ::sigaction(sig, &action, nullptr);
  resilience::block_shutdown_signals(false);  // blocked by the front-end across exec: one sent meanwhile is forwarded

  std::vector<Worker> workers(static_cast<size_t>(layout.nproc));
  for (int local = 0; local < layout.nproc; ++local) {
    Worker& w = workers[static_cast<size_t>(local)];
    w.local_rank = local;
    w.rank = layout.node_rank * layout.nproc + local;
    try {
      spawn(w, layout, worker_args, log_dir, worker_main);
    } catch (const std::exception& e) {
      std::cerr << "kforge launch: " << e.what() << "\n";
      for (const Worker& started : workers) {
        if (started.pid > 0) ::kill(started.pid, SIGTERM);
      }
      return kExitFailure;
    }
    std::cerr << fmt::format("kforge launch: rank {} is pid {}\n", w.rank, w.pid);
  }
  return supervise(workers, args["grace-sec"].as<double>());
}

}  // namespace kforge::launch
