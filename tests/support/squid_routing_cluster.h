// Three real Squids routed by peerbloom as shipped, for the routing tests: each Squid includes
// configs/squid/peerbloom-routing.conf.in rendered for its address by
// scripts/peerbloom-squid-routing, and runs beside its own daemon fed by its store.log.
//
//   client ──► Squid B ──helper──► daemon B (who-has) ─── gossip ─── daemons A, C
//                 │ cache_peer A/C parent on port 3129, chosen by the helper's `peer` note
//                 ▼
//              Squid A: a hit, or a TCP reset on a miss (B then goes direct)
//
// Squid runs as root and drops to cache_effective_user 'proxy' (scripts/squid-testbed.sh);
// its helper runs as 'proxy' too, another user than the daemon's, as in a real install: it
// asks over the daemon's who-has socket, which the daemon gives to group proxy in a directory
// laid out as the package's /run/peerbloom (mode 0711), and each daemon reads its Squid's
// route log itself (squid_route_log). Nothing is opened wider by hand. Every file a Squid
// reads (rendered recipe, helper config) lives in its bed's directory, which `squid -k
// shutdown` parses again. Not copyable: it owns the running Squids and daemons.
#ifndef PEERBLOOM_TESTS_SUPPORT_SQUID_ROUTING_CLUSTER_H_
#define PEERBLOOM_TESTS_SUPPORT_SQUID_ROUTING_CLUSTER_H_

#include <array>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"
#include "tests/support/squid_testbed.h"

namespace peerbloom::testing {

// One line of Squid's native access.log ("squid" logformat).
struct AccessLine {
  std::string client;  // the client's address
  std::string code;    // Squid's result code: TCP_MISS, TCP_MEM_HIT, ...
  std::string status;  // HTTP status sent to the client ("000": none, the connection was reset)
  std::string url;
  std::string hier;  // hierarchy code: HIER_NONE, HIER_DIRECT, FIRSTUP_PARENT, ...
  std::string host;  // where it was fetched from: "-", the origin's or the parent's address
  bool local_hit() const { return hier == "HIER_NONE" && code.find("HIT") != std::string::npos; }
};

// Parses a line; false when it has fewer than the ten fields of the "squid" format.
bool ParseAccessLine(const std::string& line, AccessLine* out);

std::string ReadText(const std::string& path);
// The lines of `text` that hold `needle`.
std::vector<std::string> LinesWith(const std::string& text, const std::string& needle);
// A GET of `url` through the proxy at addr:3128 with curl: the HTTP status, "000" when there
// was no answer within 20 s. With `ms`, also the transfer's total time in milliseconds.
std::string Fetch(const std::string& proxy, const std::string& url, double* ms = nullptr);

class RoutedSquids {
 public:
  static constexpr int kA = 0, kB = 1, kC = 2;

  RoutedSquids() = default;
  RoutedSquids(const RoutedSquids&) = delete;
  RoutedSquids& operator=(const RoutedSquids&) = delete;

  // Starts the three Squids from the rendered recipe (sharing A's origin), then the daemons
  // A, B and C (squid-md5 keys; B and C seeded with A), and lets each Squid's helper reach its
  // daemon. Empty on success, otherwise what failed.
  std::string Start();
  // Stops the Squids (the daemons stop with this object).
  void Stop(bool keep_files);

  SquidTestbed& bed(int i) { return *beds_[i]; }
  const SquidTestbed& bed(int i) const { return *beds_[i]; }
  Node* node(int i) const { return nodes_[i]; }
  // What Squid i's helper names node j as (its cache_peer name in the others' squid.conf).
  static std::string PeerName(int j);
  std::string helper_config(int i) const;
  // The directory of node i's who-has socket, and the daemon settings that give it to Squid.
  std::string run_dir(int i) const;
  std::string DaemonSettings(int i) const;
  std::string routes_log(int i) const;
  std::string access_log(int i) const;
  // Squid i's access.log lines for `url`, once there are at least `n` of them: Squid writes a
  // line when the transaction ends, which may be after the client has its answer.
  std::vector<std::string> Lines(int i, const std::string& url, size_t n) const;

 private:
  std::string Render(int i) const;

  // Declared first, destroyed last: the daemons outlive the Squids whose helpers ask them.
  Cluster cluster_;
  SquidTestbed a_, b_, c_;
  std::array<SquidTestbed*, 3> beds_ = {&a_, &b_, &c_};
  std::array<Node*, 3> nodes_ = {};
};

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_SQUID_ROUTING_CLUSTER_H_
