// The body of a SWIM message (swim.h).
#include <algorithm>
#include <string>
#include <utility>

#include "peerbloom/byte_io.h"
#include "peerbloom/swim.h"

namespace peerbloom {
namespace {

constexpr size_t kMaxEvents = 255;

}  // namespace

std::string EncodeSwimMessage(const SwimMessage& m) {
  std::string out;
  PutU8(&out, static_cast<uint8_t>(m.kind));
  PutVarint(&out, m.seq);
  if (m.kind == SwimKind::kPingReq) PutStr8(&out, m.target);
  const size_t count = std::min(m.events.size(), kMaxEvents);
  PutU8(&out, static_cast<uint8_t>(count));
  for (size_t i = 0; i < count; ++i) {
    const SwimEvent& e = m.events[i];
    PutStr8(&out, e.node);
    PutU8(&out, static_cast<uint8_t>(e.state));
    PutVarint(&out, e.incarnation);
    if (e.state == SwimState::kSuspect) PutStr8(&out, e.by);
  }
  return out;
}

Status DecodeSwimMessage(std::string_view bytes, SwimMessage* out) {
  ByteReader r(bytes);
  SwimMessage m;
  uint8_t kind = 0, count = 0;
  if (!r.ReadU8(&kind) || kind > static_cast<uint8_t>(SwimKind::kPingReq) ||
      !r.ReadVarint(&m.seq)) {
    return Status::Corruption("swim message: bad kind or sequence number");
  }
  m.kind = static_cast<SwimKind>(kind);
  if (m.kind == SwimKind::kPingReq && (!r.ReadStr8(&m.target) || m.target.empty())) {
    return Status::Corruption("swim message: bad ping-req target");
  }
  if (!r.ReadU8(&count)) return Status::Corruption("swim message: no event count");
  for (uint8_t i = 0; i < count; ++i) {
    SwimEvent e;
    uint8_t state = 0;
    if (!r.ReadStr8(&e.node) || e.node.empty() || !r.ReadU8(&state) ||
        state > static_cast<uint8_t>(SwimState::kDead) || !r.ReadVarint(&e.incarnation)) {
      return Status::Corruption("swim message: bad event " + std::to_string(i));
    }
    e.state = static_cast<SwimState>(state);
    if (e.state == SwimState::kSuspect && (!r.ReadStr8(&e.by) || e.by.empty())) {
      return Status::Corruption("swim message: suspicion " + std::to_string(i) + " names no one");
    }
    m.events.push_back(std::move(e));
  }
  if (r.remaining() != 0) return Status::Corruption("swim message: trailing bytes");
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace peerbloom
