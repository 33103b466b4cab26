// Squid's own store keys for URLs spelled many ways: each spelling is requested through a
// real Squid (scripts/squid-testbed.sh, Debian's 5.7), the key of its SWAPOUT line in
// store.log is read back, and the squid-md5 key peerbloom computes for the same spelling
// (KeyEncoder::FromUrl, which canonicalizes) must equal it. URLs Squid refuses must be
// refused by CanonicalSquidUrl too.
//
// With PEERBLOOM_SQUID_KEYS_OUT=FILE the (settings, spelling, canonical URL, key) rows are
// appended to FILE: that is how tests/data/squid/canonical_keys.tsv was recorded (its README
// says how). Skipped where Squid is not installed or cannot be started (not root).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "peerbloom/key_scheme.h"
#include "peerbloom/squid_url.h"
#include "tests/support/squid_testbed.h"
#include "tests/support/wait.h"
#include "tests/unit/squid/canonical_keys_tsv.h"

namespace peerbloom {
namespace {

using Clock = std::chrono::steady_clock;

// One request. `marker` (unique to the object, "zNN") is part of the URL Squid logs, so the
// SWAPOUT line of this request is told apart from any other. `status` is what Squid answers:
// 200 for a URL it fetches and stores, or its error for one it refuses.
struct Case {
  std::string spelling;  // "{P}" and "{P6}" become the origin's ports on 127.0.0.1 and [::1]
  std::string marker;
  int status = 200;
};

// The first line of Squid's answer to "GET <target> HTTP/1.0", or "" on a socket error or
// after 20 s.
std::string Request(const std::string& addr, int port, const std::string& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr);
  std::string reply;
  const std::string request = "GET " + target + " HTTP/1.0\r\n\r\n";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    char buf[4096];
    for (;;) {  // HTTP/1.0: the answer ends when Squid closes
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return reply.substr(0, reply.find("\r\n"));
}

class SquidCanonicalUrl : public ::testing::Test {
 protected:
  // Starts a bed whose hosts_file names its own address alpha.lab, with the
  // origin also on that address's port 80 and on [::1].
  void StartBed(const std::string& settings_conf, const SquidUrlOptions& options,
                const std::string& settings_name) {
    if (const std::string why = testing::SquidTestbed::SkipReason(); !why.empty())
      GTEST_SKIP() << why;
    testing::SquidTestbedOptions o;
    o.name = "squidurl";
    // strip_query_terms off: store.log shows queries, where some markers are.
    o.squid_conf_extra = "strip_query_terms off\n" + settings_conf;
    o.origin_listen = "@ADDR@:80 [::1]:0";
    o.hosts = "@ADDR@ alpha.lab\n";
    const std::string failed = bed_.Start(o);
    ASSERT_TRUE(failed.empty()) << failed;
    const std::vector<std::string> origins = bed_.Origins();
    ASSERT_EQ(origins.size(), 3u) << "the origin should answer on 127.0.0.1, :80 and [::1]";
    port_ = origins[0].substr(origins[0].rfind(':') + 1);
    port6_ = origins[2].substr(origins[2].rfind(':') + 1);
    options_ = options;
    settings_name_ = settings_name;
  }
  void TearDown() override { bed_.Stop(/*keep_files=*/HasFailure()); }

  std::string Expand(std::string spelling) const {
    for (auto [from, to] : {std::pair<std::string, std::string>{"{P6}", port6_}, {"{P}", port_}}) {
      for (size_t at; (at = spelling.find(from)) != std::string::npos;) {
        spelling.replace(at, from.size(), to);
      }
    }
    return spelling;
  }

  // Polls store.log until a SWAPOUT line that mentions `marker` with a key not seen before
  // appears; returns its key, or "" after 20 s.
  std::string NewSwapoutKey(const std::string& marker) {
    const std::string path = bed_.root() + "/" + bed_.addr() + "/logs/store.log";
    std::string found;
    testing::WaitFor([&] { return !(found = FirstNewSwapoutKey(path, marker)).empty(); },
                     std::chrono::seconds(20));
    return found;
  }

  // The key of the first SWAPOUT line of `path` that mentions `marker` with a key not seen
  // before (it is seen from now on), or "".
  std::string FirstNewSwapoutKey(const std::string& path, const std::string& marker) {
    std::ifstream in(path, std::ios::binary);
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string time, action, dir, file, key;
      fields >> time >> action >> dir >> file >> key;
      if (action == "SWAPOUT" && line.find(marker) != std::string::npos &&
          seen_keys_.insert(key).second) {
        return key;
      }
    }
    return "";
  }

  void Check(const std::vector<Case>& cases) {
    KeyEncoder encoder(KeyScheme::kSquidMd5, options_);
    for (const Case& c : cases) {
      const std::string spelling = Expand(c.spelling);
      SCOPED_TRACE("spelling '" + spelling + "'");
      const std::string status_line = Request(bed_.addr(), 3128, spelling);
      ASSERT_EQ(status_line.substr(0, 13), "HTTP/1.1 " + std::to_string(c.status) + " ")
          << status_line;
      std::string canonical;
      const Status s = CanonicalSquidUrl(spelling, options_, &canonical);
      if (c.status != 200) {
        EXPECT_TRUE(s.IsInvalidArgument())
            << "squid refused it, peerbloom made '" << canonical << "' of it";
        Record(spelling, "-", "status=" + std::to_string(c.status));
        continue;
      }
      ASSERT_TRUE(s.ok()) << s.ToString();
      const std::string squid_key = NewSwapoutKey(c.marker);
      ASSERT_FALSE(squid_key.empty()) << "no new SWAPOUT line mentions '" << c.marker << "'";
      SquidKey ours;
      const std::string_view bytes = encoder.FromUrl(spelling);
      std::copy(bytes.begin(), bytes.end(), ours.begin());
      EXPECT_EQ(SquidKeyHex(ours), squid_key) << "canonical '" << canonical << "'";
      Record(spelling, canonical, squid_key);
    }
  }

  void Record(const std::string& spelling, const std::string& canonical, const std::string& key) {
    const char* out = std::getenv("PEERBLOOM_SQUID_KEYS_OUT");
    if (out == nullptr) return;
    std::ofstream(out, std::ios::app) << squid_keys_tsv::FormatRow(
        {settings_name_, spelling, canonical == "-" ? "-" : canonical, key});
  }

  testing::SquidTestbed bed_;
  SquidUrlOptions options_;
  std::string settings_name_, port_, port6_;
  std::set<std::string> seen_keys_;
};

TEST_F(SquidCanonicalUrl, DefaultSettings) {
  StartBed("", {}, "default");
  Check({
      {"http://alpha.lab/z01", "z01"},
      {"HTTP://ALPHA.LAB/z02/MiXed", "z02"},  // upper-case scheme and host, path kept
      {"http://alpha.lab:80/z03", "z03"},     // explicit default port
      {"http://alpha.lab:0080/z04", "z04"},
      {"http://alpha.lab:80abc/z05", "z05"},         // atoi()
      {"http://alpha.lab:4294967376/z06", "z06"},    // 2^32 + 80
      {"http://127.0.0.1:{P}/z07", "z07"},           // non-default port
      {"http://Alpha.Lab.:80/z08", "z08"},           // trailing dot
      {"http://alpha.lab.../z09", "z09"},            // trailing dots
      {"http://[::1]:{P6}/z10", "z10"},              // IPv6 literal
      {"http://[0:0:0:0:0:0:0:1]:{P6}/z11", "z11"},  // re-rendered
      {"http://[::FFFF:127.0.0.1]:{P}/z12", "z12"},  // IPv4-mapped prints as IPv4
      {"http://2130706433:{P}/z13", "z13"},          // inet_aton forms
      {"http://0x7f.1:{P}/z14", "z14"},
      {"http://0177.0.0.1:{P}/z15", "z15"},
      {"http://alpha.lab/z16?b=2&a=1", "z16"},  // query
      {"http://alpha.lab?z17=1", "z17"},        // query right after the host
      {"http://alpha.lab#z18", "z18"},          // fragment right after the host
      {"http://alpha.lab/z19#frag", "z19"},     // fragment
      {"http://alpha.lab/z20?q#f", "z20"},
      {"http://alpha.lab/z21/%7e", "z21"},  // escapes keep their case: two objects
      {"http://alpha.lab/z21/%7E", "z21"},
      {"http://alpha.lab/z22/%41%2f", "z22"},
      {"http://alpha.lab/z23/caf\xc3\xa9?q=\xc3\xa9", "z23"},  // raw UTF-8
      {"http://alpha.lab/z24/a b", "z24"},                     // spaces: stripped
      {"http://alpha.lab/z25/a\tb  c", "z25"},
      {"http://alpha.lab /z26", "z26"},  // whitespace ends the host
      {"http://user:pw@alpha.lab/z27", "z27"},
      {"http://u@ALPHA.lab:80/z28", "z28"},
      // Refused by Squid with 400 (and by CanonicalSquidUrl).
      {"http://a..lab/z90", "z90", 400},
      {"http://.alpha.lab/z91", "z91", 400},
      {"http://alpha.lab:0/z92", "z92", 400},
      {"http://alpha.lab:65536/z93", "z93", 400},
      {"http://alpha.lab:/z94", "z94", 400},
      {"http:/alpha.lab/z95", "z95", 400},
      {"http://[]/z96", "z96", 400},
      {"gopher://alpha.lab/z97", "z97", 400},  // unknown scheme without a port
      // Squid accepts an empty host, then has no server to ask: it can store nothing.
      {"http://:80/z98", "z98", 503},
  });
}

TEST_F(SquidCanonicalUrl, EncodeWhitespaceAndAppendDomain) {
  SquidUrlOptions o;
  o.uri_whitespace = UriWhitespace::kEncode;
  o.append_domain = ".lab";
  StartBed("uri_whitespace encode\nappend_domain .lab", o,
           "uri_whitespace=encode append_domain=.lab");
  Check({
      {"http://alpha/z30", "z30"},  // completed to alpha.lab
      {"http://ALPHA:80/z31", "z31"},
      // ("http://alpha./x" stays "alpha", as the unit test checks, but cannot be fetched here:
      // Squid applies append_domain to hosts_file names too, so it knows no "alpha".)
      {"http://alpha.lab/z33/a b~\xc3\xa9#f", "z33"},  // whitespace: the whole path escaped
      {"http://alpha.lab/z34/a~\xc3\xa9#f", "z34"},    // no whitespace: kept
  });
}

TEST_F(SquidCanonicalUrl, ChopWhitespace) {
  SquidUrlOptions o;
  o.uri_whitespace = UriWhitespace::kChop;
  StartBed("uri_whitespace chop", o, "uri_whitespace=chop");
  Check({
      {"http://alpha.lab/z40/a b?c", "z40"},
      {"http://alpha.lab/z41\tb", "z41"},
  });
}

}  // namespace
}  // namespace peerbloom
