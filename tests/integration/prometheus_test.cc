// A real Prometheus (Debian's `prometheus` package) scrapes the /metrics of a 3-node cluster
// on 127.0.0.1, and its query API shows the values move as keys are added at one node and
// removed, and as a peer dies. Prometheus listens on a port picked by the OS (bound, read,
// released, then passed to it; a start that loses the port is retried) and keeps its data in
// the cluster's temporary directory. Scrapes run every second; every wait polls the query API
// with kWaitDeadline, so a loaded machine only makes the test slower.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

constexpr char kPrometheus[] = "/usr/bin/prometheus";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Percent-encodes everything but unreserved characters (RFC 3986).
std::string Escape(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if (std::isalnum(b) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// One Prometheus process scraping the given targets ({node name, "host:port"}).
class Prometheus {
 public:
  explicit Prometheus(std::string dir) : dir_(std::move(dir)) {}
  ~Prometheus() { Stop(); }

  bool Start(const std::vector<std::pair<std::string, std::string>>& targets) {
    std::ofstream config(dir_ + "/prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
           << "scrape_configs:\n  - job_name: peerbloom\n    static_configs:\n";
    for (const auto& [node, target] : targets) {
      config << "      - targets: ['" << target << "']\n        labels: {node: '" << node << "'}\n";
    }
    config.close();
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = FreeLoopbackPort();
      Spawn();  // a failed start shows as not running: the next attempt
      if (WaitFor([&] { return Ready() || !process_.running(); }, kWaitDeadline) &&
          process_.running()) {
        return true;
      }
      Stop();
    }
    return false;
  }

  void Stop() { process_.Stop(); }

  // The value of an instant query that yields one series; nullopt otherwise.
  std::optional<double> Query(const std::string& expr) {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(std::chrono::seconds(10));
    client.set_read_timeout(std::chrono::seconds(10));
    const httplib::Result r = client.Get("/api/v1/query?query=" + Escape(expr));
    if (!r || r->status != 200) return std::nullopt;
    const json reply = json::parse(r->body, nullptr, false);
    if (reply.is_discarded() || reply.value("status", "") != "success") return std::nullopt;
    const json& result = reply["data"]["result"];
    if (!result.is_array() || result.size() != 1) return std::nullopt;
    return std::stod(result[0]["value"][1].get<std::string>());
  }

  // Polls until `expr` equals `want`, up to kWaitDeadline; records the last value seen.
  bool Reaches(const std::string& expr, double want, std::string* last) {
    return WaitFor(
        [&] {
          const std::optional<double> v = Query(expr);
          *last = v ? std::to_string(*v) : "no single series";
          return v && *v == want;
        },
        kWaitDeadline);
  }

  std::string log() const { return ReadFile(dir_ + "/prometheus.log"); }

 private:
  void Spawn() {
    BackgroundOptions options;
    options.output_file = dir_ + "/prometheus.log";
    process_.Start({kPrometheus, "--config.file=" + dir_ + "/prometheus.yml",
                    "--storage.tsdb.path=" + dir_ + "/data",
                    "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
                   options);
  }
  bool Ready() {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(std::chrono::seconds(2));
    const httplib::Result r = client.Get("/-/ready");
    return r && r->status == 200;
  }

  std::string dir_;
  int port_ = 0;
  BackgroundProcess process_;
};

TEST(PrometheusScrape, ValuesMoveWithAddsRemovesAndAPeersDeath) {
  if (::access(kPrometheus, X_OK) != 0) {
    GTEST_SKIP() << "prometheus is not installed ('make test' installs it through "
                    "scripts/install-deps.sh --with-squid)";
  }
  Cluster cluster;
  Node* a = cluster.AddNode("a");
  Node* b = cluster.AddNode("b");
  Node* c = cluster.AddNode("c");
  NodeOptions options;
  options.extra = "metrics_listen = \"127.0.0.1:0\"\n";
  ASSERT_TRUE(a->Start(options, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(options, {a})) << b->log_tail();
  ASSERT_TRUE(c->Start(options, {a})) << c->log_tail();
  std::vector<std::pair<std::string, std::string>> targets;
  for (Node* n : {a, b, c}) {
    std::string endpoint = ReadFile(cluster.dir() + "/" + n->name() + "/metrics.endpoint");
    while (!endpoint.empty() && endpoint.back() == '\n') endpoint.pop_back();
    ASSERT_FALSE(endpoint.empty()) << n->name();
    targets.emplace_back(n->name(), endpoint);
  }
  Prometheus prometheus(cluster.dir());
  ASSERT_TRUE(prometheus.Start(targets)) << prometheus.log();

  std::string last;
  ASSERT_TRUE(prometheus.Reaches("sum(up{job=\"peerbloom\"})", 3, &last))
      << "not every node is scraped: " << last << "\n"
      << prometheus.log();
  ASSERT_TRUE(prometheus.Reaches("sum(peerbloom_peer_up)", 6, &last))
      << "membership never converged in the metrics: " << last;

  std::vector<std::string> urls;
  for (int i = 0; i < 50; ++i) urls.push_back("http://example.com/metrics/" + std::to_string(i));
  ASSERT_TRUE(a->Add(urls));
  EXPECT_TRUE(prometheus.Reaches("peerbloom_filter_keys{node=\"a\"}", 50, &last)) << last;
  EXPECT_TRUE(prometheus.Reaches("peerbloom_filter_adds_total{node=\"a\"}", 50, &last)) << last;
  // The add reached the peers: their view of a's summary counts its keys.
  EXPECT_TRUE(prometheus.Reaches("peerbloom_peer_filter_keys{node=\"b\",peer=\"a\"}", 50, &last))
      << last;
  EXPECT_TRUE(prometheus.Reaches("peerbloom_peer_filter_keys{node=\"c\",peer=\"a\"}", 50, &last))
      << last;

  ASSERT_TRUE(a->Remove(std::vector<std::string>(urls.begin(), urls.begin() + 10)));
  EXPECT_TRUE(prometheus.Reaches("peerbloom_filter_removes_total{node=\"a\"}", 10, &last)) << last;
  EXPECT_TRUE(prometheus.Reaches("peerbloom_filter_keys{node=\"a\"}", 40, &last)) << last;
  EXPECT_TRUE(prometheus.Reaches("peerbloom_peer_filter_keys{node=\"b\",peer=\"a\"}", 40, &last))
      << last;
  // Gossip traffic was counted, by type and by peer.
  EXPECT_TRUE(prometheus.Reaches(
      "sum(peerbloom_gossip_messages_total{node=\"a\",type=\"delta\",direction=\"out\"}) > bool 0",
      1, &last))
      << last;
  EXPECT_TRUE(prometheus.Reaches(
      "peerbloom_peer_messages_total{node=\"b\",peer=\"a\",direction=\"in\"} > bool 0", 1, &last))
      << last;

  c->Kill9();
  EXPECT_TRUE(prometheus.Reaches("up{node=\"c\"}", 0, &last)) << last;
  EXPECT_TRUE(prometheus.Reaches("peerbloom_peer_up{node=\"a\",peer=\"c\"}", 0, &last)) << last;
  EXPECT_TRUE(prometheus.Reaches("peerbloom_peer_up{node=\"b\",peer=\"c\"}", 0, &last)) << last;
  EXPECT_TRUE(prometheus.Reaches("peerbloom_gossip_members{node=\"a\",state=\"dead\"}", 1, &last))
      << last;
  prometheus.Stop();
}

}  // namespace
}  // namespace peerbloom::testing
