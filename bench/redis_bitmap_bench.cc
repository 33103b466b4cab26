// The shared-Redis-bitmap design of who-has, measured for comparison with peerbloom's control
// endpoint: each node's Bloom filter is a Redis string, and a lookup is k GETBITs per key per
// filter. Speaks RESP over one TCP connection itself (no client library); redis-server is
// started and stopped by bench/redis_bitmap_bench.sh.
//
// Filters: m = OptimalBits(1e6, 1 %) bits (9.59 bits per key), k = 7, positions from the
// same SipHash-1-3-128 double hashing as peerbloom's filters (mod m). One filter "bf:all"
// holds the URLs http://bench.example/0 .. KEYS-1 (the keys bench/control_bench.sh adds to
// its daemon); 16 per-peer filters "bf:peer:P" of the same size hold the URLs i with
// i mod 16 = P. The bitmaps are built here and uploaded with one SET each.
//
// Timed, in this order:
//   getbit_rtt          one GETBIT per round trip, unpipelined: p50, p99, p99.9 (us)
//   single_1            one key's k GETBITs for the one filter, sent together: p50/p99/p99.9
//   single_16           one key's 16 x k GETBITs for the 16 filters, sent together
//   pipelined           runs of 1000 keys' GETBITs written at once, then all replies read:
//                       GETBITs/s, and keys/s for one filter and for 16 filters (median run)
// A pipelined lookup sends all k bits of every filter: no round trip to learn that a bit
// is 0. Exits 1 if a key a filter holds reads as absent (the replies are checked).
//
// Output: one tab-separated row per figure: row NAME VALUE UNIT
// Usage: redis_bitmap_bench PORT [KEYS] [SINGLE_REQUESTS]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/params.h"

namespace peerbloom {
namespace {

constexpr unsigned kK = 7;
constexpr int kPeers = 16;
constexpr uint64_t kRunKeys = 1000;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "redis_bitmap_bench: error: %s\n", what.c_str());
  std::exit(1);
}

// A RESP connection: commands are appended to a buffer and sent with Flush; replies are
// read one at a time.
class Resp {
 public:
  explicit Resp(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      Fail("cannot connect to 127.0.0.1:'" + std::to_string(port) + "'");
    }
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~Resp() { close(fd_); }
  Resp(const Resp&) = delete;
  Resp& operator=(const Resp&) = delete;

  void Command(std::initializer_list<std::string_view> args) {
    out_ += '*' + std::to_string(args.size()) + "\r\n";
    for (std::string_view a : args) {
      out_ += '$' + std::to_string(a.size()) + "\r\n";
      out_.append(a);
      out_ += "\r\n";
    }
  }
  void Flush() {
    size_t at = 0;
    while (at < out_.size()) {
      const ssize_t n = write(fd_, out_.data() + at, out_.size() - at);
      if (n <= 0) Fail("write to redis failed");
      at += static_cast<size_t>(n);
    }
    out_.clear();
  }
  // The next reply's first line (":1", "+OK", "-ERR ..."); bulk payloads are not expected.
  std::string_view ReadLine() {
    for (;;) {
      const size_t eol = in_.find("\r\n", pos_);
      if (eol != std::string::npos) {
        std::string_view line(in_.data() + pos_, eol - pos_);
        pos_ = eol + 2;
        return line;
      }
      in_.erase(0, pos_);
      pos_ = 0;
      char buf[65536];
      const ssize_t n = read(fd_, buf, sizeof(buf));
      if (n <= 0) Fail("redis closed the connection");
      in_.append(buf, static_cast<size_t>(n));
    }
  }
  int ReadInt() {
    const std::string_view line = ReadLine();
    if (line.size() != 2 || line[0] != ':') Fail("unexpected reply '" + std::string(line) + "'");
    return line[1] - '0';
  }
  void ExpectOk() {
    const std::string_view line = ReadLine();
    if (line != "+OK") Fail("unexpected reply '" + std::string(line) + "'");
  }

 private:
  int fd_;
  std::string out_;
  std::string in_;
  size_t pos_ = 0;
};

std::string Url(uint64_t i) { return "http://bench.example/" + std::to_string(i); }

struct Positions {
  uint64_t at[kK];
};

Positions PositionsOf(const IndexHasher& hasher, uint64_t m, uint64_t i) {
  const KeyHash h = hasher.Hash(Url(i));
  Positions p;
  for (unsigned j = 0; j < kK; ++j) p.at[j] = (h.h1 % m + j * ((h.h2 | 1) % m)) % m;
  return p;
}

// Redis numbers the bits of a string from the most significant bit of byte 0.
void SetBit(std::string* bitmap, uint64_t pos) {
  (*bitmap)[pos / 8] = static_cast<char>((*bitmap)[pos / 8] | (0x80 >> (pos % 8)));
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

void Row(const char* name, double value, const char* unit) {
  std::printf("row\t%s\t%.3f\t%s\n", name, value, unit);
  std::fflush(stdout);
}

void RowQuantiles(const char* name, const std::vector<double>& us) {
  const std::string base(name);
  Row((base + "_p50").c_str(), Quantile(us, 0.5), "us");
  Row((base + "_p99").c_str(), Quantile(us, 0.99), "us");
  Row((base + "_p999").c_str(), Quantile(us, 0.999), "us");
}

struct Setup {
  uint64_t keys;
  uint64_t m;
  std::vector<Positions> positions;  // of URL i
};

void Upload(Resp& r, const Setup& s) {
  std::string all((s.m + 7) / 8, '\0');
  std::vector<std::string> peers(kPeers, all);
  for (uint64_t i = 0; i < s.keys; ++i) {
    for (uint64_t p : s.positions[i].at) {
      SetBit(&all, p);
      SetBit(&peers[i % kPeers], p);
    }
  }
  r.Command({"SET", "bf:all", all});
  for (int p = 0; p < kPeers; ++p) r.Command({"SET", "bf:peer:" + std::to_string(p), peers[p]});
  r.Flush();
  for (int p = 0; p <= kPeers; ++p) r.ExpectOk();
}

// Queues the GETBITs of key i: the one filter, or all 16.
void QueueKey(Resp& r, const Setup& s, uint64_t i, bool sixteen) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int p = 0; p < kPeers; ++p) v.push_back("bf:peer:" + std::to_string(p));
    return v;
  }();
  for (int f = 0; f < (sixteen ? kPeers : 1); ++f) {
    for (uint64_t pos : s.positions[i].at) {
      r.Command({"GETBIT", sixteen ? names[f] : "bf:all", std::to_string(pos)});
    }
  }
}

// Reads key i's replies; fails on a false negative.
void ReadKey(Resp& r, uint64_t i, bool sixteen) {
  for (int f = 0; f < (sixteen ? kPeers : 1); ++f) {
    int all = 1;
    for (unsigned j = 0; j < kK; ++j) all &= r.ReadInt();
    const bool holds = !sixteen || static_cast<uint64_t>(f) == i % kPeers;
    if (holds && all == 0) Fail("false negative for '" + Url(i) + "'");
  }
}

std::vector<double> TimeSingles(Resp& r, const Setup& s, int requests, bool sixteen) {
  std::vector<double> us;
  for (int q = 0; q < requests; ++q) {
    const uint64_t i = static_cast<uint64_t>(q) * 7919 % s.keys;
    const double t0 = NowUs();
    QueueKey(r, s, i, sixteen);
    r.Flush();
    ReadKey(r, i, sixteen);
    us.push_back(NowUs() - t0);
  }
  return us;
}

// Median keys/s over runs of kRunKeys keys covering `total` keys.
double TimePipelined(Resp& r, const Setup& s, uint64_t total, bool sixteen) {
  std::vector<double> rates;
  for (uint64_t start = 0; start + kRunKeys <= total; start += kRunKeys) {
    const double t0 = NowUs();
    for (uint64_t i = start; i < start + kRunKeys; ++i) QueueKey(r, s, i % s.keys, sixteen);
    r.Flush();
    for (uint64_t i = start; i < start + kRunKeys; ++i) ReadKey(r, i % s.keys, sixteen);
    rates.push_back(static_cast<double>(kRunKeys) / ((NowUs() - t0) / 1e6));
  }
  return Quantile(rates, 0.5);
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: redis_bitmap_bench PORT [KEYS] [SINGLE_REQUESTS]\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  Setup s;
  s.keys = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  const int singles = argc > 3 ? std::atoi(argv[3]) : 20000;
  if (s.keys < kRunKeys || singles < 1000) Fail("need KEYS >= 1000 and SINGLE_REQUESTS >= 1000");
  s.m = OptimalBits(1e6, 0.01);
  const IndexHasher hasher(DeriveIndexKey("redis bitmap bench"));
  s.positions.reserve(s.keys);
  for (uint64_t i = 0; i < s.keys; ++i) s.positions.push_back(PositionsOf(hasher, s.m, i));
  Resp r(port);
  Upload(r, s);
  Row("filter_bits", static_cast<double>(s.m), "bits");
  Row("k", kK, "");
  std::vector<double> rtt;
  for (int q = 0; q < singles; ++q) {
    const double t0 = NowUs();
    r.Command({"GETBIT", "bf:all", std::to_string(s.positions[q % s.keys].at[0])});
    r.Flush();
    if (r.ReadInt() != 1) Fail("a set bit reads as 0");
    rtt.push_back(NowUs() - t0);
  }
  RowQuantiles("getbit_rtt", rtt);
  RowQuantiles("single_1", TimeSingles(r, s, singles / 4, false));
  RowQuantiles("single_16", TimeSingles(r, s, singles / 16, true));
  const double one = TimePipelined(r, s, std::min<uint64_t>(s.keys, 200000), false);
  const double sixteen = TimePipelined(r, s, std::min<uint64_t>(s.keys, 20000), true);
  Row("pipelined_getbits_per_s_1", one * kK, "1/s");
  Row("pipelined_keys_per_s_1", one, "1/s");
  Row("pipelined_getbits_per_s_16", sixteen * kK * kPeers, "1/s");
  Row("pipelined_keys_per_s_16", sixteen, "1/s");
  return 0;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) { return peerbloom::Main(argc, argv); }
