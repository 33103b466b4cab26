// Runs a program to completion and captures what it printed and how it exited: the one
// process runner of the tests (the CLI as users run it, shell pipelines, setup commands).
// The child reads `input` (default: nothing, as from /dev/null), writes into anonymous
// temporary files rather than pipes, so a chatty child never blocks on a full pipe, and runs
// in a process group of its own, so a timeout kills a whole pipeline.
// Thread-safety: safe to call from several threads (posix_spawn, no state of its own).
#ifndef PEERBLOOM_TESTS_SUPPORT_PROCESS_H_
#define PEERBLOOM_TESTS_SUPPORT_PROCESS_H_

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

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_PROCESS_H_
