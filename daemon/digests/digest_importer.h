// DigestImporter: the daemon's `[[squid_digest]]` sources. A DigestFetcher fetches them on its
// worker thread; Poll, called every pass of the loop, hands every accepted digest to
// GossipEngine::ImportDigest, which names it "squid:HOST:PORT" and gossips it (docs/squid.md,
// "Importing digests of Squid nodes without peerbloomd").
//
// Thread-safety: none (the loop's thread). Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_DIGESTS_DIGEST_IMPORTER_H_
#define PEERBLOOM_DAEMON_DIGESTS_DIGEST_IMPORTER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/digests/digest_fetcher.h"
#include "daemon/observe/log_limiter.h"
#include "peerbloom/gossip.h"

namespace peerbloom::daemon {

class DigestImporter {
 public:
  // REQUIRES: `engine` outlives this.
  explicit DigestImporter(GossipEngine* engine) : engine_(engine) {}
  DigestImporter(const DigestImporter&) = delete;
  DigestImporter& operator=(const DigestImporter&) = delete;

  // Takes the sources and refresh bounds of `config`; no fetcher without sources.
  Status Start(const Config& config);
  // SIGHUP: withdraws the imports of sources `fresh` no longer lists; restarts the fetcher
  // (every source fetched again) only when the sources or the bounds changed.
  void Reload(const Config& fresh, int64_t now);
  // Collects finished fetches and imports them; refusals are counted and logged (limited).
  void Poll(int64_t now);
  // The fetcher's next deadline; INT64_MAX without sources.
  int64_t NextDeadline(int64_t now) const;

  const DigestFetcher* fetcher() const { return fetcher_.get(); }  // null without sources
  uint64_t applied() const { return applied_; }
  uint64_t refused() const { return refused_; }

 private:
  GossipEngine* engine_;
  std::vector<SquidDigestConfig> sources_;
  int64_t min_refresh_ms_ = 0;
  int64_t max_refresh_ms_ = 0;
  std::unique_ptr<DigestFetcher> fetcher_;
  LogLimiter log_;
  uint64_t applied_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_DIGESTS_DIGEST_IMPORTER_H_
