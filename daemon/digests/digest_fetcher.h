// DigestFetcher: fetches the Cache Digest of Squid nodes that run no peerbloomd, for
// GossipEngine::ImportDigest (docs/gossip.md, "Imported digests").
//
// Per source (host:port) it GETs http://HOST:PORT/squid-internal-periodic/store_digest,
// checks the body with the Squid decoder and schedules the next fetch at the digest's Expires
// (clamped to [min_refresh_ms, max_refresh_ms]; default_refresh_ms when Expires is absent or
// unparsable; min_refresh_ms when it is not after the response's Date: a new digest is due). A
// failure (connect, timeout, HTTP status other than 200, body over max_body_bytes, digest refused)
// retries after initial_backoff_ms, doubling per consecutive failure up to max_backoff_ms.
//
// Threads: one worker thread runs the blocking HTTP requests (HttpGet, http_client.h),
// one at a time, so the event loop never blocks on a Squid node and keeps serving who-has.
// The loop hands due sources to it and collects results in Poll(); each source has at most
// one fetch queued or running, so the hand-over queues hold at most sources.size() entries
// (bounded by construction). A fetch lasts at most connect_timeout_ms + total_timeout_ms, which
// also bounds the destructor's wait. Scheduling uses the times passed to Poll (the loop's clock);
// only the HTTP timeouts run on real time.
//
// Thread-safety: Poll, NextDeadline, Stats and WaitIdle from one thread (the loop).
// Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_DIGESTS_DIGEST_FETCHER_H_
#define PEERBLOOM_DAEMON_DIGESTS_DIGEST_FETCHER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/digests/http_client.h"
#include "peerbloom/gossip.h"
#include "peerbloom/status.h"
#include "peerbloom/wire.h"

namespace peerbloom::daemon {

inline constexpr char kStoreDigestPath[] = "/squid-internal-periodic/store_digest";

// One `[[squid_digest]]` entry.
struct DigestSource {
  std::string host;  // name or address of the Squid node
  uint16_t port = 3128;
};

struct DigestFetcherOptions {
  std::vector<DigestSource> sources;
  // Default: 2000. TCP connect timeout per fetch.
  int64_t connect_timeout_ms = 2000;
  // Default: 5000. Longest wait for any read; a fetch also ends after total_timeout_ms.
  int64_t read_timeout_ms = 5000;
  // Default: 10000. Whole response (headers and body), so a trickling server cannot hold the
  // worker.
  int64_t total_timeout_ms = 10000;
  // Default: 3600000 (1 h). Next fetch when the response has no usable Expires.
  int64_t default_refresh_ms = 3600000;
  // Default: 60000 and 21600000 (6 h). Bounds of the Expires-driven refresh.
  int64_t min_refresh_ms = 60000;
  int64_t max_refresh_ms = 21600000;
  // Default: 5000, doubling per consecutive failure up to max_backoff_ms (default 300000).
  int64_t initial_backoff_ms = 5000;
  int64_t max_backoff_ms = 300000;
  // Default: kMaxImportedDigestBytes (16 MiB), what gossip carries. Larger bodies are refused.
  size_t max_body_bytes = kMaxImportedDigestBytes;
};

// InvalidArgument naming the first bad field, Ok otherwise. The constructor REQUIRES it.
Status ValidateDigestFetcherOptions(const DigestFetcherOptions& options);

// A fetch whose digest the Squid decoder accepted, ready for GossipEngine::ImportDigest.
struct DigestFetchResult {
  size_t source_index = 0;
  DigestImport import;  // source "host:port", url, bytes, valid_for_ms, fetched_unix_ms
};

struct DigestSourceStats {
  std::string source;  // "host:port"
  std::string url;
  int64_t last_fetch_ms = -1;    // loop time the last fetch finished; -1: none yet
  int64_t last_success_ms = -1;  // loop time of the last accepted digest; -1: none yet
  int64_t next_fetch_ms = 0;
  bool in_flight = false;
  uint64_t fetches = 0;
  uint64_t failures = 0;
  uint64_t consecutive_failures = 0;
  uint64_t bytes = 0;      // body bytes of accepted digests, summed
  std::string last_error;  // empty after a success
  // Of the last accepted digest:
  uint64_t digest_bytes = 0;
  uint32_t capacity = 0;
  uint32_t count = 0;
  double fill = 0.0;
  double estimated_fpr = 0.0;
  int64_t valid_for_ms = 0;
  int64_t age_ms = -1;  // now minus last_success_ms; -1: none yet
};

class DigestFetcher {
 public:
  explicit DigestFetcher(DigestFetcherOptions options);
  ~DigestFetcher();
  DigestFetcher(const DigestFetcher&) = delete;
  DigestFetcher& operator=(const DigestFetcher&) = delete;

  // Hands every source whose fetch is due to the worker and returns the fetches that
  // succeeded since the last call; failures only show in Stats(). `now_ms` is the loop's
  // monotonic clock, `now_unix_ms` the wall clock (recorded as the fetch time and used for
  // Expires when the response has no Date). Every source is due at the first call.
  std::vector<DigestFetchResult> Poll(int64_t now_ms, int64_t now_unix_ms);
  // When Poll next has work: the earliest scheduled fetch, or now_ms + result_poll_ms while a
  // fetch is in flight (the worker cannot wake the loop's zmq::poll).
  int64_t NextDeadline(int64_t now_ms) const;
  std::vector<DigestSourceStats> Stats(int64_t now_ms) const;
  // Waits until no fetch is queued or running, at most `timeout`; true when idle (tests).
  bool WaitIdle(std::chrono::milliseconds timeout);

  static constexpr int64_t kResultPollMs = 100;

 private:
  struct Outcome {
    size_t source = 0;
    int status = 0;  // HTTP status, 0 when no response
    std::string error;
    std::string body;
    std::string date;
    std::string expires;
  };

  void Run();
  Outcome Fetch(size_t source);
  void Finish(Outcome outcome, int64_t now_ms, int64_t now_unix_ms,
              std::vector<DigestFetchResult>* out);
  void Fail(size_t source, std::string error, int64_t now_ms);
  int64_t RefreshAfter(const Outcome& o, int64_t now_unix_ms) const;

  const DigestFetcherOptions opt_;
  std::vector<DigestSourceStats> stats_;  // loop thread only

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> jobs_;        // guarded by mu_
  std::deque<Outcome> outcomes_;   // guarded by mu_
  size_t busy_ = 0;                // queued or running, guarded by mu_
  std::atomic<bool> stop_{false};  // also read by a running fetch, to end it early
  std::thread worker_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_DIGESTS_DIGEST_FETCHER_H_
