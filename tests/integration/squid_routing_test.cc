// The shipped routing recipe (configs/squid/peerbloom-routing.conf.in rendered by
// scripts/peerbloom-squid-routing, docs/squid.md) on three real Squids and three daemons, no
// ICP and no digests (tests/support/squid_routing_cluster.h draws the setup).
//
// SquidRouting.ShippedRecipe... checks that a URL cached at A and requested at B is fetched
// from A (B logs the parent route, A the hit); a URL nobody holds goes direct; a false hit (A's
// summary claims a URL A's Squid does not hold) costs one hop and nothing more: A resets B's
// connection without going to the origin, B fetches direct, serves the client and caches the
// object, so B's next request for it is a local hit; the outcomes reach B's daemon; after
// each of three `squid -k reconfigure` of B, with idle connections from B to A pooled before
// it, routed requests are answered 200 by A; no ICP packet is sent or received; with B's
// daemon stopped, B still serves every request, direct. It prints the median latency of a
// false hit against a plain miss.
//
// SquidRouting.HitRatio... replays one request stream on the routed Squids and on three
// Squids without peers: routing never lowers the hit ratio.
//
// Skipped where Squid is not installed or not root.
#include <gtest/gtest.h>

#include <httplib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/squid_routing_cluster.h"

namespace peerbloom::testing {
namespace {

constexpr int kA = RoutedSquids::kA, kB = RoutedSquids::kB, kC = RoutedSquids::kC;
constexpr int kHeld = 20;         // URLs cached at A, fetched through B
constexpr int kNobody = 20;       // URLs no Squid holds
constexpr int kReconfigures = 3;  // `squid -k reconfigure` of B
constexpr int kWarm = 3;          // routed hits before each, leaving idle connections B->A
constexpr int kAfter = 4;         // routed requests after each
constexpr int kLatency = 15;      // false hits and plain misses timed

std::string Slurp(const std::string& command) { return RunShell(command).out; }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// A counter of Squid's cache manager ("absent" when it is not listed).
std::string Counter(const SquidTestbed& bed, const std::string& name) {
  const std::string out =
      Slurp("curl -s --max-time 20 http://" + bed.addr() + ":3128/squid-internal-mgr/counters");
  for (const std::string& line : LinesWith(out, name + " = ")) {
    if (line.rfind(name + " = ", 0) == 0) return line.substr(name.size() + 3);
  }
  return "absent";
}

// Established TCP connections from `from` to port 3129 of `to`.
int ConnectionsToPeerPort(const std::string& from, const std::string& to) {
  const std::string out =
      Slurp("ss -Htn state established '( dst " + to + ":3129 and src " + from + " )'");
  return static_cast<int>(std::count(out.begin(), out.end(), '\n'));
}

// The first node who-has lists that is not B: the peer B's helper names.
std::string FirstPeer(const std::vector<std::string>& nodes) {
  for (const std::string& n : nodes) {
    if (n != "B") return n;
  }
  return "";
}

class SquidRouting : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = SquidTestbed::SkipReason(); !why.empty()) GTEST_SKIP() << why;
  }
  void TearDown() override {
    squids_.Stop(/*keep_files=*/HasFailure());
    for (SquidTestbed& bed : plain_) bed.Stop(/*keep_files=*/HasFailure());
  }

  // Whether B's helper named `peer` for `url` (B's route log has its line).
  // Squid writes both logs' lines at once, access.log's first.
  bool RoutedTo(const std::string& url, const std::string& peer) const {
    squids_.Lines(kB, url, 1);
    const std::vector<std::string> routed =
        LinesWith(ReadText(squids_.routes_log(kB)), " " + peer + " ");
    return std::any_of(routed.begin(), routed.end(), [&](const std::string& line) {
      return line.size() >= url.size() &&
             line.compare(line.size() - url.size(), url.size(), url) == 0;
    });
  }

  AccessLine Only(int i, const std::string& url) const {
    const std::vector<std::string> lines = squids_.Lines(i, url, 1);
    AccessLine line;
    EXPECT_EQ(lines.size(), 1u) << ReadText(squids_.access_log(i));
    if (!lines.empty()) {
      EXPECT_TRUE(ParseAccessLine(lines.back(), &line)) << lines.back();
    }
    return line;
  }

  RoutedSquids squids_;
  SquidTestbed plain_[3];
};

TEST_F(SquidRouting, ShippedRecipeRoutesMissesAFalseHitCostsOneHopReconfiguresCostNothing) {
  ASSERT_EQ(squids_.Start(), "");
  SquidTestbed& a = squids_.bed(kA);
  SquidTestbed& b = squids_.bed(kB);
  Node* node_a = squids_.node(kA);
  Node* node_b = squids_.node(kB);

  // 1. A caches kHeld URLs for step 2 and more for the reconfigures (5) and the stopped daemon
  // (6); B's daemon learns that A holds every one (no false negatives).
  const int more = kReconfigures * (kWarm + kAfter) + 2;
  ASSERT_EQ(a.Run("fill " + a.addr() + " " + std::to_string(kHeld) + " held"), 0);
  ASSERT_EQ(a.Run("fill " + a.addr() + " " + std::to_string(more) + " more"), 0);
  const std::string origin = a.origin();
  std::vector<std::string> held, later;
  for (int i = 1; i <= kHeld; ++i) held.push_back(origin + "/held" + std::to_string(i) + ".html");
  for (int i = 1; i <= more; ++i) later.push_back(origin + "/more" + std::to_string(i) + ".html");
  std::vector<std::string> all = held;
  all.insert(all.end(), later.begin(), later.end());
  std::vector<std::vector<std::string>> answers;
  ASSERT_TRUE(WaitFor(
      [&] {
        answers = node_b->WhoHas(all);
        return std::all_of(answers.begin(), answers.end(), [](const auto& nodes) {
          return std::find(nodes.begin(), nodes.end(), "A") != nodes.end();
        });
      },
      kWaitDeadline))
      << node_b->log_tail();

  // 2. Each held URL is fetched through B from A. The helper names the first peer listed: A,
  // unless C's summary also claims the URL and is listed first (a false positive, about 1 % a
  // URL), or answers ERR when its daemon is slower than its bound (a loaded machine): more
  // than 5 of 20 either way is a failure.
  int via_a = 0;
  for (int i = 0; i < kHeld; ++i) {
    ASSERT_EQ(Fetch(b.addr(), held[i]), "200") << held[i];
    if (!RoutedTo(held[i], "cache-a")) continue;
    ++via_a;
    const AccessLine at_b = Only(kB, held[i]);
    EXPECT_EQ(at_b.hier, "FIRSTUP_PARENT") << held[i];
    EXPECT_EQ(at_b.host, a.addr()) << held[i];
    // A served it from its cache to B: two lines, the fill's miss and B's hit.
    const std::vector<std::string> at_a = squids_.Lines(kA, held[i], 2);
    ASSERT_EQ(at_a.size(), 2u) << ReadText(squids_.access_log(kA));
    AccessLine hit;
    ASSERT_TRUE(ParseAccessLine(at_a[1], &hit));
    EXPECT_EQ(hit.client, b.addr()) << at_a[1];
    EXPECT_TRUE(hit.local_hit()) << at_a[1];
  }
  EXPECT_GE(via_a, kHeld - 5);

  // 3. URLs no summary claims go direct: B fetches them from the origin, no peer sees them.
  std::vector<std::string> nobody;
  for (int i = 1; i <= kNobody; ++i) {
    nobody.push_back(origin + "/nobody" + std::to_string(i) + ".html");
  }
  const std::vector<std::vector<std::string>> unclaimed = node_b->WhoHas(nobody);
  int direct = 0;
  for (int i = 0; i < kNobody; ++i) {
    if (!unclaimed[i].empty()) continue;  // a false positive somewhere: step 4 covers those
    ++direct;
    ASSERT_EQ(Fetch(b.addr(), nobody[i]), "200");
    EXPECT_EQ(Only(kB, nobody[i]).hier, "HIER_DIRECT") << nobody[i];
    EXPECT_TRUE(LinesWith(ReadText(squids_.access_log(kA)), nobody[i]).empty());
    EXPECT_TRUE(LinesWith(ReadText(squids_.access_log(kC)), nobody[i]).empty());
  }
  EXPECT_GE(direct, kNobody - 5);

  // 4. A false hit: A's daemon claims a URL A's Squid does not hold. B routes it to A; A
  // resets the connection without a reply and without going to the origin (its one line:
  // no status, nothing fetched); B fetches it direct and serves it, and caches it: B's next
  // request for it is a local hit. The false hit cost one hop and nothing more.
  const std::string phantom = origin + "/phantom.html";
  ASSERT_TRUE(node_a->Add({phantom}));
  ASSERT_TRUE(WaitFor([&] { return node_b->WhoHas({phantom})[0] == std::vector<std::string>{"A"}; },
                      kWaitDeadline));
  ASSERT_EQ(Fetch(b.addr(), phantom), "200");
  const AccessLine phantom_at_a = Only(kA, phantom);
  EXPECT_EQ(phantom_at_a.client, b.addr());
  EXPECT_EQ(phantom_at_a.status, "000");
  EXPECT_EQ(phantom_at_a.hier, "HIER_NONE");
  const AccessLine phantom_at_b = Only(kB, phantom);
  EXPECT_EQ(phantom_at_b.status, "200");
  EXPECT_EQ(phantom_at_b.hier, "HIER_DIRECT");
  ASSERT_EQ(Fetch(b.addr(), phantom), "200");
  const std::vector<std::string> again = squids_.Lines(kB, phantom, 2);
  ASSERT_EQ(again.size(), 2u);
  AccessLine second;
  ASSERT_TRUE(ParseAccessLine(again[1], &second));
  EXPECT_TRUE(second.code == "TCP_HIT" || second.code == "TCP_MEM_HIT") << again[1];
  EXPECT_EQ(second.hier, "HIER_NONE") << again[1];
  EXPECT_EQ(LinesWith(ReadText(squids_.access_log(kA)), phantom).size(), 1u);

  // The outcomes reach B's daemon, which reads B's route log itself: via_a hits and one false
  // hit for A (the direct fetch after the reset, A being alive); the local hit was not routed.
  ASSERT_TRUE(
      WaitFor([&] { return LinesWith(ReadText(squids_.routes_log(kB)), phantom).size() == 2; },
              kWaitDeadline));
  // Squid writes the route log through a buffer: once the phantom's lines are there, every
  // held URL's line is too, and `routed_to_a` counts them all (via_a may have missed some
  // that were still buffered when it looked).
  int routed_to_a = 0;
  for (const std::string& url : held) routed_to_a += RoutedTo(url, "cache-a") ? 1 : 0;
  EXPECT_GE(routed_to_a, via_a);
  json for_a;
  const bool counted = WaitFor(
      [&] {
        const json routing = node_b->Stats()["routing"];
        for (const json& p : routing["peers"]) {
          if (p["node_id"] == "A") for_a = p;
        }
        return for_a.is_object() && for_a["hits"] == routed_to_a && for_a["false_hits"] == 1;
      },
      kWaitDeadline);
  ASSERT_TRUE(counted) << for_a.dump() << "\n"
                       << node_b->Stats()["routing"].dump() << "\n"
                       << ReadText(squids_.routes_log(kB));
  EXPECT_EQ(for_a["unreachable"], 0);
  EXPECT_EQ(for_a["routed"], routed_to_a + 1);
  // Squid's helper, run as proxy, asked over the who-has socket and says what it answered:
  // its report rides on a later lookup (at most one a second), so lookups go on meanwhile.
  json helper;
  int nudge = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        helper = node_b->Stats()["routing"]["helper"];
        if (helper.value("answered_peer", 0) >= routed_to_a + 1) return true;
        Fetch(b.addr(), origin + "/nudge" + std::to_string(++nudge) + ".html");
        return false;
      },
      kWaitDeadline))
      << helper.dump();
  EXPECT_EQ(helper["errors"], 0) << helper.dump();
  const json peers = node_b->Peers();
  json peer_a;
  for (const json& p : peers) {
    if (p["node_id"] == "A") peer_a = p;
  }
  EXPECT_EQ(peer_a["routing"]["false_hits"], 1) << peer_a.dump();

  // What a false hit costs: kLatency false hits against as many plain misses, interleaved.
  std::vector<std::string> phantoms, misses;
  for (int i = 1; i <= kLatency; ++i) {
    phantoms.push_back(origin + "/lat-false" + std::to_string(i) + ".html");
    misses.push_back(origin + "/lat-miss" + std::to_string(i) + ".html");
  }
  ASSERT_TRUE(node_a->Add(phantoms));
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto listed = node_b->WhoHas(phantoms);
        return std::all_of(listed.begin(), listed.end(),
                           [](const auto& nodes) { return FirstPeer(nodes) == "A"; });
      },
      kWaitDeadline));
  const std::vector<std::vector<std::string>> miss_claims = node_b->WhoHas(misses);
  std::vector<double> false_ms, miss_ms;
  for (int i = 0; i < kLatency; ++i) {
    double ms = 0;
    ASSERT_EQ(Fetch(b.addr(), phantoms[i], &ms), "200");
    false_ms.push_back(ms);
    if (!miss_claims[i].empty()) continue;
    ASSERT_EQ(Fetch(b.addr(), misses[i], &ms), "200");
    miss_ms.push_back(ms);
  }
  std::printf(
      "false hit: median %.2f ms (n=%zu); plain miss: median %.2f ms (n=%zu); "
      "extra %.2f ms\n",
      Median(false_ms), false_ms.size(), Median(miss_ms), miss_ms.size(),
      Median(false_ms) - Median(miss_ms));

  // 5. `squid -k reconfigure` of B with idle connections from B to A: the routed requests
  // that follow are answered 200, by A (Squid 5.7 may write them in origin form on a pooled
  // connection: A's cluster port takes that form too).
  size_t next = 0;
  for (int round = 1; round <= kReconfigures; ++round) {
    std::string warm = "true";
    for (int i = 0; i < kWarm; ++i) {
      warm += " & curl -s -o /dev/null --max-time 20 -x http://" + b.addr() + ":3128 '" +
              later[next++] + "'";
    }
    const ProcessResult warmed = RunShell("(" + warm + "; wait)");
    ASSERT_EQ(warmed.exit_code, 0) << warmed;
    ASSERT_TRUE(
        WaitFor([&] { return ConnectionsToPeerPort(b.addr(), a.addr()) >= 1; }, kWaitDeadline))
        << "no idle connection from B to A before reconfigure " << round;
    std::printf("reconfigure %d: %d idle connections from B to A:3129\n", round,
                ConnectionsToPeerPort(b.addr(), a.addr()));
    ASSERT_EQ(b.Run("reconfigure " + b.addr()), 0) << round;
    int routed = 0;
    for (int i = 0; i < kAfter; ++i) {
      const std::string& url = later[next++];
      EXPECT_EQ(Fetch(b.addr(), url), "200") << "after reconfigure " << round << ": " << url;
      if (!RoutedTo(url, "cache-a")) continue;
      ++routed;
      const AccessLine at_b = Only(kB, url);
      EXPECT_EQ(at_b.hier, "FIRSTUP_PARENT") << url;
      EXPECT_EQ(at_b.host, a.addr()) << url;
    }
    EXPECT_GE(routed, 1) << "nothing routed after reconfigure " << round;
  }
  EXPECT_TRUE(LinesWith(ReadText(squids_.access_log(kB)), "/400 ").empty())
      << ReadText(squids_.access_log(kB));

  // No ICP at all, on any Squid.
  for (int i : {kA, kB, kC}) {
    EXPECT_EQ(Counter(squids_.bed(i), "icp.pkts_sent"), "0") << squids_.bed(i).addr();
    EXPECT_EQ(Counter(squids_.bed(i), "icp.pkts_recv"), "0") << squids_.bed(i).addr();
  }

  // 6. B's daemon stops: B still answers every request, direct (the helper answers ERR
  // within its bound), URLs A holds included.
  ASSERT_TRUE(node_b->Stop());
  std::vector<std::string> after = {later[next], later[next + 1]};
  for (int i = 1; i <= 3; ++i) after.push_back(origin + "/after" + std::to_string(i) + ".html");
  for (const std::string& url : after) {
    ASSERT_EQ(Fetch(b.addr(), url), "200") << url;
    EXPECT_EQ(Only(kB, url).hier, "HIER_DIRECT") << url;
  }
}

// One request stream, replayed on the routed Squids and on three Squids without peers: a
// Zipf-like choice among kUrls URLs (fixed seed), sent to A, B and C in turn. Before the
// replay A's daemon claims some of the URLs A's Squid does not hold yet, so that B and C meet
// false hits. Every Squid keeps a copy of what it serves, fetched direct or from a peer, so
// routing adds remote hits and must never cost a local one: the local hit count with routing
// is at least the one without, and so is the hit count of the cluster. Also prints the share
// of peer-servable misses (another Squid had fetched the URL before) that were routed.
TEST_F(SquidRouting, HitRatioIsNeverBelowSquidsWithoutPeers) {
  constexpr int kUrls = 120, kRequests = 360;
  constexpr double kAlpha = 0.8;
  constexpr unsigned kSeed = 20001;
  std::printf("stream: %d requests over %d URLs, zipf alpha %.1f, seed %u\n", kRequests, kUrls,
              kAlpha, kSeed);
  ASSERT_EQ(squids_.Start(), "");
  const std::string origin = squids_.bed(kA).origin();
  for (int i = 0; i < 3; ++i) {
    SquidTestbedOptions o;
    o.name = std::string("plain-") + "abc"[i];
    o.shared_origin = origin;
    ASSERT_EQ(plain_[i].Start(o), "");
  }
  std::mt19937 rng(kSeed);
  std::vector<double> weights(kUrls);
  for (int u = 0; u < kUrls; ++u) weights[u] = 1.0 / std::pow(u + 1, kAlpha);
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  std::vector<std::string> stream;
  for (int r = 0; r < kRequests; ++r) {
    stream.push_back(origin + "/zipf" + std::to_string(pick(rng)) + ".html");
  }

  // Phantoms: every sixth URL, claimed by A's daemon before anyone fetched it.
  std::vector<std::string> phantoms;
  for (int u = 3; u < kUrls; u += 6)
    phantoms.push_back(origin + "/zipf" + std::to_string(u) + ".html");
  ASSERT_TRUE(squids_.node(kA)->Add(phantoms));
  for (int i : {kB, kC}) {
    ASSERT_TRUE(WaitFor(
        [&] {
          const auto listed = squids_.node(i)->WhoHas(phantoms);
          return std::all_of(listed.begin(), listed.end(), [](const auto& nodes) {
            return std::find(nodes.begin(), nodes.end(), "A") != nodes.end();
          });
        },
        kWaitDeadline));
  }

  struct Tally {
    int local = 0, remote = 0, direct = 0;
  };
  auto replay = [&](const std::array<std::string, 3>& proxies,
                    const std::array<std::string, 3>& logs) {
    std::vector<std::unique_ptr<httplib::Client>> clients;
    for (const std::string& p : proxies) {
      clients.push_back(std::make_unique<httplib::Client>(p, 3128));
      clients.back()->set_keep_alive(true);
      clients.back()->set_read_timeout(20);
    }
    int bad = 0;
    for (int r = 0; r < kRequests; ++r) {
      const httplib::Result res = clients[r % 3]->Get(stream[r]);
      bad += !res || res->status != 200;
    }
    EXPECT_EQ(bad, 0);
    Tally t;
    std::vector<AccessLine> lines;
    WaitFor(
        [&] {
          lines.clear();
          for (const std::string& log : logs) {
            for (const std::string& text : LinesWith(ReadText(log), "/zipf")) {
              AccessLine line;
              if (ParseAccessLine(text, &line) && line.client == "127.0.0.1") lines.push_back(line);
            }
          }
          return lines.size() >= static_cast<size_t>(kRequests);
        },
        kWaitDeadline);
    EXPECT_EQ(lines.size(), static_cast<size_t>(kRequests));
    for (const AccessLine& line : lines) {
      if (line.local_hit()) {
        ++t.local;
      } else if (line.hier == "HIER_DIRECT") {
        ++t.direct;
      } else {
        ++t.remote;
      }
    }
    return t;
  };
  std::array<std::string, 3> routed_proxies, routed_logs, plain_proxies, plain_logs;
  for (int i = 0; i < 3; ++i) {
    routed_proxies[i] = squids_.bed(i).addr();
    routed_logs[i] = squids_.access_log(i);
    plain_proxies[i] = plain_[i].addr();
    plain_logs[i] = plain_[i].root() + "/" + plain_[i].addr() + "/logs/access.log";
  }
  const Tally routed = replay(routed_proxies, routed_logs);
  const Tally plain = replay(plain_proxies, plain_logs);

  // Misses another Squid could have served: its URL was fetched before by another Squid and
  // not yet by this one (the caches never evict here).
  std::set<std::pair<int, std::string>> seen;
  std::set<std::string> anywhere;
  int servable = 0;
  for (int r = 0; r < kRequests; ++r) {
    if (!seen.count({r % 3, stream[r]}) && anywhere.count(stream[r])) ++servable;
    seen.insert({r % 3, stream[r]});
    anywhere.insert(stream[r]);
  }
  int false_hits = 0;
  for (int i = 0; i < 3; ++i) {
    false_hits +=
        static_cast<int>(LinesWith(ReadText(squids_.routes_log(i)), " HIER_DIRECT/").size());
  }
  std::printf("without peers: %d local hits (%.1f %%)\n", plain.local,
              100.0 * plain.local / kRequests);
  std::printf(
      "routed: %d local + %d remote hits (%.1f %%), %d direct, %d false hits; "
      "%d of %d peer-servable misses routed (%.1f %%)\n",
      routed.local, routed.remote, 100.0 * (routed.local + routed.remote) / kRequests,
      routed.direct, false_hits, routed.remote, servable,
      servable ? 100.0 * routed.remote / servable : 0.0);
  EXPECT_GE(routed.local, plain.local);
  EXPECT_GE(routed.local + routed.remote, plain.local);
  EXPECT_GE(false_hits, 1) << "the stream met no false hit: the check above proved nothing";
}

// The shipped example is the template rendered for node-b of the three-node loopback cluster:
// they cannot drift apart.
TEST(SquidRoutingConf, ShippedExampleIsTheRenderedTemplate) {
  const std::string rendered = Slurp(PEERBLOOM_SOURCE_DIR
                                     "/scripts/peerbloom-squid-routing --self 127.0.0.12 "
                                     "cache-a=127.0.0.11 cache-c=127.0.0.13");
  EXPECT_EQ(rendered, ReadText(PEERBLOOM_SOURCE_DIR "/configs/squid/peerbloom-routing.conf"));
}

TEST(SquidRoutingConf, RefusesWhatSquidWouldMisread) {
  const std::string script = PEERBLOOM_SOURCE_DIR "/scripts/peerbloom-squid-routing";
  auto errors = [&](const std::string& args) {
    return Slurp(script + " " + args + " 2>&1 >/dev/null");
  };
  const std::string prefix = "peerbloom-squid-routing: error: ";
  EXPECT_EQ(errors("cache-a=127.0.0.11"), prefix + "--self ADDR is required\n");
  EXPECT_EQ(errors("--self 127.0.0.12"), prefix + "no peer given (NAME=ADDR)\n");
  EXPECT_EQ(errors("--self 127.0.0.12 cache-a=127.0.0.256"),
            prefix + "peer address '127.0.0.256' is not an IPv4 or IPv6 address\n");
  EXPECT_EQ(errors("--self 127.0.0.12 cache-a=127.0.0.12"),
            prefix + "peer 'cache-a' has this node's own address '127.0.0.12'\n");
  EXPECT_EQ(errors("--self 127.0.0.12 'cache a=127.0.0.11'"),
            prefix + "peer name 'cache a' is not 1-50 characters of [A-Za-z0-9._-]\n");
  EXPECT_EQ(errors("--self 127.0.0.12 --config etc/p.toml cache-a=127.0.0.11"),
            prefix + "--config 'etc/p.toml' is not an absolute path\n");
}

}  // namespace
}  // namespace peerbloom::testing
