#include "daemon/relay/purge_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

extern char** environ;

namespace peerbloom::daemon {
namespace {

// How often a wait for the program looks at `stop`.
constexpr int kStopCheckMs = 50;

// Spawn attributes: a process group of its own (killed as one), no blocked signals, and the
// default action for the signals the daemon ignores or handles (SIGPIPE is ignored by the
// daemon, and an ignored signal stays ignored across exec).
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&files_);
    sigset_t none;
    sigset_t reset;
    sigemptyset(&none);
    sigemptyset(&reset);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD}) {
      sigaddset(&reset, sig);
    }
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &reset);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(&files_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&files_, STDERR_FILENO + 1);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&files_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* files() const { return &files_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t files_;
};

// Waits up to `ms` for the child to end: on its pidfd where the kernel has them, else a
// plain sleep. Returns true when it has ended (and *status holds its wait status).
bool WaitChild(pid_t pid, int pidfd, int ms, int* status) {
  const pid_t done = waitpid(pid, status, WNOHANG);
  if (done == pid) return true;
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    (void)poll(&p, 1, ms);
  } else {
    (void)poll(nullptr, 0, std::min(ms, 10));
  }
  return waitpid(pid, status, WNOHANG) == pid;
}

void Record(int status, nlohmann::json* result) {
  if (WIFEXITED(status)) {
    (*result)["exit_status"] = WEXITSTATUS(status);
    (*result)["purged"] = WEXITSTATUS(status) == 0;
  } else if (WIFSIGNALED(status)) {
    (*result)["signal"] = WTERMSIG(status);
    (*result)["purged"] = false;
  }
}

}  // namespace

void RunPurgeCommand(const std::vector<std::string>& argv, std::string_view url, int64_t timeout_ms,
                     const std::atomic<bool>& stop, nlohmann::json* result) {
  (*result)["timed_out"] = false;
  (*result)["purged"] = false;
  // An argument or an environment entry ends at its first NUL: the program would purge a
  // shorter URL than the one asked for.
  if (url.find('\0') != std::string_view::npos) {
    (*result)["error"] = "the URL holds a NUL byte: not passed to '" + argv[0] + "'";
    return;
  }
  // The URL after "--", so that one starting with '-' is never read as an option, and in
  // PEERBLOOM_PURGE_URL for programs that take no "--".
  std::vector<std::string> args = argv;
  args.emplace_back("--");
  args.emplace_back(url);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  const std::string url_entry = std::string(kPurgeUrlVariable) + "=" + std::string(url);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).rfind(std::string(kPurgeUrlVariable) + "=", 0) != 0) env.push_back(*e);
  }
  env.push_back(const_cast<char*>(url_entry.c_str()));
  env.push_back(nullptr);

  SpawnSetup setup;
  pid_t pid = -1;
  const int err =
      posix_spawn(&pid, cargs[0], setup.files(), setup.attr(), cargs.data(), env.data());
  if (err != 0) {
    (*result)["error"] = "cannot run '" + argv[0] + "': " + std::strerror(err);
    return;
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  bool ended = false;
  while (!ended && !stop.load()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    ended = WaitChild(pid, pidfd, static_cast<int>(std::min<int64_t>(left, kStopCheckMs)), &status);
  }
  if (!ended) {
    kill(-pid, SIGKILL);
    (void)waitpid(pid, &status, 0);
    (*result)["timed_out"] = !stop.load();
    (*result)["error"] = stop.load() ? std::string("killed: the daemon is stopping")
                                     : "killed after '" + std::to_string(timeout_ms) + "' ms";
  }
  if (pidfd >= 0) close(pidfd);
  Record(status, result);
}

}  // namespace peerbloom::daemon
