// DigestFetcher: the schedule of Squid Cache Digest fetches (due times, Expires, backoff) and
// the worker thread that runs them through HttpGet (http_client.h). See digest_fetcher.h for
// the contract.
#include "daemon/digests/digest_fetcher.h"

#include <algorithm>
#include <utility>

#include "peerbloom/squid_digest.h"

namespace peerbloom::daemon {
namespace {

std::string SourceName(const DigestSource& s) { return s.host + ":" + std::to_string(s.port); }

std::string SourceUrl(const DigestSource& s) {
  return "http://" + SourceName(s) + kStoreDigestPath;
}

Status Positive(std::string_view field, int64_t v) {
  if (v > 0) return Status::Ok();
  return Status::InvalidArgument("squid digest option '" + std::string(field) +
                                 "' must be positive, not '" + std::to_string(v) + "'");
}

Status ValidateSource(const DigestSource& s) {
  const bool bad_host = s.host.empty() || std::any_of(s.host.begin(), s.host.end(), [](char c) {
                          return c <= 0x20 || c >= 0x7f || c == ':' || c == '/';
                        });
  if (bad_host || s.port == 0 || !IsValidNodeId(ImportedNodeId(SourceName(s))) ||
      !IsValidEndpoint(SourceUrl(s))) {
    return Status::InvalidArgument("invalid squid digest source '" + SourceName(s) + "'");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateDigestFetcherOptions(const DigestFetcherOptions& o) {
  for (size_t i = 0; i < o.sources.size(); ++i) {
    PEERBLOOM_RETURN_IF_ERROR(ValidateSource(o.sources[i]));
    for (size_t j = 0; j < i; ++j) {
      if (SourceName(o.sources[j]) == SourceName(o.sources[i])) {
        return Status::InvalidArgument("duplicate squid digest source '" +
                                       SourceName(o.sources[i]) + "'");
      }
    }
  }
  PEERBLOOM_RETURN_IF_ERROR(Positive("connect_timeout_ms", o.connect_timeout_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("read_timeout_ms", o.read_timeout_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("total_timeout_ms", o.total_timeout_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("min_refresh_ms", o.min_refresh_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("initial_backoff_ms", o.initial_backoff_ms));
  if (o.default_refresh_ms < o.min_refresh_ms || o.default_refresh_ms > o.max_refresh_ms) {
    return Status::InvalidArgument(
        "squid digest refresh must satisfy min <= default <= max, not '" +
        std::to_string(o.min_refresh_ms) + "' <= '" + std::to_string(o.default_refresh_ms) +
        "' <= '" + std::to_string(o.max_refresh_ms) + "'");
  }
  if (o.max_backoff_ms < o.initial_backoff_ms) {
    return Status::InvalidArgument("squid digest option 'max_backoff_ms' is below the initial");
  }
  if (o.max_body_bytes < kCacheDigestHeaderBytes || o.max_body_bytes > kMaxImportedDigestBytes) {
    return Status::InvalidArgument("squid digest option 'max_body_bytes' must be in [" +
                                   std::to_string(kCacheDigestHeaderBytes) + ", " +
                                   std::to_string(kMaxImportedDigestBytes) + "]");
  }
  return Status::Ok();
}

DigestFetcher::DigestFetcher(DigestFetcherOptions options) : opt_(std::move(options)) {
  for (const DigestSource& s : opt_.sources) {
    DigestSourceStats st;
    st.source = SourceName(s);
    st.url = SourceUrl(s);
    stats_.push_back(std::move(st));
  }
  worker_ = std::thread([this] { Run(); });
}

DigestFetcher::~DigestFetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::vector<DigestFetchResult> DigestFetcher::Poll(int64_t now_ms, int64_t now_unix_ms) {
  std::deque<Outcome> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done.swap(outcomes_);
  }
  std::vector<DigestFetchResult> out;
  for (Outcome& o : done) Finish(std::move(o), now_ms, now_unix_ms, &out);
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < stats_.size(); ++i) {
      DigestSourceStats& st = stats_[i];
      if (st.in_flight || (st.fetches > 0 && now_ms < st.next_fetch_ms)) continue;
      st.in_flight = true;
      jobs_.push_back(i);
      ++busy_;
      queued = true;
    }
  }
  if (queued) cv_.notify_all();
  return out;
}

int64_t DigestFetcher::NextDeadline(int64_t now_ms) const {
  int64_t next = INT64_MAX;
  for (const DigestSourceStats& st : stats_) {
    if (st.in_flight) {
      next = std::min(next, now_ms + kResultPollMs);
    } else {
      next = std::min(next, st.fetches == 0 ? now_ms : st.next_fetch_ms);
    }
  }
  return next;
}

std::vector<DigestSourceStats> DigestFetcher::Stats(int64_t now_ms) const {
  std::vector<DigestSourceStats> out = stats_;
  for (DigestSourceStats& st : out) {
    st.age_ms = st.last_success_ms < 0 ? -1 : now_ms - st.last_success_ms;
  }
  return out;
}

bool DigestFetcher::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return busy_ == 0; });
}

void DigestFetcher::Run() {
  for (;;) {
    size_t source = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      source = jobs_.front();
      jobs_.pop_front();
    }
    Outcome o = Fetch(source);
    {
      std::lock_guard<std::mutex> lock(mu_);
      outcomes_.push_back(std::move(o));
      --busy_;
    }
    cv_.notify_all();
  }
}

DigestFetcher::Outcome DigestFetcher::Fetch(size_t source) {
  Outcome o;
  o.source = source;
  HttpGetLimits limits;
  limits.connect_timeout_ms = opt_.connect_timeout_ms;
  limits.read_timeout_ms = opt_.read_timeout_ms;
  limits.total_timeout_ms = opt_.total_timeout_ms;
  limits.max_body_bytes = opt_.max_body_bytes;
  const DigestSource& s = opt_.sources[source];
  HttpRequest req;
  req.host = s.host;
  req.port = s.port;
  req.path = kStoreDigestPath;
  req.accept = "application/cache-digest";
  HttpResponse res;
  const Status st = HttpGet(req, limits, stop_, &res);
  if (!st.ok()) {
    o.error = st.message();
    return o;
  }
  o.status = res.status;
  if (res.status != 200) o.error = "http status '" + std::to_string(res.status) + "'";
  o.date = std::move(res.date);
  o.expires = std::move(res.expires);
  o.body = std::move(res.body);
  return o;
}

void DigestFetcher::Finish(Outcome o, int64_t now_ms, int64_t now_unix_ms,
                           std::vector<DigestFetchResult>* out) {
  if (!o.error.empty()) return Fail(o.source, std::move(o.error), now_ms);
  CacheDigest digest;
  const Status s = CacheDigest::Parse(o.body, &digest);
  if (!s.ok()) return Fail(o.source, "digest refused: " + s.message(), now_ms);
  const int64_t refresh = RefreshAfter(o, now_unix_ms);
  DigestSourceStats& st = stats_[o.source];
  st.in_flight = false;
  ++st.fetches;
  st.last_fetch_ms = now_ms;
  st.last_success_ms = now_ms;
  st.next_fetch_ms = now_ms + refresh;
  st.consecutive_failures = 0;
  st.last_error.clear();
  st.bytes += o.body.size();
  st.digest_bytes = o.body.size();
  st.capacity = digest.header().capacity;
  st.count = digest.header().count;
  st.fill = digest.fill();
  st.estimated_fpr = digest.EstimatedFalsePositiveRate();
  st.valid_for_ms = refresh;
  DigestFetchResult r;
  r.source_index = o.source;
  r.import.source = st.source;
  r.import.source_url = st.url;
  r.import.digest_bytes = std::move(o.body);
  r.import.valid_for_ms = refresh;
  r.import.fetched_unix_ms = static_cast<uint64_t>(std::max<int64_t>(now_unix_ms, 0));
  out->push_back(std::move(r));
}

void DigestFetcher::Fail(size_t source, std::string error, int64_t now_ms) {
  DigestSourceStats& st = stats_[source];
  st.in_flight = false;
  ++st.fetches;
  ++st.failures;
  ++st.consecutive_failures;
  st.last_fetch_ms = now_ms;
  st.last_error = std::move(error);
  int64_t backoff = opt_.initial_backoff_ms;
  for (uint64_t i = 1; i < st.consecutive_failures && backoff < opt_.max_backoff_ms; ++i) {
    backoff *= 2;
  }
  st.next_fetch_ms = now_ms + std::min(backoff, opt_.max_backoff_ms);
}

// Expires is read against the response's own Date, so the Squid node's clock skew does not
// matter; without a Date, against this host's wall clock. A digest that is already expired
// when served (Squid hands out its stored digest until the next rewrite lands) means a newer
// one is due any moment: ask again after min_refresh_ms rather than default_refresh_ms.
int64_t DigestFetcher::RefreshAfter(const Outcome& o, int64_t now_unix_ms) const {
  const std::optional<int64_t> expires = ParseHttpDate(o.expires);
  const int64_t reference = ParseHttpDate(o.date).value_or(now_unix_ms);
  if (!expires) return opt_.default_refresh_ms;
  if (*expires <= reference) return opt_.min_refresh_ms;
  return std::clamp(*expires - reference, opt_.min_refresh_ms, opt_.max_refresh_ms);
}

}  // namespace peerbloom::daemon
