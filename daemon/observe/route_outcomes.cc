#include "daemon/observe/route_outcomes.h"

#include <algorithm>

namespace peerbloom::daemon {
namespace {

// Counts saturate: a report may carry any count.
uint64_t Plus(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void Add(RouteOutcome outcome, uint64_t count, RouteCounts* c) {
  c->routed = Plus(c->routed, count);
  switch (outcome) {
    case RouteOutcome::kHit:
      c->hits = Plus(c->hits, count);
      break;
    case RouteOutcome::kFalseHit:
      c->false_hits = Plus(c->false_hits, count);
      break;
    case RouteOutcome::kUnreachable:
      c->unreachable = Plus(c->unreachable, count);
      break;
  }
}

}  // namespace

void RouteOutcomes::Report(std::string_view node, RouteOutcome outcome, uint64_t count,
                           bool known) {
  ++reports_;
  Add(outcome, count, &total_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) {
    if (!known || nodes_.size() >= kMaxNodes) {
      untracked_ = Plus(untracked_, count);
      return;
    }
    it = nodes_.emplace(std::string(node), RouteCounts{}).first;
  }
  Add(outcome, count, &it->second);
}

void RouteOutcomes::Direct(std::string_view node, int64_t at_ms) {
  if (pending_.size() >= kMaxPending) {
    Report(pending_.front().node, RouteOutcome::kFalseHit, 1);
    pending_.pop_front();
  }
  pending_.push_back({std::string(node), at_ms});
}

// Requests are held in arrival order, but a peer heard from settles its requests whatever
// their place: one pass over what is held, which is at most a failure timeout of misses.
void RouteOutcomes::Settle(
    int64_t now_ms, int64_t failure_timeout_ms,
    const std::function<std::optional<int64_t>(std::string_view)>& last_heard) {
  std::deque<Pending> kept;
  for (Pending& p : pending_) {
    const std::optional<int64_t> heard = last_heard(p.node);
    if (heard && *heard > p.at_ms) {
      Report(p.node, RouteOutcome::kFalseHit, 1);
    } else if (now_ms - p.at_ms >= failure_timeout_ms) {
      Report(p.node, RouteOutcome::kUnreachable, 1);
    } else {
      kept.push_back(std::move(p));
    }
  }
  pending_ = std::move(kept);
}

RouteCounts RouteOutcomes::For(std::string_view node) const {
  const auto it = nodes_.find(node);
  return it == nodes_.end() ? RouteCounts{} : it->second;
}

}  // namespace peerbloom::daemon
