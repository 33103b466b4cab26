#include "peerbloom/squid_store_log_state.h"

namespace peerbloom {

StoreLogDecision StoreLogState::ApplyLine(std::string_view line, SquidKey* key, Status* error) {
  StoreLogEntry entry;
  Status s = ParseStoreLogLine(line, &entry);
  if (!s.ok()) {
    ++counters_.malformed;
    if (error != nullptr) *error = std::move(s);
    return StoreLogDecision::kMalformed;
  }
  *key = entry.key;
  return ApplyEntry(entry);
}

StoreLogDecision StoreLogState::ApplyEntry(const StoreLogEntry& entry) {
  if (entry.squid_internal) {
    ++counters_.internal;
    return StoreLogDecision::kIgnore;
  }
  switch (entry.action) {
    case StoreLogAction::kSwapOut:
      if (live_.Insert(entry.key)) {
        ++counters_.adds;
        return StoreLogDecision::kAdd;
      }
      ++counters_.duplicate_swapouts;
      return StoreLogDecision::kIgnore;
    case StoreLogAction::kRelease:
      if (live_.Erase(entry.key)) {
        ++counters_.removes;
        return StoreLogDecision::kRemove;
      }
      ++counters_.unknown_releases;
      return StoreLogDecision::kIgnore;
    case StoreLogAction::kSoFail:
      ++counters_.swapout_failures;
      return StoreLogDecision::kIgnore;
    case StoreLogAction::kOther:
      break;
  }
  ++counters_.other_actions;
  return StoreLogDecision::kIgnore;
}

}  // namespace peerbloom
