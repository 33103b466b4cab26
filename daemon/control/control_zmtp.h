// ZmtpServer: the server side of one ZMTP 3.x connection (rfc.zeromq.org/spec/23, and /37
// for PING) with the NULL mechanism, speaking as a ROUTER socket to the REQ and DEALER
// clients of the tcp control endpoint. It lets that endpoint look at a request's header frame
// before the body arrives, which libzmq's own sockets cannot: they deliver a message only
// once all of its frames are in memory, so a request without the control token would be held
// whole before it could be refused.
//
// Incremental and pure: Next() consumes bytes and stops at each event the caller acts on.
// Bytes come from anyone who reaches the port: every size is checked before use, nothing is
// kept that the caller did not ask to keep except a header frame up to
// client::kMaxControlHeaderBytes and a handshake command up to the same.
//
//   greeting (64 bytes): 0xFF, 8 bytes padding, 0x7F, major 3, minor, "NULL" + 16 NULs,
//                        as-server, 31 bytes filler
//   frame:               flags (0x01 MORE, 0x02 LONG, 0x04 COMMAND), size (1 byte, or 8
//                        bytes big-endian when LONG), body
//   READY command body:  0x05 "READY", then properties: name-size (1), name, value-size (4,
//                        big-endian), value; the client's Socket-Type must be REQ, DEALER or
//                        ROUTER
//   request (message):   [empty delimiter][header][body?], every frame but the last MORE
//
// Thread-safety: none. Copyable (plain state).
#ifndef PEERBLOOM_DAEMON_CONTROL_CONTROL_ZMTP_H_
#define PEERBLOOM_DAEMON_CONTROL_CONTROL_ZMTP_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace peerbloom::daemon {

// What one request message held, as far as it was kept.
struct ZmtpRequest {
  size_t frames = 0;             // data frames
  bool delimiter_empty = false;  // the first frame was empty (the envelope so far is right)
  std::string header;            // the second frame, when at most the header limit
  bool header_over = false;      // the second frame was larger: dropped unread
  uint64_t body_size = 0;        // the third frame's size, kept or not
  std::string body;              // the third frame, when the caller kept it
};

class ZmtpServer {
 public:
  enum class Event {
    kNeedMore,  // every byte given was consumed
    kHeader,    // the request's header frame is whole: request().header
    kBody,      // the body frame begins (request().body_size): call KeepBody or DropBody
    kRequest,   // the request is whole: request() until the next call of Next
    kError,     // not ZMTP 3 with NULL, or a protocol error: close (error() says which)
  };

  // The server's greeting and READY command: the first bytes to send on a new connection.
  static std::string Hello();
  // Appends a reply message [empty delimiter][head][body, when not empty] to *out.
  static void AppendReply(std::string_view head, std::string_view body, std::string* out);

  // Consumes bytes of `in` from its start, setting *used to how many, until an event. Commands
  // that want an answer (PING) get it appended to *out.
  Event Next(std::string_view in, size_t* used, std::string* out);
  // After kBody: keep the body in request().body (the caller bounds its size), or read it and
  // drop it. Until one is called, Next answers kBody and consumes nothing.
  void KeepBody();
  void DropBody();

  const ZmtpRequest& request() const { return request_; }
  // Frees the answered request's header and body (the next request starts empty anyway).
  void ForgetRequest() { request_ = ZmtpRequest(); }
  const char* error() const { return error_; }
  // Bytes of frames read and dropped since the last call (refused bodies, stray frames).
  uint64_t TakeDropped();

 private:
  enum class Stage { kGreeting, kFrameHead, kFrameBody };
  enum class Sink { kDrop, kHeader, kBody, kReady, kCommand };

  Event Fail(const char* why);
  Event ReadGreeting(std::string_view in, size_t* used);
  Event ReadFrameHead(std::string_view in, size_t* used);
  Event StartFrame();
  void ReadFrameBody(std::string_view in, size_t* used);
  // The current frame is whole: what it means. kNeedMore to go on.
  Event EndFrame(std::string* out);
  Event EndReady();

  Stage stage_ = Stage::kGreeting;
  bool ready_ = false;  // the client's READY came
  std::array<unsigned char, 64> greeting_{};
  size_t greeting_size_ = 0;
  std::array<unsigned char, 9> head_{};
  size_t head_size_ = 0;
  unsigned char flags_ = 0;
  uint64_t remaining_ = 0;  // bytes of the current frame's body not consumed yet
  Sink sink_ = Sink::kDrop;
  std::string command_;  // a command's body, as far as kept
  bool frame_whole_ = false;
  bool awaiting_body_ = false;
  bool header_told_ = false;
  bool request_done_ = false;  // the last event was kRequest: the next frame starts another
  ZmtpRequest request_;
  uint64_t dropped_ = 0;
  const char* error_ = "";
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_CONTROL_ZMTP_H_
