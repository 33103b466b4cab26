// Files the daemon keeps on the local disk, opened so that another local user cannot steer
// them (docs/security.md, "Bounds and local files"):
//  - the data dir, key files and the directory of an ipc control socket must belong to the
//    daemon's user and be writable by nobody else: otherwise another user could plant files
//    or links in them, or read or replace keys;
//  - files in the data dir are opened with O_NOFOLLOW, relative to a descriptor of the dir,
//    and new contents are written to a fresh file (O_CREAT | O_EXCL) renamed over the old
//    one: a planted link is refused or replaced, never written through.
//
// Thread-safety: the functions are; a DataDir is not. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_STORE_LOCAL_FILES_H_
#define PEERBLOOM_DAEMON_STORE_LOCAL_FILES_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "peerbloom/client/curve_keys.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// InvalidArgument unless `path` (stat, links followed) is owned by the effective user and not
// writable by group or others; `what` names it ("data_dir", "key_file", ...). The message
// names the path, its owner and mode, and the commands that fix it. NotFound when missing.
Status CheckPrivate(std::string_view what, const std::string& path);
// The same for a file already open.
Status CheckPrivateFd(std::string_view what, const std::string& path, int fd);

// The start-time checks of the files a config names that exist before the daemon runs, made
// the same way by Daemon::Start and by `peerbloomd --check-config` (which must not create
// anything), with the same messages:
//  - CheckDataDir: data_dir passes CheckPrivate; a missing one is fine (Start creates it);
//  - ReadNodeKeyFile: the key file (client::ReadKeyFile) passes CheckPrivate;
//  - CheckControlSocketDir: the directory of an ipc:// control socket passes CheckPrivate (a
//    tcp endpoint, or a directory not there, is fine);
//  - CheckControlTokenFile: a token file that exists holds a token (client::ReadControlToken)
//    and passes CheckPrivate; a missing one is fine (Start creates it), and so is "".
Status CheckDataDir(const std::string& path);
Status ReadNodeKeyFile(const std::string& path, client::CurveKeyPair* keys);
Status CheckControlSocketDir(const std::string& control);
Status CheckControlTokenFile(const std::string& path);

// Opens (for appending, creating it mode 0600) a file that must not be a symbolic link:
// the log file. Returns the descriptor in *fd.
Status OpenAppendNoFollow(const std::string& path, int* fd);

class DataDir {
 public:
  // Creates `path` (mode 0700) if missing, then opens it and checks it with CheckPrivate.
  static Status Open(const std::string& path, std::unique_ptr<DataDir>* out);
  ~DataDir();
  DataDir(const DataDir&) = delete;
  DataDir& operator=(const DataDir&) = delete;

  const std::string& path() const { return path_; }
  std::string PathOf(std::string_view name) const { return path_ + "/" + std::string(name); }
  // Opens `name` in the dir with `flags` | O_NOFOLLOW | O_CLOEXEC (mode 0600 if created).
  // A symbolic link is refused with a message that says so; so is anything but a regular file.
  Status OpenFile(std::string_view name, int flags, int* fd) const;
  // Replaces `name` with `contents`: written to "<name>.tmp" (removed first if present,
  // created with O_EXCL), synced, renamed over `name`.
  Status WriteFile(std::string_view name, std::string_view contents) const;
  // The contents of `name`: NotFound when missing.
  Status ReadFile(std::string_view name, std::string* contents) const;

 private:
  DataDir(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_STORE_LOCAL_FILES_H_
