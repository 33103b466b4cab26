// The daemon's log format and level (docs/operations.md, "Logs").
//
// Every line is key=value fields: `ts=2026-01-02T03:04:05.678Z level=info msg="..."`, the time
// in UTC, the message quoted with `"`, `\` and control bytes escaped, so a line splits into
// fields without knowing the messages. The level comes from `log_level` and changes at run
// time (SIGHUP reload, the `log-level` control operation) through SetLogLevel.
#ifndef PEERBLOOM_DAEMON_OBSERVE_LOG_FORMAT_H_
#define PEERBLOOM_DAEMON_OBSERVE_LOG_FORMAT_H_

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

// `"text"` with `"` and `\` escaped by a backslash, newline, tab and carriage return as
// \n \t \r, other bytes below 0x20 and 0x7f as \xHH; bytes from 0x80 are kept (messages
// already escape what is not UTF-8).
void AppendQuotedLogValue(std::string_view text, spdlog::memory_buf_t* out);

// The formatter of every peerbloomd log line.
std::unique_ptr<spdlog::formatter> MakeLogFormatter();

// Sets the default logger's level by name (trace, debug, info, warn, error, critical, off).
// InvalidArgument naming the value otherwise; *previous receives the level replaced.
Status SetLogLevel(std::string_view name, std::string* previous);
std::string CurrentLogLevel();

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_LOG_FORMAT_H_
