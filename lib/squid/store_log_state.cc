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
  if (journaling_) Journal(entry);
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

void StoreLogState::StartJournal(size_t max_entries) {
  journal_.clear();
  journaling_ = true;
  journal_overflowed_ = false;
  journal_limit_ = max_entries;
}

void StoreLogState::AbandonJournal() {
  journaling_ = false;
  journal_.clear();
  journal_.shrink_to_fit();
}

void StoreLogState::Journal(const StoreLogEntry& entry) {
  if (entry.action != StoreLogAction::kSwapOut && entry.action != StoreLogAction::kRelease) return;
  if (journal_.size() == journal_limit_) {
    journal_overflowed_ = true;
    AbandonJournal();
    return;
  }
  journal_.push_back({entry.action, entry.key});
}

StoreLogRebuild StoreLogState::FinishRebuild(const std::vector<SquidKey>& held) {
  SquidKeySet next(seed_);
  for (const SquidKey& key : held) next.Insert(key);
  // Replayed in log order, the last event of each key since the read began decides.
  for (const StoreLogJournalEntry& e : journal_) {
    if (e.action == StoreLogAction::kSwapOut) {
      next.Insert(e.key);
    } else {
      next.Erase(e.key);
    }
  }
  StoreLogRebuild out;
  out.held = held.size();
  out.journal = journal_.size();
  live_.ForEach([&](const SquidKey& k) {
    if (!next.Contains(k)) out.removed.push_back(k);
  });
  next.ForEach([&](const SquidKey& k) {
    if (!live_.Contains(k)) out.added.push_back(k);
  });
  live_ = std::move(next);
  AbandonJournal();
  return out;
}

}  // namespace peerbloom
