// Lines in, filter changes out. A malformed line is counted and logged at a limited rate;
// the reasons quote the line's bytes escaped (peerbloom/escape.h), so a line that is not UTF-8
// or holds control bytes cannot garble the log.
#include "daemon/feeds/feed.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <thread>

#include "peerbloom/escape.h"
#include "peerbloom/feed.h"
#include "peerbloom/squid_cache_dir.h"
#include "peerbloom/squid_store_log.h"

namespace peerbloom::daemon {
namespace {

// Journal entries kept while a rebuild reads the cache_dirs: 17 bytes each, 136 MiB at most.
// A busy Squid logs a few thousand events a second, so this covers hours of reading.
constexpr size_t kMaxRebuildJournal = size_t{1} << 23;

FileFollowerOptions FollowerOptions(const FeedConfig& config) {
  FileFollowerOptions o;
  o.max_line_bytes = kMaxFeedLineBytes;
  o.start_at_end = config.start_at_end;
  return o;
}

}  // namespace

// A message that quotes feed bytes should have escaped them (peerbloom/escape.h); one that
// still holds control bytes or bytes that are not UTF-8 is escaped whole, so a feed line can
// never write terminal controls or fake lines into the log.
std::string LogSafe(const std::string& message) {
  bool safe = IsValidUtf8(message);
  for (size_t i = 0; safe && i < message.size(); ++i) {
    const auto c = static_cast<unsigned char>(message[i]);
    const auto next = i + 1 < message.size() ? static_cast<unsigned char>(message[i + 1]) : 0;
    safe = c >= 0x20 && c != 0x7f && !(c == 0xc2 && next >= 0x80 && next <= 0x9f);  // C0, C1
  }
  return safe ? message : EscapeBytes(message);
}

Feed::Feed(FeedConfig config, const SipKey& seed)
    : config_(std::move(config)), follower_(config_.path, FollowerOptions(config_)) {
  if (config_.format == "squid-store-log") store_log_ = std::make_unique<StoreLogState>(seed);
}

// The worker thread's part: it writes `keys` and `status`, then sets `done`; the loop reads
// them only after seeing `done`.
struct Feed::RebuildJob {
  std::vector<std::string> dirs;
  std::vector<SquidKey> keys;
  Status status;
  std::string summary;
  std::atomic<bool> done{false};

  void Run() {
    for (const std::string& dir : dirs) {
      std::vector<CacheDirKey> found;
      CacheDirReport report;
      status = ReadSquidCacheDir(dir, CacheDirOptions(), &found, &report);
      if (!status.ok()) break;
      for (const CacheDirKey& k : found) keys.push_back(k.key);
      summary += (summary.empty() ? "" : ", ") +
                 ("'" + dir + "': " + std::to_string(found.size()) + " objects");
    }
    done.store(true, std::memory_order_release);
  }
};

Status Feed::StartRebuild(std::vector<std::string> cache_dirs, const std::string& trigger,
                          int64_t now_ms) {
  if (store_log_ == nullptr) {
    return Status::InvalidArgument("feed '" + config_.path + "' is not a squid-store-log feed");
  }
  if (rebuild_ != nullptr) {
    return Status::InvalidArgument("a rebuild of feed '" + config_.path + "' is running");
  }
  if (cache_dirs.empty()) cache_dirs = config_.cache_dirs;
  if (cache_dirs.empty()) {
    return Status::InvalidArgument("feed '" + config_.path + "' has no cache_dirs to rebuild from");
  }
  // The journal starts before the worker reads anything: see StoreLogState::FinishRebuild.
  store_log_->StartJournal(kMaxRebuildJournal);
  rebuild_ = std::make_shared<RebuildJob>();
  rebuild_->dirs = std::move(cache_dirs);
  rebuild_started_ms_ = now_ms;
  ++rebuild_stats_.started;
  rebuild_stats_.running = true;
  rebuild_stats_.trigger = trigger;
  spdlog::info("feed '{}': rebuilding the live set from {} cache_dir(s) ({})", config_.path,
               rebuild_->dirs.size(), trigger);
  // Detached: the job is shared, so a daemon that stops first leaves it to finish alone.
  std::thread([job = rebuild_] { job->Run(); }).detach();
  return Status::Ok();
}

void Feed::FinishRebuild(LocalStore* store, int64_t now_ms) {
  std::shared_ptr<RebuildJob> job = std::move(rebuild_);
  rebuild_stats_.running = false;
  rebuild_stats_.duration_ms = now_ms - rebuild_started_ms_;
  Status s = job->status;
  if (s.ok() && store_log_->journal_overflowed()) {
    s = Status::ResourceExhausted("more than '" + std::to_string(kMaxRebuildJournal) +
                                  "' store.log events arrived while the cache_dirs were read");
  }
  if (!s.ok()) {
    store_log_->AbandonJournal();
    ++rebuild_stats_.failed;
    rebuild_stats_.last_error = s.message();
    spdlog::error("feed '{}': rebuild failed: {}", config_.path, s.message());
    return;
  }
  const StoreLogRebuild r = store_log_->FinishRebuild(job->keys);
  for (const SquidKey& k : r.added) store->Add(SquidKeyBytes(k));
  for (const SquidKey& k : r.removed) {
    if (!store->Remove(SquidKeyBytes(k))) ++stats_.removes_refused;
  }
  ++rebuild_stats_.finished;
  rebuild_stats_.last_error.clear();
  rebuild_stats_.held = r.held;
  rebuild_stats_.journal = r.journal;
  rebuild_stats_.added = r.added.size();
  rebuild_stats_.removed = r.removed.size();
  spdlog::info(
      "feed '{}': live set rebuilt from {} ({} keys held, {} events replayed): {} added, {} "
      "removed, {} live, in {} ms",
      config_.path, job->summary, r.held, r.journal, r.added.size(), r.removed.size(),
      store_log_->live().size(), rebuild_stats_.duration_ms);
}

Status Feed::Restore(const FeedPosition& p, size_t max_keys) {
  if (store_log_ != nullptr && !p.state.empty()) {
    Status s = store_log_->DecodeFrom(p.state, max_keys);
    if (!s.ok()) {
      return Status::Corruption("feed '" + config_.path + "': saved live keys: " + s.message());
    }
  }
  follower_.ResumeFrom({p.device, p.inode, p.offset, p.fingerprint_bytes, p.fingerprint,
                        p.head_bytes, p.head_fingerprint, p.mtime_ns});
  restored_ = true;
  return Status::Ok();
}

FeedPosition Feed::position() const {
  const FollowerPosition p = follower_.position();
  FeedPosition out{
      config_.path, p.device,           p.inode,    p.offset, p.fingerprint_bytes, p.fingerprint,
      p.head_bytes, p.head_fingerprint, p.mtime_ns, ""};
  if (store_log_ != nullptr) store_log_->EncodeTo(&out.state);
  return out;
}

bool Feed::Poll(LocalStore* store, int64_t now_ms) {
  bool more = false;
  if (first_poll_) {
    first_poll_ = false;
    // Without a saved position the live set knows only what the current store.log says,
    // not what older, rotated logs said: ask the cache.
    if (!restored_ && !config_.cache_dirs.empty() && store_log_ != nullptr) {
      (void)StartRebuild({}, "no saved position", now_ms);
    }
  }
  if (rebuild_ != nullptr && rebuild_->done.load(std::memory_order_acquire)) {
    FinishRebuild(store, now_ms);
  }
  Status s = follower_.Poll(&lines_, &more);
  ReportResume(now_ms);
  if (!s.ok()) {
    uint64_t suppressed = 0;
    if (io_log_.Allow(now_ms, &suppressed))
      spdlog::error("feed '{}': {}", config_.path, s.message());
    return false;
  }
  for (const std::string& line : lines_) {
    // A line is bytes from outside: one that makes parsing throw is malformed like any other,
    // and the feed goes on with the next.
    try {
      if (store_log_ != nullptr) {
        ApplyStoreLogLine(line, store, now_ms);
      } else {
        ApplyLine(line, store, now_ms);
      }
    } catch (const std::exception& e) {
      Malformed(Status::Corruption("internal error: " + EscapeBytes(e.what())), now_ms);
    }
  }
  return more;
}

// A resume happens once per open of the path; each outcome is logged once.
void Feed::ReportResume(int64_t now_ms) {
  const FileFollowerStats& fs = follower_.stats();
  if (fs.resumes_lost != reported_.resumes_lost) {
    if (!config_.cache_dirs.empty() && store_log_ != nullptr && rebuild_ == nullptr) {
      spdlog::error("feed '{}': {}", config_.path, follower_.last_resume_lost());
      (void)StartRebuild({}, "saved position lost", now_ms);
    } else {
      spdlog::error(
          "feed '{}': {}; to rebuild the live set from what the cache holds, see "
          "docs/squid.md, \"Rebuilding the live set\"",
          config_.path, follower_.last_resume_lost());
    }
  } else if (fs.resumes_rotated != reported_.resumes_rotated) {
    // Logged after the poll that resumed, which may have read the queued files already.
    spdlog::info(
        "feed '{}': {}, then {} newer rotated file(s) and the file at the path from its start",
        config_.path, follower_.last_resume_mismatch(), follower_.last_resume_newer_files());
  }
  reported_ = fs;
}

void Feed::Malformed(const Status& why, int64_t now_ms) {
  ++stats_.malformed;
  uint64_t suppressed = 0;
  if (log_.Allow(now_ms, &suppressed)) {
    spdlog::warn("feed '{}': line {}: {} ({} similar lines suppressed)", config_.path, stats_.lines,
                 LogSafe(why.message()), suppressed);
  }
}

void Feed::ApplyStoreLogLine(std::string_view line, LocalStore* store, int64_t now_ms) {
  ++stats_.lines;
  SquidKey key;
  Status error;
  switch (store_log_->ApplyLine(line, &key, &error)) {
    case StoreLogDecision::kAdd:
      store->Add(SquidKeyBytes(key));
      ++stats_.adds;
      break;
    case StoreLogDecision::kRemove:
      if (store->Remove(SquidKeyBytes(key))) {
        ++stats_.removes;
      } else {
        ++stats_.removes_refused;
      }
      break;
    case StoreLogDecision::kMalformed:
      Malformed(error, now_ms);
      break;
    case StoreLogDecision::kIgnore:
      break;
  }
}

void Feed::ApplyLine(std::string_view line, LocalStore* store, int64_t now_ms) {
  ++stats_.lines;
  FeedLine parsed;
  Status s = ParseFeedLine(line, store->options().key_scheme, &parsed);
  if (s.ok() && parsed.op != FeedOp::kNone) {
    s = FeedLineKeyBytes(parsed, store->encoder(), &key_bytes_);
  }
  if (!s.ok()) {
    Malformed(s, now_ms);
    return;
  }
  if (parsed.op == FeedOp::kAdd) {
    store->Add(key_bytes_);
    ++stats_.adds;
  } else if (parsed.op == FeedOp::kRemove) {
    if (store->Remove(key_bytes_)) {
      ++stats_.removes;
    } else {
      ++stats_.removes_refused;
    }
  }
}

}  // namespace peerbloom::daemon
