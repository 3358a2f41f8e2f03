#include "support/oracle.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>

#include "support/read_file.h"
#include "support/test_host.h"

extern char** environ;

namespace kforge::test {
namespace {

// One python3 per test process that imports torch and numpy once and runs each oracle script in a forked child
// (tests/oracles/oracle_server.py): a script's run costs a fork instead of python3-torch's 1.5 s import.
class OracleServer {
 public:
  // The running server, or nullptr when python3 cannot import torch and numpy.
  static OracleServer* get() {
    static OracleServer* server = start();
    return server;
  }

  int run(const std::string& script, const std::vector<std::string>& args, std::string* output) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) {
      if (output != nullptr)
        *output = "the oracle server (tests/oracles/oracle_server.py) stopped after an earlier run";
      return -1;
    }
    nlohmann::json env = nlohmann::json::object();
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      const auto eq = entry.find('=');
      if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    static const std::filesystem::path out = temp_dir("oracle") / "output.txt";
    const nlohmann::json request{{"script", script},
                                 {"args", args},
                                 {"cwd", std::filesystem::current_path().string()},
                                 {"env", env},
                                 {"output", out.string()}};
    const std::string line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const std::string status = write_line(line) ? read_line() : "";
    stopped_ = status.empty();
    if (output != nullptr) {
      *output =
          stopped_ ? "the oracle server (tests/oracles/oracle_server.py) exited before answering" : read_file(out);
    }
    return stopped_ ? -1 : std::max(-1, std::stoi(status));
  }

 private:
  OracleServer(FILE* to, FILE* from) : to_(to), from_(from) {}

  static OracleServer* start() {
    int request[2], answer[2];  // close-on-exec here; the server gets them as its stdin and stdout
    if (pipe2(request, O_CLOEXEC) != 0 || pipe2(answer, O_CLOEXEC) != 0) return nullptr;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, request[0], 0);
    posix_spawn_file_actions_adddup2(&actions, answer[1], 1);
    const std::string script = std::string(KFORGE_SOURCE_DIR) + "/tests/oracles/oracle_server.py";
    std::string python = KFORGE_PYTHON;
    char* argv[] = {python.data(), const_cast<char*>(script.c_str()), nullptr};
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, python.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(request[0]);
    close(answer[1]);
    auto* server = new OracleServer(fdopen(request[1], "w"), fdopen(answer[0], "r"));
    if (spawned != 0 || server->read_line() != "ready") {
      std::fprintf(stderr, "%s could not start %s (python3 with torch and numpy)\n", KFORGE_PYTHON, script.c_str());
      std::fclose(server->to_);
      std::fclose(server->from_);
      delete server;
      if (spawned == 0) waitpid(pid, nullptr, 0);
      return nullptr;
    }
    return server;
  }

  // With SIGPIPE blocked, so a server that died makes this false instead of killing the test process.
  bool write_line(const std::string& line) {
    sigset_t pipe_signal, previous;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
    const bool written = std::fwrite(line.data(), 1, line.size(), to_) == line.size() && std::fflush(to_) == 0;
    if (!written) {
      const timespec now{};
      sigtimedwait(&pipe_signal, nullptr, &now);  // the SIGPIPE this write raised, if any
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return written;
  }

  std::string read_line() {
    std::string line;
    for (int c = std::fgetc(from_); c != EOF && c != '\n'; c = std::fgetc(from_)) line += static_cast<char>(c);
    return line;
  }

  FILE* to_;
  FILE* from_;
  std::mutex mutex_;
  bool stopped_ = false;
};

}  // namespace

bool oracle_available() { return OracleServer::get() != nullptr; }

int run_oracle(const std::string& script, const std::vector<std::string>& args, std::string* output) {
  OracleServer* server = OracleServer::get();
  if (server == nullptr) {
    if (output != nullptr) *output = "the oracle (" KFORGE_PYTHON " with torch and numpy) is not available";
    return -1;
  }
  return server->run(std::string(KFORGE_SOURCE_DIR) + "/tests/oracles/" + script, args, output);
}

void expect_within(const at::Tensor& actual, const at::Tensor& expected, const std::string& what, double atol,
                   double rtol) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const at::Tensor a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  const double worst = ((a - e).abs() - (atol + rtol * e.abs())).max().item<double>();
  EXPECT_LE(worst, 0.0) << what << ": max |diff| = " << (a - e).abs().max().item<double>() << " exceeds atol " << atol
                        << " + rtol " << rtol << " * |expected| (max |expected| = " << e.abs().max().item<double>()
                        << ")";
}

}  // namespace kforge::test
