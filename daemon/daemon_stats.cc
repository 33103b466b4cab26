// The `stats` and `peers` answers: every counter the daemon keeps, grouped by part
// (docs/operations.md lists them with their meaning).
#include "daemon/daemon.h"

namespace peerbloom::daemon {
namespace {

nlohmann::json RebuildJson(const RebuildStats& r) {
  return {{"running", r.running},
          {"started", r.started},
          {"finished", r.finished},
          {"failed", r.failed},
          {"held", r.held},
          {"journal", r.journal},
          {"added", r.added},
          {"removed", r.removed},
          {"duration_ms", r.duration_ms},
          {"trigger", r.trigger},
          {"last_error", r.last_error}};
}

}  // namespace

nlohmann::json Daemon::Stats(int64_t now) const {
  const CountingBloomFilter& f = store_->filter();
  const Summary& summary = store_->builder()->current();
  const GossipStats& g = engine_->stats();
  const TransportStats& t = transport_->stats();
  nlohmann::json feeds = nlohmann::json::array();
  for (const auto& feed : feeds_) {
    const FeedStats& s = feed->stats();
    const FileFollowerStats& fs = feed->follower_stats();
    nlohmann::json store_log = nullptr;
    if (const StoreLogState* st = feed->store_log()) {
      const StoreLogCounters& c = st->counters();
      store_log = {
          {"live_keys", st->live().size()},         {"duplicate_swapouts", c.duplicate_swapouts},
          {"unknown_releases", c.unknown_releases}, {"swapout_failures", c.swapout_failures},
          {"other_actions", c.other_actions},       {"internal", c.internal}};
    }
    feeds.push_back({{"path", feed->config().path},
                     {"format", feed->config().format},
                     {"store_log", store_log},
                     {"fifo", feed->is_fifo()},
                     {"open", feed->is_open()},
                     {"offset", feed->position().offset},
                     {"lag_bytes", feed->unread_bytes()},
                     {"lines", s.lines},
                     {"adds", s.adds},
                     {"removes", s.removes},
                     {"removes_refused", s.removes_refused},
                     {"malformed", s.malformed},
                     {"bytes", fs.bytes},
                     {"long_lines_skipped", fs.long_lines_skipped},
                     {"opens", fs.opens},
                     {"rotations", fs.rotations},
                     {"truncations", fs.truncations},
                     {"resumes", fs.resumes},
                     {"resume_mismatches", fs.resume_mismatches},
                     {"resumes_rotated", fs.resumes_rotated},
                     {"resumes_lost", fs.resumes_lost},
                     {"resume_lost", feed->resume_lost()},
                     {"rotated_files_read", fs.rotated_files_read},
                     {"dropped_partial_lines", fs.dropped_partial_lines},
                     {"rebuild", RebuildJson(feed->rebuild_stats())},
                     {"read_errors", fs.read_errors}});
  }
  size_t alive = 0, known = 0;
  for (const PeerInfo& p : engine_->Peers(now)) {
    ++known;
    alive += p.alive ? 1 : 0;
  }
  return {
      {"node_id", config_.node_id},
      {"endpoint", advertise_},
      {"uptime_ms", now - start_ms_},
      {"filter",
       {{"k", f.k()},
        {"log2_counters", f.log2_counters()},
        {"counters", f.counters()},
        {"bytes", f.bytes()},
        {"items", f.items()},
        {"capacity", config_.capacity},
        {"profile", std::string(ProfileName(config_.profile))},
        {"key_scheme", std::string(KeySchemeName(config_.key_scheme))},
        {"saturated_counters", f.saturated_counters()},
        {"saturation_events", f.saturation_events()},
        {"refused_removes", f.refused_removes()},
        {"adds", store_->stats().adds},
        {"removes", store_->stats().removes}}},
      {"summary",
       {{"epoch", summary.epoch},
        {"version", summary.version},
        {"k", summary.filter.k()},
        {"log2_bits", summary.filter.log2_bits()},
        {"set_bits", summary.filter.PopCount()},
        {"estimated_fpr", summary.filter.EstimatedFpr()},
        {"pending", store_->builder()->pending()},
        {"published_full", publish_stats_.full},
        {"published_deltas", publish_stats_.deltas},
        {"published_immediately", publish_stats_.immediate},
        {"deltas_refused_by_engine", publish_stats_.refused_deltas}}},
      {"gossip",
       {{"members_known", known},
        {"members_alive", alive},
        {"messages_in", g.messages_in},
        {"messages_out", g.messages_out},
        {"bytes_in", g.bytes_in},
        {"bytes_out", g.bytes_out},
        {"malformed_in", g.malformed_in},
        {"full_summaries_in", g.full_summaries_in},
        {"full_summaries_out", g.full_summaries_out},
        {"deltas_in", g.deltas_in},
        {"deltas_out", g.deltas_out},
        {"deltas_relayed", g.deltas_relayed},
        {"digests_in", g.digests_in},
        {"digests_out", g.digests_out},
        {"requests_in", g.requests_in},
        {"resyncs_requested", g.resyncs_requested},
        {"stale_dropped", g.stale_dropped},
        {"queue_dropped", g.queue_dropped},
        {"queue_dropped_bytes", g.queue_dropped_bytes},
        {"members_refused", g.members_refused},
        {"local_publish_refused", g.local_publish_refused}}},
      {"transport",
       {{"curve", config_.curve},
        {"messages_in", t.messages_in},
        {"bytes_in", t.bytes_in},
        {"messages_out", t.messages_out},
        {"bytes_out", t.bytes_out},
        {"send_dropped", t.send_dropped},
        {"send_no_key", t.send_no_key},
        {"refused_frames", t.refused_frames},
        {"refused_by_gossip", t.refused_by_gossip},
        {"zap_allowed", t.zap_allowed},
        {"zap_denied", t.zap_denied},
        {"links_accepted", t.links_accepted},
        {"links_disconnected", t.links_disconnected},
        {"handshakes_failed", t.handshakes_failed},
        {"links_open", t.links_open}}},
      {"control",
       {{"requests", control_->stats().requests},
        {"errors", control_->stats().errors},
        {"malformed", control_->stats().malformed},
        {"internal_errors", control_->stats().internal_errors}}},
      {"snapshot",
       {{"path", snapshot_path_},
        {"restored", snapshot_stats_.restored},
        {"written", snapshot_stats_.written},
        {"failed", snapshot_stats_.failed},
        {"last_duration_ms", snapshot_stats_.last_duration_ms},
        {"last_unix_ms", snapshot_stats_.last_unix_ms}}},
      {"feeds", feeds},
      {"squid_digests", DigestStats(now)},
      {"reloads", reloads_},
  };
}

nlohmann::json Daemon::PeersJson(int64_t now) const {
  nlohmann::json peers = nlohmann::json::array();
  for (const PeerInfo& p : engine_->Peers(now)) {
    peers.push_back(
        {{"node_id", p.node_id},
         {"endpoint", p.endpoint},
         {"public_key", p.public_key},
         {"alive", p.alive},
         {"neighbour", p.neighbour},
         {"chosen", p.chosen},
         {"imported", p.imported},
         {"epoch", p.epoch},
         {"summary_epoch", p.summary_epoch},
         {"version", p.version},
         {"heartbeat", p.heartbeat},
         {"estimated_items", p.estimated_items},
         {"k", p.k},
         {"log2_bits", p.log2_bits},
         {"last_heard_ms_ago", now - p.last_heard_ms},
         {"summary_age_ms", p.summary_received_ms > 0 ? now - p.summary_received_ms : -1}});
  }
  return peers;
}

}  // namespace peerbloom::daemon
