#include "tests/support/squid_testbed.h"
#include "tests/support/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace peerbloom::testing {

std::string SquidTestbed::SkipReason() {
  if (!std::filesystem::exists("/usr/sbin/squid") || ::geteuid() != 0) {
    return "needs /usr/sbin/squid and root (scripts/squid-testbed.sh)";
  }
  return "";
}

std::string SquidTestbed::Reserve(const std::string& name) {
  if (!addr_.empty()) return "";
  std::string tmpl = ::testing::TempDir() + name + ".XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return "cannot create a working directory";
  root_ = tmpl;
  // Squid runs as 'proxy' and must reach its working directory under this one.
  std::filesystem::permissions(root_, std::filesystem::perms(0755));
  if (!ClaimAddress()) return "no free test-bed address in 127.0.0.200-249";
  return "";
}

std::string SquidTestbed::Start(const SquidTestbedOptions& options) {
  options_ = options;
  if (std::string why = Reserve(options.name); !why.empty()) return why;
  if (!options_.hosts.empty()) {
    const std::string hosts = root_ + "/hosts";
    std::ofstream(hosts) << WithAddress(options_.hosts);
    std::filesystem::permissions(hosts, std::filesystem::perms(0644));
    options_.squid_conf_extra += "\nhosts_file " + hosts;
  }
  started_ = true;  // stop even after a failed start: stopping is idempotent
  if (Run("start " + addr_) != 0) return "squid did not start on " + addr_;
  origin_ = Capture("origin " + addr_);
  if (origin_.empty()) return "the test bed named no origin server";
  return "";
}

void SquidTestbed::Stop(bool keep_files) {
  if (started_) {
    if (Run("stop " + addr_) != 0)
      std::fprintf(stderr, "squid-testbed: stop %s failed\n", addr_.c_str());
    started_ = false;
  }
  if (!root_.empty() && keep_files) {
    std::printf("keeping %s for inspection\n", root_.c_str());
  } else if (!root_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  root_.clear();
  addr_.clear();
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

bool SquidTestbed::ClaimAddress() {
  for (int i = 0; i < 50; ++i) {
    const std::string addr = "127.0.0." + std::to_string(200 + (::getpid() + i) % 50);
    const int fd = ::open(("/tmp/peerbloom-testbed-" + addr + ".lock").c_str(),
                          O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      lock_fd_ = fd;
      addr_ = addr;
      return true;
    }
    ::close(fd);
  }
  return false;
}

std::string SquidTestbed::WithAddress(std::string text) const {
  for (size_t at; (at = text.find("@ADDR@")) != std::string::npos;) text.replace(at, 6, addr_);
  return text;
}

std::string SquidTestbed::Command(const std::string& args) const {
  // The values are the test's own; only quotes would need escaping and none are used.
  return "PEERBLOOM_SQUID_ROOT='" + root_ +
         "' DIGEST_PERIOD=" + std::to_string(options_.digest_period_s) +
         " CACHE_MB=" + std::to_string(options_.cache_mb) +
         " LOGFILE_ROTATE=" + std::to_string(options_.logfile_rotate) + " FILL_QUERY='" +
         options_.fill_query + "' SQUID_CONF_EXTRA='" + WithAddress(options_.squid_conf_extra) +
         "' SQUID_CONF_BEFORE_ACCESS='" + WithAddress(options_.squid_conf_before_access) +
         "' PEERBLOOM_ORIGIN='" + options_.shared_origin + "' ORIGIN_LISTEN='" +
         WithAddress(options_.origin_listen) +
         "' '" PEERBLOOM_SOURCE_DIR "/scripts/squid-testbed.sh' " + args;
}

std::vector<std::string> SquidTestbed::Origins() const {
  std::vector<std::string> urls;
  std::istringstream lines(Capture("origins " + addr_));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) urls.push_back(line);
  }
  return urls;
}

int SquidTestbed::Run(const std::string& args) const {
  // The script bounds each of its own waits; the timeout only ends a hang (installing Squid
  // on first use may take minutes).
  RunOptions options = Merged();
  options.timeout = std::chrono::minutes(10);
  const ProcessResult r = RunShell(Command(args), options);
  // What the script said is only worth reading when it failed.
  if (r.exit_code != 0) {
    std::fprintf(stderr, "squid-testbed.sh %s: exit %d\n%s", args.c_str(), r.exit_code,
                 r.out.c_str());
  }
  return r.exit_code;
}

std::string SquidTestbed::Capture(const std::string& args) const {
  std::string out = RunShell(Command(args)).out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace peerbloom::testing
