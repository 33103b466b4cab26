// The ZMTP 3 server codec; see control_zmtp.h for the layout.
#include "daemon/control/control_zmtp.h"

#include <algorithm>
#include <cstring>

#include "peerbloom/client/control_protocol.h"

namespace peerbloom::daemon {
namespace {

constexpr unsigned char kMore = 0x01;
constexpr unsigned char kLong = 0x02;
constexpr unsigned char kCommand = 0x04;
constexpr size_t kSignatureSize = 10;
constexpr size_t kMechanismAt = 12;
constexpr char kNull[20] = "NULL";  // padded with NULs to 20 bytes
// A handshake command (READY, with the client's metadata) is kept whole up to this; a later
// command only as far as a PING's TTL and context (RFC 37: at most 16 bytes of context).
constexpr size_t kMaxReadyBytes = client::kMaxControlHeaderBytes;
constexpr size_t kMaxCommandKept = 32;

void AppendFrame(unsigned char flags, std::string_view body, std::string* out) {
  if (body.size() > 255) {
    out->push_back(static_cast<char>(flags | kLong));
    for (int shift = 56; shift >= 0; shift -= 8) {
      out->push_back(static_cast<char>(static_cast<uint64_t>(body.size()) >> shift));
    }
  } else {
    out->push_back(static_cast<char>(flags));
    out->push_back(static_cast<char>(body.size()));
  }
  out->append(body);
}

void AppendProperty(std::string_view name, std::string_view value, std::string* out) {
  out->push_back(static_cast<char>(name.size()));
  out->append(name);
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>(static_cast<uint32_t>(value.size()) >> shift));
  }
  out->append(value);
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

// The Socket-Type of a READY command's properties, "" when absent or malformed.
std::string_view SocketType(std::string_view props) {
  std::string_view type;
  while (!props.empty()) {
    const size_t name_size = static_cast<unsigned char>(props[0]);
    if (props.size() < 1 + name_size + 4) return "";
    const std::string_view name = props.substr(1, name_size);
    uint32_t value_size = 0;
    for (size_t i = 0; i < 4; ++i) {
      value_size = (value_size << 8) | static_cast<unsigned char>(props[1 + name_size + i]);
    }
    props.remove_prefix(1 + name_size + 4);
    if (props.size() < value_size) return "";
    if (EqualsIgnoringCase(name, "Socket-Type")) type = props.substr(0, value_size);
    props.remove_prefix(value_size);
  }
  return type;
}

}  // namespace

std::string ZmtpServer::Hello() {
  std::string out(64, '\0');
  out[0] = '\xff';
  out[9] = '\x7f';
  out[10] = 3;  // ZMTP 3.1
  out[11] = 1;
  std::memcpy(&out[kMechanismAt], kNull, 4);
  std::string ready = "\x05READY";
  AppendProperty("Socket-Type", "ROUTER", &ready);
  AppendProperty("Identity", "", &ready);
  AppendFrame(kCommand, ready, &out);
  return out;
}

void ZmtpServer::AppendReply(std::string_view head, std::string_view body, std::string* out) {
  AppendFrame(kMore, "", out);
  AppendFrame(body.empty() ? 0 : kMore, head, out);
  if (!body.empty()) AppendFrame(0, body, out);
}

ZmtpServer::Event ZmtpServer::Fail(const char* why) {
  error_ = why;
  return Event::kError;
}

uint64_t ZmtpServer::TakeDropped() {
  const uint64_t n = dropped_;
  dropped_ = 0;
  return n;
}

void ZmtpServer::KeepBody() {
  if (!awaiting_body_) return;
  awaiting_body_ = false;
  sink_ = Sink::kBody;
  request_.body.reserve(request_.body_size);
}

void ZmtpServer::DropBody() {
  if (!awaiting_body_) return;
  awaiting_body_ = false;
  sink_ = Sink::kDrop;
}

ZmtpServer::Event ZmtpServer::Next(std::string_view in, size_t* used, std::string* out) {
  *used = 0;
  if (error_[0] != '\0') return Event::kError;
  for (;;) {
    if (awaiting_body_) return Event::kBody;
    if (frame_whole_) {
      const Event e = EndFrame(out);
      if (e != Event::kNeedMore) return e;
      continue;
    }
    if (*used == in.size()) return Event::kNeedMore;
    Event e = Event::kNeedMore;
    switch (stage_) {
      case Stage::kGreeting:
        e = ReadGreeting(in, used);
        break;
      case Stage::kFrameHead:
        e = ReadFrameHead(in, used);
        break;
      case Stage::kFrameBody:
        ReadFrameBody(in, used);
        break;
    }
    if (e != Event::kNeedMore) return e;
  }
}

// Checked byte by byte as it arrives, so that a client of another protocol is refused at its
// first wrong byte rather than after 64 it may never send.
ZmtpServer::Event ZmtpServer::ReadGreeting(std::string_view in, size_t* used) {
  while (*used < in.size() && greeting_size_ < greeting_.size()) {
    greeting_[greeting_size_++] = static_cast<unsigned char>(in[(*used)++]);
    const size_t at = greeting_size_ - 1;
    if (at == 0 && greeting_[0] != 0xff) return Fail("not a ZMTP greeting");
    if (at == kSignatureSize - 1 && (greeting_[at] & 1) == 0) return Fail("not a ZMTP greeting");
    if (at == kSignatureSize && greeting_[at] < 3) return Fail("ZMTP before 3.0");
    if (at >= kMechanismAt && at < kMechanismAt + 20 &&
        greeting_[at] != static_cast<unsigned char>(kNull[at - kMechanismAt])) {
      return Fail("a security mechanism other than NULL");
    }
  }
  if (greeting_size_ == greeting_.size()) stage_ = Stage::kFrameHead;
  return Event::kNeedMore;
}

ZmtpServer::Event ZmtpServer::ReadFrameHead(std::string_view in, size_t* used) {
  while (*used < in.size()) {
    head_[head_size_++] = static_cast<unsigned char>(in[(*used)++]);
    const unsigned char flags = head_[0];
    if (head_size_ == 1 && (flags & ~(kMore | kLong | kCommand)) != 0) {
      return Fail("reserved frame flags set");
    }
    if (head_size_ == 1 && (flags & kCommand) && (flags & kMore)) {
      return Fail("a command frame with MORE");
    }
    if (head_size_ == ((flags & kLong) ? 9u : 2u)) {
      flags_ = flags;
      remaining_ = 0;
      for (size_t i = 1; i < head_size_; ++i) remaining_ = (remaining_ << 8) | head_[i];
      head_size_ = 0;
      return StartFrame();
    }
  }
  return Event::kNeedMore;
}

// Decides where the frame's bytes go, from its place in the request.
ZmtpServer::Event ZmtpServer::StartFrame() {
  stage_ = Stage::kFrameBody;
  frame_whole_ = remaining_ == 0;
  command_.clear();
  if (flags_ & kCommand) {
    if (!ready_ && remaining_ > kMaxReadyBytes) return Fail("READY command too large");
    sink_ = ready_ ? Sink::kCommand : Sink::kReady;
    return Event::kNeedMore;
  }
  if (!ready_) return Fail("a message before READY");
  if (request_done_) {
    request_ = ZmtpRequest();
    request_done_ = false;
    header_told_ = false;
  }
  sink_ = Sink::kDrop;
  const size_t index = request_.frames;
  if (index == 0) {
    request_.delimiter_empty = remaining_ == 0;
  } else if (index == 1 && request_.delimiter_empty) {
    if (remaining_ <= client::kMaxControlHeaderBytes) {
      sink_ = Sink::kHeader;
      request_.header.reserve(static_cast<size_t>(remaining_));
    } else {
      request_.header_over = true;
    }
  } else if (index == 2 && request_.delimiter_empty) {
    request_.body_size = remaining_;
    if (remaining_ > 0) awaiting_body_ = true;
  }
  return Event::kNeedMore;
}

void ZmtpServer::ReadFrameBody(std::string_view in, size_t* used) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size() - *used));
  const std::string_view bytes = in.substr(*used, n);
  switch (sink_) {
    case Sink::kHeader:
      request_.header.append(bytes);
      break;
    case Sink::kBody:
      request_.body.append(bytes);
      break;
    case Sink::kReady:
      command_.append(bytes);
      break;
    case Sink::kCommand:
      command_.append(
          bytes.substr(0, kMaxCommandKept - std::min(kMaxCommandKept, command_.size())));
      break;
    case Sink::kDrop:
      dropped_ += n;
      break;
  }
  *used += n;
  remaining_ -= n;
  frame_whole_ = remaining_ == 0;
}

ZmtpServer::Event ZmtpServer::EndFrame(std::string* out) {
  if (sink_ == Sink::kHeader && !header_told_) {
    header_told_ = true;
    return Event::kHeader;
  }
  frame_whole_ = false;
  stage_ = Stage::kFrameHead;
  if (sink_ == Sink::kReady) return EndReady();
  if (sink_ == Sink::kCommand) {
    // PING: "\x04PING", TTL (2 bytes), context; the answer is "\x04PONG" and the context.
    if (command_.size() >= 7 && command_.compare(0, 5, "\x04PING") == 0) {
      AppendFrame(kCommand, "\x04PONG" + command_.substr(7), out);
    }
    return Event::kNeedMore;
  }
  ++request_.frames;
  if (flags_ & kMore) return Event::kNeedMore;
  request_done_ = true;
  return Event::kRequest;
}

ZmtpServer::Event ZmtpServer::EndReady() {
  if (command_.size() < 6 || command_.compare(0, 6, "\x05READY") != 0) {
    return Fail("the first command is not READY");
  }
  const std::string_view type = SocketType(std::string_view(command_).substr(6));
  if (type != "REQ" && type != "DEALER" && type != "ROUTER") {
    return Fail("a socket type other than REQ, DEALER or ROUTER");
  }
  ready_ = true;
  command_.clear();
  command_.shrink_to_fit();
  return Event::kNeedMore;
}

}  // namespace peerbloom::daemon
