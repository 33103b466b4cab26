// The process runners of the tests. RunProgram, RunShell and RunCli run a program to
// completion and capture what it printed and how it exited (the CLI as users run it, shell
// pipelines, setup commands); BackgroundProcess runs a long-lived one (a daemon, Prometheus)
// beside the test until the test stops it.
// The run-to-completion child reads `input` (default: nothing, as from /dev/null), writes into
// anonymous temporary files rather than pipes, so a chatty child never blocks on a full pipe, and
// runs in a process group of its own, so a timeout kills a whole pipeline. Thread-safety: safe to
// call from several threads (posix_spawn, no state of its own).
#ifndef PEERBLOOM_TESTS_SUPPORT_PROCESS_H_
#define PEERBLOOM_TESTS_SUPPORT_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace peerbloom::testing {

struct RunOptions {
  // Default: "" (an empty standard input). The bytes the child reads on its standard input.
  std::string input;
  // Default: {} (the test's environment). "NAME=value" entries that replace or add to the
  // test's environment in the child.
  std::vector<std::string> env;
  // Default: false. true: standard error goes where standard output goes, interleaved as the
  // child wrote them (the shell's `2>&1`); ProcessResult::err stays empty.
  bool merge_stderr = false;
  // Default: 120 s. Past it the child's process group is killed and exit_code is -1.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
};

// What a user at a terminal sees: standard error interleaved with standard output.
inline RunOptions Merged(std::string input = "") {
  RunOptions options;
  options.input = std::move(input);
  options.merge_stderr = true;
  return options;
}

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal, timed out, or could not start
  std::string out;     // standard output (with standard error under merge_stderr)
  std::string err;     // standard error
};

// "exit N", then stdout and stderr with bytes outside printable ASCII escaped: for test
// failure messages (`<< result`).
std::ostream& operator<<(std::ostream& os, const ProcessResult& r);

// Runs `argv` (argv[0] looked up in PATH) with no shell in between.
ProcessResult RunProgram(const std::vector<std::string>& argv, const RunOptions& options = {});

// Runs `command` with /bin/sh -c, as popen() and system() do: pipes, redirections and
// quoting as written.
ProcessResult RunShell(const std::string& command, const RunOptions& options = {});

// Runs the peerbloom CLI built with the tests: `args` go to the shell as written.
ProcessResult RunCli(const std::string& args, const RunOptions& options = {});

struct BackgroundOptions {
  // Default: {} (the test's environment). "NAME=value" entries that replace or add to the
  // test's environment in the child.
  std::vector<std::string> env;
  // Default: "" (the test's own standard output and error). A file that the child's standard
  // output and error are appended to, created (mode 0600) if missing.
  std::string output_file;
};

// A program running beside the test: started by Start, stopped by Stop or the destructor. The
// child reads nothing (standard input is /dev/null) and is killed (SIGKILL) if the test
// process dies first, so no run leaves one behind.
// Thread-safety: not thread-safe; one thread owns it.
class BackgroundProcess {
 public:
  BackgroundProcess() = default;
  ~BackgroundProcess() { Stop(); }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Starts `argv` (argv[0] looked up in PATH), stopping the one started before if it still
  // runs. false: the process could not be created; a program that cannot be executed exits
  // with 127 instead (see running()).
  bool Start(const std::vector<std::string>& argv, const BackgroundOptions& options = {});

  // The running child's pid; -1 before Start and once the child is reaped (by running() or
  // Stop()).
  pid_t pid() const { return pid_; }

  // Whether the child is still running; a child that has exited is reaped here.
  bool running();

  // Sends SIGTERM and waits up to `grace` for the child to exit, then kills it (SIGKILL).
  // Returns its exit code, or -1 (killed by a signal, or nothing was running).
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(30));

 private:
  pid_t pid_ = -1;
};

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_PROCESS_H_
