#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
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

bool BackgroundProcess::Start(const std::vector<std::string>& argv,
                              const BackgroundOptions& options) {
  Stop();
  if (argv.empty()) return false;
  // Everything the child needs is built before fork: between fork and exec a child of a
  // multithreaded test may only make async-signal-safe calls.
  std::vector<std::string> args = argv, env = ChildEnvironment(options.env);
  const std::vector<char*> c_argv = CStrings(args), c_env = CStrings(env);
  const char* output = options.output_file.empty() ? nullptr : options.output_file.c_str();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the test died before prctl
    // Each file moves to its standard descriptor; the descriptor it was opened on is closed,
    // so the program inherits nothing more.
    const int in = ::open("/dev/null", O_RDONLY);
    if (in > 0) {
      ::dup2(in, 0);
      ::close(in);
    }
    if (output != nullptr) {
      const int out = ::open(output, O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (out >= 0) {
        if (out != 1) ::dup2(out, 1);
        if (out != 2) ::dup2(out, 2);
        if (out > 2) ::close(out);
      }
    }
    ::execvpe(c_argv[0], c_argv.data(), c_env.data());
    ::_exit(127);
  }
  pid_ = pid;
  return true;
}

bool BackgroundProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != 0) pid_ = -1;  // exited, or not our child any more
  return pid_ > 0;
}

int BackgroundProcess::Stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return -1;
  const pid_t pid = pid_;
  pid_ = -1;
  ::kill(pid, SIGTERM);
  int status = 0;
  pid_t reaped = 0;
  WaitFor([&] { return (reaped = ::waitpid(pid, &status, WNOHANG)) != 0; }, grace,
          std::chrono::milliseconds(2));
  if (reaped < 0) return -1;  // not our child any more
  if (reaped == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace peerbloom::testing
