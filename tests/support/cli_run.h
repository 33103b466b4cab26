// Runs the peerbloom CLI binary built with the tests and captures what it prints (stdout and
// stderr together) and its exit code.
#ifndef PEERBLOOM_TESTS_SUPPORT_CLI_RUN_H_
#define PEERBLOOM_TESTS_SUPPORT_CLI_RUN_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace peerbloom::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
};

// `args` go to the shell as written; stdin comes from `stdin_file`.
inline CliResult Cli(const std::string& args, const std::string& stdin_file = "/dev/null") {
  const std::string command =
      std::string(PEERBLOOM_CLI_BIN) + " " + args + " < " + stdin_file + " 2>&1";
  CliResult r;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_CLI_RUN_H_
