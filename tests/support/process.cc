#include "tests/support/process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "peerbloom/escape.h"
#include "tests/support/wait.h"

extern char** environ;

namespace peerbloom::testing {
namespace {

// An anonymous temporary file, deleted when closed.
using TempFile = std::unique_ptr<FILE, int (*)(FILE*)>;

TempFile NewTempFile() { return TempFile(std::tmpfile(), std::fclose); }

std::string ReadBack(FILE* f) {
  std::string text;
  if (f == nullptr) return text;
  std::rewind(f);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) text.append(buf, n);
  return text;
}

// The test's environment with `overrides` ("NAME=value") replacing entries of the same name.
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env = overrides;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string prefix = entry.substr(0, entry.find('=') + 1);
    bool replaced = false;
    for (const std::string& o : overrides) replaced = replaced || o.rfind(prefix, 0) == 0;
    if (!replaced) env.push_back(entry);
  }
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts `argv` with stdin, stdout and stderr on these files, in a process group of its own.
// Returns the pid, or -1.
pid_t Spawn(std::vector<std::string> argv, std::vector<std::string> env, FILE* in, FILE* out,
            FILE* err) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, ::fileno(in), 0);
  ::posix_spawn_file_actions_adddup2(&actions, ::fileno(out), 1);
  ::posix_spawn_file_actions_adddup2(&actions, ::fileno(err), 2);
  ::posix_spawnattr_init(&attr);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  ::posix_spawnattr_setpgroup(&attr, 0);
  const std::vector<char*> c_argv = CStrings(argv), c_env = CStrings(env);
  pid_t pid = -1;
  if (::posix_spawnp(&pid, c_argv[0], &actions, &attr, c_argv.data(), c_env.data()) != 0) {
    pid = -1;
  }
  ::posix_spawnattr_destroy(&attr);
  ::posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Waits for `pid` up to `timeout`, then kills its process group. Returns the exit code, or -1.
int Reap(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  const bool exited = WaitFor([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout,
                              std::chrono::milliseconds(2));
  if (!exited) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const ProcessResult& r) {
  return os << "exit " << r.exit_code << "\nstdout: " << EscapeBytes(r.out)
            << "\nstderr: " << EscapeBytes(r.err);
}

ProcessResult RunProgram(const std::vector<std::string>& argv, const RunOptions& options) {
  ProcessResult result;
  TempFile in = NewTempFile(), out = NewTempFile(), err = NewTempFile();
  if (argv.empty() || !in || !out || !err) return result;
  std::fwrite(options.input.data(), 1, options.input.size(), in.get());
  std::fflush(in.get());
  std::rewind(in.get());
  const pid_t pid = Spawn(argv, ChildEnvironment(options.env), in.get(), out.get(),
                          options.merge_stderr ? out.get() : err.get());
  if (pid < 0) return result;
  result.exit_code = Reap(pid, options.timeout);
  result.out = ReadBack(out.get());
  result.err = ReadBack(err.get());
  return result;
}

ProcessResult RunShell(const std::string& command, const RunOptions& options) {
  return RunProgram({"/bin/sh", "-c", command}, options);
}

ProcessResult RunCli(const std::string& args, const RunOptions& options) {
  return RunShell(std::string(PEERBLOOM_CLI_BIN) + " " + args, options);
}

}  // namespace peerbloom::testing
