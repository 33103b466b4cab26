// Snapshots: crash-safe copies of a node's local state, restored at start.
//
// File layout (little-endian; docs/operations.md, "Snapshots"):
//
//   +0        8  magic "PBSNAP01"
//   +8        4  format version (2)
//   +12       4  minimum reader: the oldest format version that can read this file (2)
//   +16       4  H: header length (at most 1 MiB)
//   +20       H  header: JSON (node id, epoch, version, filter geometry and counters, key
//                scheme, index-key fingerprint, feed positions, writer's wall time)
//   +20+H     8  C: counter bytes length
//   +28+H     C  the counting filter's packed 4-bit counters
//   +28+H+C   S  each feed's state bytes, in the header's feed order (lengths in the header)
//   +28+H+C+S 8  XXH3-64 of every byte before it
//
// Format 1 (no minimum-reader field, the header length at +12) still reads. A file whose
// minimum reader is newer than this build's format is refused as NotSupported, naming both.
//
// Writing: a temp file in the same directory, fsync, rename over the old one, fsync the
// directory. A crash leaves either the old or the new snapshot, never a torn one; a torn or
// altered file fails the checksum and is refused (the daemon then refuses to start, so an
// operator decides; docs/operations.md).
#ifndef PEERBLOOM_DAEMON_STORE_SNAPSHOT_H_
#define PEERBLOOM_DAEMON_STORE_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// Where a file feed had read up to.
struct FeedPosition {
  std::string path;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t offset = 0;
  uint32_t fingerprint_bytes = 0;  // FileFollower's check of the bytes before `offset`
  uint64_t fingerprint = 0;
  uint32_t head_bytes = 0;  // FileFollower's check of the file's first bytes (0: absent)
  uint64_t head_fingerprint = 0;
  int64_t mtime_ns = 0;  // the file's modification time when saved (0: absent)
  std::string state;     // the feed's own state (a store.log feed's live-key set), may be empty
  bool operator==(const FeedPosition&) const = default;
};

struct SnapshotState {
  std::string node_id;
  uint64_t epoch = 0;
  uint64_t version = 0;  // the last published summary version
  unsigned k = 0;
  unsigned log2_counters = 0;
  unsigned size_multiplier = 1;  // counters = size_multiplier * 2^log2_counters (format 3)
  KeyScheme key_scheme = KeyScheme::kSquidMd5;
  uint64_t index_key_fingerprint = 0;
  uint64_t items = 0;
  uint64_t saturation_events = 0;
  uint64_t refused_removes = 0;
  uint64_t adds = 0;
  uint64_t removes = 0;
  int64_t written_unix_ms = 0;
  std::vector<FeedPosition> feeds;
  std::string cells;  // packed counters
};

Status WriteSnapshot(const std::string& path, const SnapshotState& state);
// NotFound when there is no file; Corruption (with the reason) for anything malformed;
// NotSupported for a file that needs a newer reader.
Status ReadSnapshot(const std::string& path, SnapshotState* out);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_STORE_SNAPSHOT_H_
