// The who-has reply (docs/control-protocol.md, "who-has"), encoded and decoded in one place.
//
//   reply header  {"ok": true, "count": 3, "claimed": 2, "invalid": 0,
//                  "nodes": [{"node_id", "endpoint", "local", "imported",
//                             "summary_age_ms"}, ...]}
//   reply body    one line per request line, in order, each ending in '\n':
//                   "0 2"  indexes into "nodes" (decimal, one space apart) of the nodes
//                          that probably hold the key
//                   ""     no node holds it
//                   "!"    the request line was not a valid key
//
// A node enters the table the first time an answer lists it, so the table holds only nodes
// some key names and costs nothing per key; the answering node itself is listed first in an
// answer when its own filter claims the key.
#ifndef PEERBLOOM_CLIENT_WHO_HAS_H_
#define PEERBLOOM_CLIENT_WHO_HAS_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "peerbloom/gossip.h"
#include "peerbloom/status.h"

namespace peerbloom::client {

// One entry of the node table.
struct WhoHasNode {
  std::string node_id;
  std::string endpoint;
  bool local = false;          // the answering node itself
  bool imported = false;       // a Squid digest imported by some daemon
  int64_t summary_age_ms = 0;  // 0 for the local node
};

// The JSON object of a node table entry, as the reply header carries it.
nlohmann::json WhoHasNodeJson(const WhoHasNode& node);

// The answer for one request line.
struct WhoHasAnswer {
  bool invalid = false;       // the "!" line
  std::vector<size_t> nodes;  // indexes into WhoHasReply::nodes, in the order listed
};

struct WhoHasReply {
  uint64_t count = 0;    // request lines
  uint64_t claimed = 0;  // answers listing some node
  uint64_t invalid = 0;  // "!" answers
  std::vector<WhoHasNode> nodes;
  std::vector<WhoHasAnswer> answers;  // one per request line
};

// Writes a reply one answer at a time. Thread-safety: none.
class WhoHasEncoder {
 public:
  // Answer lines are appended to *body, which must outlive the encoder. `self_id` and
  // `self_endpoint` name the answering node.
  WhoHasEncoder(std::string self_id, std::string self_endpoint, std::string* body);
  WhoHasEncoder(const WhoHasEncoder&) = delete;
  WhoHasEncoder& operator=(const WhoHasEncoder&) = delete;

  // The next request line was not a valid key.
  void AddInvalid();
  // The next request line's answer: this node when `local`, then `peers` in their order.
  void AddAnswer(bool local, std::span<const PeerMatch> peers);
  // Sets "count", "claimed", "invalid" and "nodes" of the reply header.
  void Finish(nlohmann::json* reply) const;

 private:
  size_t IndexOf(const PeerMatch& node, bool local);
  void AppendIndex(size_t index);

  PeerMatch self_;
  std::string* body_;
  std::vector<WhoHasNode> nodes_;
  std::unordered_map<std::string, size_t> index_of_;
  size_t self_index_ = SIZE_MAX;
  uint64_t count_ = 0;
  uint64_t claimed_ = 0;
  uint64_t invalid_ = 0;
};

// Reads a reply header and body. Corruption, naming what is wrong, when the header lacks a
// node table or holds a field of the wrong type, when a body line is neither "!" nor node
// indexes within the table, or when the body's lines are not as many as "count" says.
Status DecodeWhoHasReply(const nlohmann::json& reply, std::string_view body, WhoHasReply* out);

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_WHO_HAS_H_
