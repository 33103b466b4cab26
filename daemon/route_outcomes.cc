#include "daemon/route_outcomes.h"

namespace peerbloom::daemon {
namespace {

void Add(bool hit, uint64_t count, RouteCounts* c) {
  c->routed += count;
  (hit ? c->hits : c->false_hits) += count;
}

}  // namespace

void RouteOutcomes::Report(std::string_view node, bool hit, uint64_t count) {
  ++reports_;
  Add(hit, count, &total_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) {
    if (nodes_.size() >= kMaxNodes) {
      untracked_ += count;
      return;
    }
    it = nodes_.emplace(std::string(node), RouteCounts{}).first;
  }
  Add(hit, count, &it->second);
}

RouteCounts RouteOutcomes::For(std::string_view node) const {
  const auto it = nodes_.find(node);
  return it == nodes_.end() ? RouteCounts{} : it->second;
}

}  // namespace peerbloom::daemon
