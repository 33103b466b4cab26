// Fuzz target for the peer wire decoder and the gossip engine's handling of a frame.
// Properties: decoding never crashes or over-reads; a frame that decodes is canonical (it
// re-encodes to the same bytes, or to the known prefix for a newer version); the engine
// either refuses a frame with a status or accepts it, never crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "peerbloom/gossip.h"
#include "peerbloom/wire.h"
#include "tests/fuzz/verdict.h"

namespace {

std::string Reencode(const peerbloom::WireFrame& f) {
  using peerbloom::WireType;
  std::string out;
  peerbloom::Status s;
  if (f.header.type == WireType::kDigest) {
    s = peerbloom::EncodeDigestFrame(f.header, f.digest, &out);
  } else if (f.header.type == WireType::kRequestFull) {
    s = peerbloom::EncodeRequestFullFrame(f.header, f.requests, &out);
  } else if (f.header.type == WireType::kPrune || f.header.type == WireType::kGraft) {
    s = peerbloom::EncodeOriginsFrame(f.header, f.header.type, f.origins, &out, f.link_seq);
  } else if (f.header.type == WireType::kImportedDigest) {
    s = peerbloom::EncodeImportedDigestFrame(f.header, f.imports, &out);
  } else if (f.header.type == WireType::kBroadcast) {
    s = peerbloom::EncodeBroadcastFrame(f.header, f.relay_bytes, &out);
  } else if (f.header.type == WireType::kProbe) {
    s = peerbloom::EncodeProbeFrame(f.header, f.probe, &out);
  } else if (f.header.type == WireType::kResend) {
    s = peerbloom::EncodeResendFrame(f.header, f.resend_seqs, &out);
  } else {
    s = peerbloom::EncodeSummaryFrame(f.header, f.header.type, f.summary_bytes, &out, f.state_sig,
                                      f.delta_sig, f.link_seq);
  }
  if (!s.ok()) std::abort();  // a decoded frame must be encodable
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  peerbloom::WireLimits limits;
  limits.max_entries = 256;
  peerbloom::WireFrame frame;
  const bool decoded = peerbloom::DecodeFrame(bytes, limits, &frame).ok();
  peerbloom::fuzz::ReportVerdict(decoded);
  if (decoded) {
    // A newer version's frame may set flags and append fields this reader skips.
    const bool newer = frame.header.version > peerbloom::kWireVersion;
    if (newer) frame.header.flags &= peerbloom::kWireKnownFlags;
    std::string again = Reencode(frame);
    std::string expected(bytes.substr(0, again.size()));
    if (newer && expected.size() > 7) {
      expected[4] = static_cast<char>(peerbloom::kWireVersion);
      expected[7] = static_cast<char>(frame.header.flags);
    }
    if (again != expected) std::abort();
  }
  peerbloom::GossipOptions o;
  o.node_id = "fuzz";
  o.endpoint = "tcp://fuzz:1";
  // Imported digests are only taken by squid-md5 clusters.
  o.key_scheme = frame.header.type == peerbloom::WireType::kImportedDigest
                     ? peerbloom::KeyScheme::kSquidMd5
                     : peerbloom::KeyScheme::kRaw;
  o.cluster_tag = frame.header.cluster_tag;  // let frames that decode reach the engine
  o.limits.max_log2_bits = 20;
  o.wire_limits = limits;
  o.max_members = 64;
  peerbloom::GossipEngine engine(o);
  (void)engine.OnMessage(bytes, 1000);
  engine.OnTick(2000);
  (void)engine.TakeOutgoing();
  return 0;
}
