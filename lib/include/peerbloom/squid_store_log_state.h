// StoreLogState: turns a stream of store.log lines into exact add / remove decisions.
//
// The counting filter must equal the set of keys the store holds, but store.log is a log of
// events, not of set changes: Squid may log SWAPOUT for a key that is already on disk (an
// object replaced under the same public key, whose old copy is released under a private key)
// and RELEASE for keys that never reached the disk (private keys, memory-only objects,
// PURGE and error replies). Applying every line as add/remove would inflate counters that
// then never drain (stale positives) or remove keys the filter never held. So this class
// keeps the set of live keys and decides:
//
//   SWAPOUT of a key not live       -> kAdd     (the key becomes live)
//   SWAPOUT of a live key           -> kIgnore  (counted as a duplicate)
//   RELEASE of a live key           -> kRemove  (the key stops being live)
//   RELEASE of a key not live       -> kIgnore  (counted)
//   SO_FAIL, unknown actions        -> kIgnore
//   a squid-internal URL            -> kIgnore  (digests, manager pages: not cache content)
//   a line that does not parse      -> kMalformed (counted; the reason goes to *error)
//
// SO_FAIL (Squid 5.7 src/store_swapout.cc) means no cache_dir took the object. Squid may
// still serve it from memory for a while, but when it drops such an entry it does so without
// a log line (src/store/Controller.cc, handleIdleEntry -> destroyStoreEntry), so store.log
// cannot tell how long it is held: memory-only objects are not in the live set
// (docs/squid.md, "What store.log cannot tell").
//
// The caller applies kAdd / kRemove to its CountingBloomFilter (and SummaryBuilder::Touch)
// with the returned key; every kRemove was preceded by exactly one kAdd of the same key, so
// the filter never refuses a remove and never holds a key twice.
//
// Memory: one 16-byte slot per key at 3/8..3/4 load (SquidKeySet), 21-43 bytes per live key.
// Thread-safety: none. Not copyable.
#ifndef PEERBLOOM_SQUID_STORE_LOG_STATE_H_
#define PEERBLOOM_SQUID_STORE_LOG_STATE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/squid_key_set.h"
#include "peerbloom/squid_store_log.h"
#include "peerbloom/status.h"

namespace peerbloom {

enum class StoreLogDecision : uint8_t {
  kAdd,        // add the key to the filter
  kRemove,     // remove the key from the filter
  kIgnore,     // nothing to do
  kMalformed,  // the line did not parse; nothing to do
};

// What the lines did, for metrics. Every line lands in exactly one bucket.
struct StoreLogCounters {
  uint64_t adds = 0;
  uint64_t removes = 0;
  uint64_t duplicate_swapouts = 0;  // SWAPOUT of a key already live
  uint64_t unknown_releases = 0;    // RELEASE of a key not live
  uint64_t swapout_failures = 0;    // SO_FAIL
  uint64_t other_actions = 0;       // actions this parser does not know
  uint64_t internal = 0;            // squid-internal URLs
  uint64_t malformed = 0;

  uint64_t lines() const noexcept {
    return adds + removes + duplicate_swapouts + unknown_releases + swapout_failures +
           other_actions + internal + malformed;
  }
};

// One store.log event kept while a rebuild reads what the cache holds.
struct StoreLogJournalEntry {
  StoreLogAction action = StoreLogAction::kOther;  // kSwapOut or kRelease
  SquidKey key{};
};

// What a rebuild changed: keys to add to and remove from the filter.
struct StoreLogRebuild {
  std::vector<SquidKey> added;    // live now, not before
  std::vector<SquidKey> removed;  // live before, not now
  size_t held = 0;                // keys the cache was read to hold
  size_t journal = 0;             // events replayed on top of them
};

class StoreLogState {
 public:
  // `seed` keys the live set's slot hashing (see SquidKeySet); use a secret.
  explicit StoreLogState(const SipKey& seed = SipKey{}) : live_(seed), seed_(seed) {}
  StoreLogState(const StoreLogState&) = delete;
  StoreLogState& operator=(const StoreLogState&) = delete;

  // Parses and applies one line (without its '\n'). On kAdd / kRemove, *key is the key to
  // apply. On kMalformed, *error (if given) says why. May allocate (the live set grows).
  StoreLogDecision ApplyLine(std::string_view line, SquidKey* key, Status* error = nullptr);
  // The same for an already parsed entry; the key is entry.key.
  StoreLogDecision ApplyEntry(const StoreLogEntry& entry);

  const SquidKeySet& live() const noexcept { return live_; }
  const StoreLogCounters& counters() const noexcept { return counters_; }

  // Rebuilding the live set from what the cache holds (docs/squid.md, "Rebuilding the live
  // set"), for when store.log lines were lost. StartJournal() before the cache is read; from
  // then on every SWAPOUT and RELEASE applied is also kept (at most `max_entries`; past that
  // the journal is abandoned and journal_overflowed() says so). FinishRebuild(held) then
  // makes the live set `held` with the journal replayed on top, which is exact whenever the
  // read of the cache began after StartJournal(): a key's state is that of its last logged
  // event if it had one since, and what the read saw otherwise. Returns the keys whose
  // liveness changed, for the caller's filter. AbandonJournal() drops it.
  void StartJournal(size_t max_entries);
  bool journaling() const noexcept { return journaling_; }
  bool journal_overflowed() const noexcept { return journal_overflowed_; }
  StoreLogRebuild FinishRebuild(const std::vector<SquidKey>& held);
  void AbandonJournal();

  // The live set for a snapshot (SquidKeySet encoding) and back. Restoring replaces the live
  // set; counters are not part of the snapshot and keep counting. The caller must restore the
  // counting filter and the file position from the same snapshot.
  void EncodeTo(std::string* out) const { live_.EncodeTo(out); }
  Status DecodeFrom(std::string_view bytes, size_t max_keys) {
    return live_.DecodeFrom(bytes, max_keys);
  }

 private:
  void Journal(const StoreLogEntry& entry);

  SquidKeySet live_;
  StoreLogCounters counters_;
  SipKey seed_;
  bool journaling_ = false;
  bool journal_overflowed_ = false;
  size_t journal_limit_ = 0;
  std::vector<StoreLogJournalEntry> journal_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_STORE_LOG_STATE_H_
