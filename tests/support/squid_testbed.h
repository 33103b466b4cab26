// A real Squid for tests: scripts/squid-testbed.sh started on its own loopback address with a
// local origin server, in a per-test working directory.
//
// Each Squid needs its own address, and tests run in parallel processes, so an address in
// 127.0.0.200-249 is claimed with a lock file held (flock) until Stop() or the process exits.
// Not copyable: it owns the running Squid, the lock and the directory.
#ifndef PEERBLOOM_TESTS_SUPPORT_SQUID_TESTBED_H_
#define PEERBLOOM_TESTS_SUPPORT_SQUID_TESTBED_H_

#include <string>
#include <vector>

namespace peerbloom::testing {

// In the three strings below, "@ADDR@" stands for the bed's own address (known only once
// Start() has claimed one).
struct SquidTestbedOptions {
  std::string name = "squidbed";  // prefix of the working directory
  int cache_mb = 64;              // Default: 64. Squid's cache_dir size
  std::string fill_query;         // Default: none. Appended to every URL `fill` fetches
  int digest_period_s = 3;        // Default: 3. Digest rebuild and rewrite period
  int logfile_rotate = 0;         // Default: 0. squid.conf logfile_rotate (rotated logs kept)
  // Default: none. squid.conf lines appended to the generated config (SQUID_CONF_EXTRA).
  std::string squid_conf_extra;
  // Default: none. squid.conf lines placed before the generated http_access rules
  // (SQUID_CONF_BEFORE_ACCESS).
  std::string squid_conf_before_access;
  // Default: none (start an origin of its own). The base URL of another bed's origin, so that
  // several Squids fetch the same URLs (PEERBLOOM_ORIGIN).
  std::string shared_origin;
  // Default: none. More HOST:PORT the origin answers on, e.g. "@ADDR@:80 [::1]:0"
  // (ORIGIN_LISTEN); Origins() lists them.
  std::string origin_listen;
  // Default: none. An /etc/hosts-style file Squid resolves names with instead of
  // /etc/hosts (squid.conf hosts_file), e.g. "@ADDR@ alpha.lab\n".
  std::string hosts;
};

class SquidTestbed {
 public:
  SquidTestbed() = default;
  ~SquidTestbed() { Stop(/*keep_files=*/false); }
  SquidTestbed(const SquidTestbed&) = delete;
  SquidTestbed& operator=(const SquidTestbed&) = delete;

  // Why the test bed cannot run here (no Squid, not root), or empty when it can.
  static std::string SkipReason();

  // Creates the working directory named after `name` and claims an address, so that addr()
  // and root() are known before Start (for configs that name other beds' addresses). Returns
  // empty on success, otherwise what failed. Start does it when it was not done.
  std::string Reserve(const std::string& name);
  // Creates the working directory, claims an address (unless Reserve did), starts Squid and
  // learns the origin's base URL. Returns empty on success, otherwise what failed.
  std::string Start(const SquidTestbedOptions& options);
  // Stops Squid (idempotent), releases the address, and removes the working directory unless
  // keep_files (then it says where it is).
  void Stop(bool keep_files);

  // Runs `scripts/squid-testbed.sh ARGS` with this bed's settings; its exit code (-1: killed
  // by a signal, or still running after 10 minutes). What it printed goes to standard error
  // when it fails.
  // ("reconfigure " + addr() returns once Squid listens again after `squid -k reconfigure`.)
  int Run(const std::string& args) const;
  // The same, returning its standard output without trailing newlines.
  std::string Capture(const std::string& args) const;

  const std::string& root() const { return root_; }
  const std::string& addr() const { return addr_; }
  const std::string& origin() const { return origin_; }
  // Every base URL the origin answers on: origin() first, then those of origin_listen.
  std::vector<std::string> Origins() const;

 private:
  bool ClaimAddress();
  std::string Command(const std::string& args) const;
  std::string WithAddress(std::string text) const;

  SquidTestbedOptions options_;
  int lock_fd_ = -1;
  bool started_ = false;
  std::string root_, addr_, origin_;
};

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_SQUID_TESTBED_H_
