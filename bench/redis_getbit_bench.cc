// A Bloom filter held in Redis as a bit string, probed with GETBIT: the baseline that
// bench/control_bench.sh prints beside peerbloom's who-has. Speaks RESP over one plain TCP
// connection, no client library.
//
// Usage: redis_getbit_bench HOST PORT PREFIX KEYS SINGLE PIPELINE [PHASES]
//   PHASES is a comma-separated subset of load,single,pipelined (default all three):
//   - load: sets a bit string of 2^24 bits with the k = 7 probes of KEYS URLs PREFIX0,
//     PREFIX1, ... (positions from peerbloom's IndexHasher, as a filter would place them);
//   - single: SINGLE unpipelined GETBIT round trips (one probe of URL i each): p50, p99,
//     p99.9 in us;
//   - pipelined: all 7 probes of KEYS URLs with PIPELINE commands in flight: GETBITs/s, and
//     from it keys/s for one k = 7 filter and for 16 per-peer filters (7 x 16 probes a key).
// Prints one "name value" line per figure.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "peerbloom/hash.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned kK = 7;
constexpr uint64_t kBits = uint64_t{1} << 24;

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

std::string Command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) Die("send");
    sent += static_cast<size_t>(n);
  }
}

// Reads until `replies` replies of one line each (":0\r\n", "+OK\r\n") have arrived.
void ReadReplies(int fd, size_t replies, std::string* buffer) {
  size_t seen = 0;
  size_t scanned = 0;
  buffer->clear();
  char chunk[65536];
  while (seen < replies) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n <= 0) Die("read");
    buffer->append(chunk, static_cast<size_t>(n));
    for (; scanned < buffer->size(); ++scanned) seen += (*buffer)[scanned] == '\n';
  }
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// Whether the comma-separated `phases` names `name`.
bool HasPhase(const std::string& phases, const char* name) {
  return ("," + phases + ",").find("," + std::string(name) + ",") != std::string::npos;
}

// A TCP connection to Redis at host:port, Nagle off; exits on failure.
int Connect(const char* host, const char* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Die("socket");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
  if (::inet_pton(AF_INET, host, &addr.sin_addr) != 1) Die("inet_pton");
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Die("connect");
  return fd;
}

// The kK bit positions of each URL prefix0, prefix1, ..., as a filter would place them.
std::vector<uint64_t> Positions(const std::string& prefix, size_t keys) {
  const peerbloom::IndexHasher hasher;
  std::vector<uint64_t> positions;  // kK per key
  positions.reserve(keys * kK);
  for (size_t i = 0; i < keys; ++i) {
    const peerbloom::KeyHash h = hasher.Hash(prefix + std::to_string(i));
    for (unsigned j = 0; j < kK; ++j) positions.push_back((h.h1 + j * h.h2) % kBits);
  }
  return positions;
}

// Replaces the bit string with one holding every position, `pipeline` SETBITs at a time.
void Load(int fd, const std::vector<uint64_t>& positions, size_t pipeline, std::string* replies) {
  SendAll(fd, Command({"DEL", "bench:bits"}));
  ReadReplies(fd, 1, replies);
  for (size_t start = 0; start < positions.size(); start += pipeline) {
    const size_t end = std::min(positions.size(), start + pipeline);
    std::string batch;
    for (size_t p = start; p < end; ++p) {
      batch += Command({"SETBIT", "bench:bits", std::to_string(positions[p]), "1"});
    }
    SendAll(fd, batch);
    ReadReplies(fd, end - start, replies);
  }
}

// `single` unpipelined GETBIT round trips, one probe of URL i each, in microseconds.
std::vector<double> TimeSingle(int fd, const std::vector<uint64_t>& positions, size_t keys,
                               size_t single, std::string* replies) {
  std::vector<double> micros;
  micros.reserve(single);
  for (size_t i = 0; i < single; ++i) {
    const std::string cmd =
        Command({"GETBIT", "bench:bits", std::to_string(positions[(i % keys) * kK])});
    const auto t0 = Clock::now();
    SendAll(fd, cmd);
    ReadReplies(fd, 1, replies);
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return micros;
}

// GETBITs of every position, `pipeline` commands to a batch.
std::vector<std::string> GetbitBatches(const std::vector<uint64_t>& positions, size_t pipeline) {
  std::vector<std::string> batches;
  for (size_t start = 0; start < positions.size(); start += pipeline) {
    const size_t end = std::min(positions.size(), start + pipeline);
    std::string batch;
    for (size_t p = start; p < end; ++p) {
      batch += Command({"GETBIT", "bench:bits", std::to_string(positions[p])});
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

// Sends the batches one after another, each after the last one's replies; returns seconds
// and counts the bits found set.
double TimePipelined(int fd, const std::vector<std::string>& batches, size_t pipeline,
                     size_t probes, std::string* replies, size_t* ones) {
  const auto t0 = Clock::now();
  for (size_t b = 0; b < batches.size(); ++b) {
    SendAll(fd, batches[b]);
    ReadReplies(fd, std::min(pipeline, probes - b * pipeline), replies);
    *ones += static_cast<size_t>(std::count(replies->begin(), replies->end(), '1'));
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void PrintSingle(const std::vector<double>& micros) {
  std::printf("redis_single_p50_us %.1f\n", Percentile(micros, 0.5));
  std::printf("redis_single_p99_us %.1f\n", Percentile(micros, 0.99));
  std::printf("redis_single_p999_us %.1f\n", Percentile(micros, 0.999));
}

void PrintPipelined(size_t probes, double seconds, size_t ones) {
  const double bits_per_s = static_cast<double>(probes) / seconds;
  std::printf("redis_pipelined_getbits_per_s %.0f\n", bits_per_s);
  std::printf("redis_keys_per_s_one_filter %.0f\n", bits_per_s / kK);
  std::printf("redis_keys_per_s_16_filters %.0f\n", bits_per_s / (kK * 16));
  std::printf("redis_bits_set_of_probed %zu/%zu\n", ones, probes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) {
    std::fprintf(stderr, "usage: %s HOST PORT PREFIX KEYS SINGLE PIPELINE [PHASES]\n", argv[0]);
    return 2;
  }
  const std::string phases = argc == 8 ? argv[7] : "load,single,pipelined";
  const std::string prefix = argv[3];
  const size_t keys = std::strtoull(argv[4], nullptr, 10);
  const size_t single = std::strtoull(argv[5], nullptr, 10);
  const size_t pipeline = std::max<size_t>(1, std::strtoull(argv[6], nullptr, 10));

  const int fd = Connect(argv[1], argv[2]);
  const std::vector<uint64_t> positions = Positions(prefix, keys);
  std::string replies;
  if (HasPhase(phases, "load")) Load(fd, positions, pipeline, &replies);
  std::vector<double> micros;
  if (HasPhase(phases, "single")) micros = TimeSingle(fd, positions, keys, single, &replies);
  // The commands are encoded before the clock starts: what is timed is Redis and the socket.
  std::vector<std::string> batches;
  if (HasPhase(phases, "pipelined")) batches = GetbitBatches(positions, pipeline);
  size_t ones = 0;
  const double seconds = TimePipelined(fd, batches, pipeline, positions.size(), &replies, &ones);
  ::close(fd);

  if (!micros.empty()) PrintSingle(micros);
  if (!batches.empty()) PrintPipelined(positions.size(), seconds, ones);
  return 0;
}
