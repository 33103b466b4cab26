// peerbloomd: flags -> config -> Daemon::Start -> Daemon::Run -> exit code.
#include <fcntl.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <string>

#include "daemon/config/allow_list.h"
#include "daemon/config/config.h"
#include "daemon/config/origin_keys.h"
#include "daemon/loop/clock.h"
#include "daemon/loop/daemon.h"
#include "daemon/loop/sd_notify.h"
#include "daemon/observe/log_format.h"
#include "daemon/store/local_files.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/escape.h"

namespace {

using peerbloom::Status;
using peerbloom::daemon::Config;

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_reload = 0;
bool g_logging_to_file = false;  // fatal errors then go to the log file too

void OnStop(int) { g_stop = 1; }
void OnReload(int) { g_reload = 1; }

void InstallSignals() {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = OnStop;  // no SA_RESTART: poll returns EINTR and the loop sees the flag
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sa.sa_handler = OnReload;
  sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, nullptr);
}

int Fatal(const std::string& message) {
  std::fprintf(stderr, "peerbloomd: fatal: %s\n", message.c_str());
  if (g_logging_to_file) spdlog::critical("{}", message);
  return 1;
}

Status CheckCurveFiles(Config* config, peerbloom::client::CurveKeyPair* keys) {
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::ResolveSeedKeys(config));
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::ReadNodeKeyFile(config->key_file, keys));
  if (!config->authorized_keys.empty()) {
    std::vector<peerbloom::client::AuthorizedKey> authorized;
    PEERBLOOM_RETURN_IF_ERROR(
        peerbloom::client::ReadAuthorizedKeys(config->authorized_keys, &authorized));
  }
  std::map<std::string, std::string> allowed;
  std::vector<peerbloom::ListedNode> listed;
  return peerbloom::daemon::LoadAllowList(*config, &allowed, &listed);
}

// The checks Daemon::Start makes of the files the config names, in its order and with its
// messages, without creating any: what Start would create is checked only when it exists.
Status CheckFiles(Config config) {
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::LoadClusterSecret(&config));
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::CheckDataDir(config.data_dir));
  peerbloom::client::CurveKeyPair keys;
  if (config.curve) PEERBLOOM_RETURN_IF_ERROR(CheckCurveFiles(&config, &keys));
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::CheckControlSocketDir(config.control));
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::CheckControlTokenFile(config.control_token_file));
  return peerbloom::daemon::CheckSigningConfig(config, keys);
}

// The data dir is checked (and created) before the log file in it is: the log file must not
// be a link another user planted (docs/security.md).
Status PrepareLogFile(const Config& config) {
  std::unique_ptr<peerbloom::daemon::DataDir> dir;
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::DataDir::Open(config.data_dir, &dir));
  int fd = -1;
  PEERBLOOM_RETURN_IF_ERROR(peerbloom::daemon::OpenAppendNoFollow(config.log_file, &fd));
  ::close(fd);
  return Status::Ok();
}

void SetUpLogging(const Config& config, bool foreground) {
  std::shared_ptr<spdlog::logger> logger;
  if (foreground) {
    logger = spdlog::stderr_logger_mt("peerbloomd");
  } else {
    // Before spdlog creates the log file (and any missing directory with its own mode).
    ::mkdir(config.data_dir.c_str(), 0700);
    logger = spdlog::basic_logger_mt("peerbloomd", config.log_file);
    g_logging_to_file = true;
  }
  logger->set_formatter(peerbloom::daemon::MakeLogFormatter());
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  std::string previous;
  (void)peerbloom::daemon::SetLogLevel(config.log_level, &previous);  // checked by LoadConfig
}

// Detaches from the terminal. The parent waits for the child to report Start()'s outcome on
// a pipe, so `peerbloomd --config x` still fails loudly when the config cannot be served.
// Returns the write end in the child (-1 in foreground); never returns in the parent.
int Detach() {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid > 0) {
    ::close(fds[1]);
    std::string message;
    char buf[512];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) message.append(buf, static_cast<size_t>(n));
    if (message == "ok") std::_Exit(0);
    std::fprintf(stderr, "peerbloomd: fatal: %s\n",
                 message.empty() ? "the daemon exited during start" : message.c_str());
    std::_Exit(1);
  }
  ::close(fds[0]);
  ::setsid();
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    if (null_fd > 2) ::close(null_fd);
  }
  return fds[1];
}

void Report(int fd, const std::string& message) {
  if (fd < 0) return;
  if (::write(fd, message.data(), message.size()) < 0) {
    // The parent is gone; nothing to tell.
  }
  ::close(fd);
}

int Run(const std::string& config_path, bool check_only, bool foreground) {
  Config config;
  Status s = peerbloom::daemon::LoadConfig(config_path, &config);
  if (!s.ok()) return Fatal(s.message());
  if (check_only) {
    s = CheckFiles(config);
    if (!s.ok()) return Fatal(s.message());
    std::printf("config '%s' is valid\n", config_path.c_str());
    return 0;
  }
  if (!foreground) {
    s = PrepareLogFile(config);
    if (!s.ok()) return Fatal(s.message());
  }
  const int report_fd = foreground ? -1 : Detach();
  SetUpLogging(config, foreground);
  InstallSignals();
  peerbloom::daemon::SteadyClock clock;
  peerbloom::daemon::Daemon daemon(std::move(config), &clock);
  s = daemon.Start();
  if (!s.ok()) {
    Report(report_fd, s.message());
    return Fatal(s.message());
  }
  Report(report_fd, "ok");
  peerbloom::daemon::SdNotifier notifier = peerbloom::daemon::SdNotifier::FromEnvironment();
  daemon.set_notifier(&notifier);
  s = daemon.Run(&g_stop, &g_reload);
  if (!s.ok()) return Fatal(s.message());
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"peerbloomd: tells the nodes of a cache cluster which node holds a URL"};
    std::string config_path;
    bool check_only = false;
    bool foreground = false;
    app.add_option("-c,--config", config_path, "TOML config file (docs/config.md)")->required();
    app.add_flag("--check-config", check_only, "check the config and key files, then exit");
    app.add_flag("-f,--foreground", foreground, "stay in the foreground and log to stderr");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) return app.exit(e);
      std::fprintf(stderr, "peerbloomd: fatal: %s\n", e.what());
      return 2;
    }
    return Run(config_path, check_only, foreground);
  } catch (const std::exception& e) {
    return Fatal("unexpected error: " + peerbloom::EscapeBytes(e.what()));
  } catch (...) {
    return Fatal("unexpected error");
  }
}
