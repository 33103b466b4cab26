// Epoch floor: the last epoch this data dir started with, kept in `<data_dir>/epoch` so that
// a restart never goes back in epochs, whatever the wall clock says. Epochs are taken from
// the wall clock (milliseconds since 1970), and peers ignore a node whose epoch went down
// (it reads as a stale incarnation): a clock stepped back, or a node restarted before its
// first snapshot, would otherwise be unheard until the clock caught up.
#ifndef PEERBLOOM_DAEMON_STORE_EPOCH_FLOOR_H_
#define PEERBLOOM_DAEMON_STORE_EPOCH_FLOOR_H_

#include <cstdint>
#include <string>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

// *epoch receives max(candidate, the file's epoch + 1), and the file then holds *epoch
// (written crash-safely: temp, fsync, rename, fsync dir). A missing file counts as 0; an
// unreadable one is an error. A failed write is returned with *epoch set: the caller may
// go on and warn.
Status ClaimEpoch(const std::string& path, uint64_t candidate, uint64_t* epoch);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_STORE_EPOCH_FLOOR_H_
