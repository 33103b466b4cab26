#include "tests/support/squid_routing_cluster.h"
#include "tests/support/process.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace peerbloom::testing {
namespace {

constexpr const char* kNodeIds[] = {"A", "B", "C"};
constexpr const char* kPeerNames =
    "squid_peer_names = { A = \"cache-a\", B = \"cache-b\", C = \"cache-c\" }\n";

}  // namespace

bool ParseAccessLine(const std::string& line, AccessLine* out) {
  std::istringstream in(line);
  std::vector<std::string> f;
  for (std::string field; in >> field;) f.push_back(field);
  if (f.size() < 10) return false;
  const size_t slash = f[3].find('/');
  const size_t hier_slash = f[8].find('/');
  out->client = f[2];
  out->code = f[3].substr(0, slash);
  out->status = slash == std::string::npos ? "" : f[3].substr(slash + 1);
  out->url = f[6];
  out->hier = f[8].substr(0, hier_slash);
  out->host = hier_slash == std::string::npos ? "" : f[8].substr(hier_slash + 1);
  return true;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

std::string Fetch(const std::string& proxy, const std::string& url, double* ms) {
  const std::string out =
      RunShell("curl -s -o /dev/null --max-time 20 -w '%{http_code} %{time_total}' -x http://" +
               proxy + ":3128 '" + url + "'")
          .out;
  const size_t space = out.find(' ');
  if (ms != nullptr) *ms = space == std::string::npos ? -1 : std::atof(&out[space + 1]) * 1000;
  return out.substr(0, space);
}

std::string RoutedSquids::PeerName(int j) { return std::string("cache-") + "abc"[j]; }

std::string RoutedSquids::helper_config(int i) const { return bed(i).root() + "/helper.toml"; }

// In Squid's logs directory, which the test bed gives to Squid's user.
std::string RoutedSquids::routes_log(int i) const {
  return bed(i).root() + "/" + bed(i).addr() + "/logs/peerbloom-routes.log";
}

std::string RoutedSquids::access_log(int i) const {
  return bed(i).root() + "/" + bed(i).addr() + "/logs/access.log";
}

std::vector<std::string> RoutedSquids::Lines(int i, const std::string& url, size_t n) const {
  std::vector<std::string> lines;
  WaitFor([&] { return (lines = LinesWith(ReadText(access_log(i)), " " + url + " ")).size() >= n; },
          kWaitDeadline);
  return lines;
}

// As the package lays it out: the daemon's who-has socket in a directory others may pass
// through (the unit's /run/peerbloom, mode 0711), given to Squid's group (proxy), which Squid
// runs its helper as.
std::string RoutedSquids::run_dir(int i) const { return bed(i).root() + "/run-peerbloom"; }

std::string RoutedSquids::DaemonSettings(int i) const {
  return "who_has_socket = \"" + run_dir(i) + "/who-has.sock\"\n" +
         "who_has_socket_group = \"proxy\"\n" + "squid_route_log = \"" + routes_log(i) + "\"\n" +
         kPeerNames;
}

// The shipped template rendered for Squid i by the shipped script, with this test's helper,
// config and route log. The helper's config holds what it reads of a node's config (the
// package's /etc/peerbloom/peerbloomd.toml, readable by Squid's user): the node id, the
// who-has socket and every node's cache_peer name.
std::string RoutedSquids::Render(int i) const {
  std::ofstream(helper_config(i)) << "node_id = \"" << kNodeIds[i] << "\"\n"
                                  << "data_dir = \"" << cluster_.dir() << "/" << kNodeIds[i]
                                  << "\"\n"
                                  << "who_has_socket = \"" << run_dir(i) << "/who-has.sock\"\n"
                                  << kPeerNames;
  if (::chmod(helper_config(i).c_str(), 0644) != 0) return "cannot chmod the helper config";
  const std::string conf = bed(i).root() + "/peerbloom-routing.conf";
  std::string command = PEERBLOOM_SOURCE_DIR "/scripts/peerbloom-squid-routing --self " +
                        bed(i).addr() + " --peerbloom " PEERBLOOM_CLI_BIN " --config " +
                        helper_config(i) + " --routes-log " + routes_log(i);
  for (int j = 0; j < 3; ++j) {
    if (j != i) command += " " + PeerName(j) + "=" + bed(j).addr();
  }
  const ProcessResult rendered = RunShell(command + " > " + conf);
  if (rendered.exit_code != 0) return "cannot render " + conf + ": " + rendered.err;
  if (::chmod(conf.c_str(), 0644) != 0) return "cannot chmod " + conf;
  return "";
}

std::string RoutedSquids::Start() {
  for (int i = 0; i < 3; ++i) {
    nodes_[i] = cluster_.AddNode(kNodeIds[i]);
    if (std::string why = beds_[i]->Reserve(std::string("routing-") + "abc"[i]); !why.empty())
      return why;
  }
  // The daemons first, so that each helper finds its daemon from its first request (after a
  // failed call it answers ERR for a second). A feed waits for its store.log to appear.
  NodeOptions options;
  options.key_scheme = "squid-md5";
  for (int i : {kA, kB, kC}) {
    NodeOptions o = options;
    std::filesystem::create_directories(run_dir(i));
    if (::chmod(run_dir(i).c_str(), 0711) != 0) return "cannot chmod " + run_dir(i);
    o.extra = DaemonSettings(i) + "[[feeds]]\npath = \"" + bed(i).root() + "/" + bed(i).addr() +
              "/logs/store.log\"\nformat = \"squid-store-log\"\n";
    const std::vector<Node*> seeds =
        i == kA ? std::vector<Node*>{} : std::vector<Node*>{nodes_[kA]};
    if (!nodes_[i]->Start(o, seeds)) {
      return "daemon " + nodes_[i]->name() + ": " + nodes_[i]->log_tail();
    }
  }
  // A first: its origin serves all three.
  for (int i : {kA, kC, kB}) {
    if (std::string why = Render(i); !why.empty()) return why;
    SquidTestbedOptions o;
    o.name = std::string("routing-") + "abc"[i];
    o.squid_conf_before_access = "include " + bed(i).root() + "/peerbloom-routing.conf";
    if (i != kA) o.shared_origin = a_.origin();
    if (std::string why = beds_[i]->Start(o); !why.empty()) return why;
  }
  return "";
}

void RoutedSquids::Stop(bool keep_files) {
  for (SquidTestbed* bed : {&b_, &c_, &a_}) bed->Stop(keep_files);
}

}  // namespace peerbloom::testing
