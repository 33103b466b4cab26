// SdNotifier: systemd's service notification protocol (sd_notify(3)), written out by hand.
//
// Under `Type=notify` systemd passes $NOTIFY_SOCKET, an AF_UNIX datagram socket: a path, or
// an abstract-namespace name written with a leading '@'. A message is one datagram of
// newline-separated VAR=VALUE assignments: READY=1 once the daemon serves, RELOADING=1 and
// READY=1 around a reload, STOPPING=1 when it begins to stop, WATCHDOG=1 as a keep-alive
// when the unit has WatchdogSec= (systemd then sets $WATCHDOG_USEC, and $WATCHDOG_PID to the
// process it expects the pings from). The protocol is this one datagram, so linking
// libsystemd for it would add a run-time dependency and buy nothing.
//
// Without $NOTIFY_SOCKET every call does nothing and succeeds: the daemon runs the same
// under systemd, another supervisor or a shell.
//
// Thread-safety: none (the event loop owns it). Not copyable: it counts what it sent.
#ifndef PEERBLOOM_DAEMON_LOOP_SD_NOTIFY_H_
#define PEERBLOOM_DAEMON_LOOP_SD_NOTIFY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

class SdNotifier {
 public:
  // Disabled: no socket, no watchdog.
  SdNotifier() = default;
  // `socket`: a path or "@name"; empty disables. `watchdog_usec`: systemd's WatchdogSec= in
  // microseconds, 0 for none; pings go out every half of it, as sd_watchdog_enabled(3) advises.
  SdNotifier(std::string socket, uint64_t watchdog_usec);
  SdNotifier(const SdNotifier&) = delete;
  SdNotifier& operator=(const SdNotifier&) = delete;

  // From $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID (the watchdog is off when
  // WATCHDOG_PID names another process or WATCHDOG_USEC is not a positive integer).
  static SdNotifier FromEnvironment();

  bool enabled() const { return !socket_.empty(); }
  // Milliseconds between watchdog pings, 0 when there is no watchdog.
  int64_t watchdog_interval_ms() const { return watchdog_interval_ms_; }

  // Sends `state` ("READY=1", "STOPPING=1\nSTATUS=...") as one datagram. InvalidArgument
  // for a socket address that cannot be one, IOError when the send fails.
  Status Notify(std::string_view state) const;

  // "RELOADING=1" with the monotonic time systemd 253 and later want beside it (older ones
  // ignore it).
  static std::string ReloadingState();

  // The event loop's keep-alive: sends WATCHDOG=1 when `now_ms` has reached the next ping
  // (the first call always pings). Returns false when a ping was due and its send failed.
  bool MaybePing(int64_t now_ms);
  // When MaybePing next has something to send (0 before the first ping); INT64_MAX without
  // a watchdog.
  int64_t NextPingMs() const;
  uint64_t pings() const { return pings_; }

 private:
  std::string socket_;
  int64_t watchdog_interval_ms_ = 0;
  int64_t next_ping_ms_ = 0;
  bool pinged_ = false;
  uint64_t pings_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_LOOP_SD_NOTIFY_H_
