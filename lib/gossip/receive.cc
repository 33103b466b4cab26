// OnMessage: one frame from a peer. Bytes are decoded and checked in full before any state
// changes, so a refused frame changes nothing but the counters; then the sender is accepted
// by Membership and the body goes to the part it concerns.
#include <string>

#include "lib/gossip/engine.h"

namespace peerbloom {

Status GossipEngine::Impl::OnMessage(std::string_view payload, int64_t now_ms,
                                     std::string_view link_node_id) {
  if (!started_) Start(now_ms);
  ++stats_.messages_in;
  stats_.bytes_in += payload.size();
  WireFrame frame;
  Status s = DecodeFrame(payload, opt_.wire_limits, &frame);
  if (s.ok() && opt_.wire_version < kWireVersion) s = AsOlderReader(&frame);
  if (s.ok() && frame.header.cluster_tag != opt_.cluster_tag) {
    s = Status::InvalidArgument("frame of another cluster (tag '" +
                                std::to_string(frame.header.cluster_tag) + "')");
  }
  if (s.ok() && frame.header.sender_id == opt_.node_id) {
    s = Status::InvalidArgument("frame from this node itself");
  }
  // A link speaks only for the node its CURVE key is bound to.
  if (s.ok() && !link_node_id.empty() && frame.header.sender_id != link_node_id) {
    ++stats_.sender_mismatch;
    s = Status::InvalidArgument("frame from '" + frame.header.sender_id + "' on the link of '" +
                                std::string(link_node_id) + "'");
  }
  if (s.ok()) s = Dispatch(frame, !link_node_id.empty(), now_ms);
  if (!s.ok()) ++stats_.malformed_in;
  Detect(now_ms);
  for (const std::string& endpoint : membership_.TakeMovedFrom()) outbox_.NoteDropped(endpoint);
  return s;
}

// What a reader of an older version (GossipOptions::wire_version, tests of mixed clusters)
// does with a newer frame: relayed versions on probes are unknown to version 6 (skipped, as
// every field a newer frame appends); the NO_PUSH flag is unknown to version 5 (skipped, as
// every flag of a newer frame it does not know); resend frames are unknown to version 4 and the
// frames' numbers skipped; probe frames and checksum digests are unknown to version 3, and the
// entries' detector flags skipped.
Status GossipEngine::Impl::AsOlderReader(WireFrame* frame) const {
  if (opt_.wire_version >= 7) return Status::Ok();
  frame->probe.relayed_versions.clear();
  if (opt_.wire_version >= 6) return Status::Ok();
  frame->header.flags &= ~kWireFlagNoPush;
  if (opt_.wire_version >= 5) return Status::Ok();
  if (frame->header.type == WireType::kResend) {
    return Status::NotSupported("unknown message type '10'");
  }
  frame->link_seq = 0;
  if (opt_.wire_version >= 4) return Status::Ok();
  if (frame->header.type == WireType::kProbe) {
    return Status::NotSupported("unknown message type '9'");
  }
  if ((frame->digest.flags & kDigestChecksum) != 0) {
    return Status::Corruption("unknown digest flags '" + std::to_string(frame->digest.flags) + "'");
  }
  for (DigestEntry& e : frame->digest.entries) e.probes = e.suspect = false;
  frame->header.flags &= ~kWireFlagProbes;
  return Status::Ok();
}

Status GossipEngine::Impl::Dispatch(const WireFrame& frame, bool verified, int64_t now_ms) {
  Body body;
  PEERBLOOM_RETURN_IF_ERROR(DecodeBody(frame, &body));
  PEERBLOOM_RETURN_IF_ERROR(membership_.CheckSender(frame.header, now_ms, verified));
  const Member* known = membership_.Find(frame.header.sender_id);
  // Suspected or held dead here at the heartbeat its frame still names: its frame clears
  // that here, and a ping telling it so makes it refute everywhere else.
  const bool unrefuted = known != nullptr && (known->suspect || known->dead) &&
                         frame.header.sender_heartbeat <= known->heartbeat;
  const Member* sender = membership_.AcceptSender(frame.header, now_ms, verified);
  if (sender == nullptr) return Status::ResourceExhausted("member table is full");
  dissemination_.OnHeard(sender->id);
  // Its frame says it no longer pushes deltas here (it unlinked, or NO_PUSH): the origins
  // that came on its link are grafted elsewhere now, not at the next round.
  if (dissemination_.CountsOn(sender->id) &&
      !(membership_.IsLinked(*sender, now_ms) && membership_.DeltasFrom(*sender))) {
    dissemination_.GraftLostLinks(membership_.Targets(now_ms));
  }
  if (unrefuted && !sender->suspect && !sender->dead) prober_.Confirm(*sender, now_ms);
  if (frame.header.sender_epoch < sender->epoch) {
    ++stats_.stale_dropped;  // a frame of an older incarnation
    // Or the node restarted below an epoch it ran before: its join gets the entry this node
    // holds of it, with the proof of that epoch (NoteOwnEpoch at the node).
    const bool join =
        frame.header.type == WireType::kDigest && (frame.digest.flags & kDigestReplyWanted) != 0;
    if (verified && join && !sender->endpoint.empty()) {
      outbox_.SendDigest(sender->endpoint, sender->public_key, false,
                         dissemination_.KnownAs(*sender, now_ms));
    }
    return Status::Ok();
  }
  // Whether it probes is its own word, in every frame of version 4 (older ones do not).
  membership_.NoteProbes(sender->id, (frame.header.flags & kWireFlagProbes) != 0);
  Deliver(frame, &body, *sender, verified, now_ms);
  return Status::Ok();
}

Status GossipEngine::Impl::DecodeBody(const WireFrame& frame, Body* body) {
  switch (frame.header.type) {
    case WireType::kFullSummary:
      PEERBLOOM_RETURN_IF_ERROR(CheckBounds(frame.summary_bytes));
      PEERBLOOM_RETURN_IF_ERROR(DecodeSummary(frame.summary_bytes, opt_.limits, &body->summary));
      if (body->summary.key_scheme != opt_.key_scheme) {
        return Status::InvalidArgument("summary of key scheme '" +
                                       std::string(KeySchemeName(body->summary.key_scheme)) + "'");
      }
      if (body->summary.hash_scheme != HashScheme::kSipHash13x2) {
        return Status::NotSupported("summary hash scheme '" +
                                    std::to_string(static_cast<int>(body->summary.hash_scheme)) +
                                    "'");
      }
      return sigs_.CheckFull(body->summary, frame.state_sig);
    case WireType::kDelta:
      PEERBLOOM_RETURN_IF_ERROR(DecodeDelta(frame.summary_bytes, opt_.limits, &body->delta));
      if (body->delta.key_scheme != opt_.key_scheme) {
        return Status::InvalidArgument("delta of key scheme '" +
                                       std::string(KeySchemeName(body->delta.key_scheme)) + "'");
      }
      return sigs_.CheckDelta(body->delta, frame.summary_bytes, frame.state_sig, frame.delta_sig);
    case WireType::kImportedDigest:
      return imports_.Check(frame, &body->digests);
    default:
      return Status::Ok();
  }
}

void GossipEngine::Impl::Deliver(const WireFrame& frame, Body* body, const Member& sender,
                                 bool verified, int64_t now_ms) {
  switch (frame.header.type) {
    case WireType::kDigest:
      return OnDigest(frame, sender, verified, now_ms);
    case WireType::kFullSummary: {
      const Summary& s = body->summary;
      const Member* origin =
          membership_.AdvanceEpoch(s.origin, s.epoch, now_ms, OwnWord(s.origin, sender, verified));
      if (frame.link_seq != 0) {
        dissemination_.OnLinkSeq(sender, frame.header.sender_epoch, frame.link_seq, now_ms);
      }
      return dissemination_.OnFull(s, frame.summary_bytes, origin, sender, now_ms, frame.state_sig);
    }
    case WireType::kDelta: {
      const SummaryDelta& d = body->delta;
      const Member* origin =
          membership_.AdvanceEpoch(d.origin, d.epoch, now_ms, OwnWord(d.origin, sender, verified));
      const bool again =
          frame.link_seq != 0 &&
          dissemination_.OnLinkSeq(sender, frame.header.sender_epoch, frame.link_seq, now_ms);
      return dissemination_.OnDelta(frame, d, origin, sender, now_ms, again);
    }
    case WireType::kResend:
      if (!sender.endpoint.empty()) {
        outbox_.Resend(sender.endpoint, sender.public_key, frame.resend_seqs);
      }
      return;
    case WireType::kRequestFull:
      return OnRequests(frame, sender, now_ms);
    case WireType::kPrune:
    case WireType::kGraft: {
      const bool again =
          frame.link_seq != 0 &&
          dissemination_.OnLinkSeq(sender, frame.header.sender_epoch, frame.link_seq, now_ms);
      // A prune that comes again or late (a resend filling a gap) may be older than a graft
      // already taken: it is dropped. A prune not taken costs a duplicate, which prunes again.
      if (frame.header.type == WireType::kGraft) {
        dissemination_.OnGraft(sender, frame.origins);
      } else if (!again) {
        dissemination_.OnPrune(sender, frame.origins);
      }
      return;
    }
    case WireType::kImportedDigest:
      return imports_.OnFrame(frame, &body->digests, sender, now_ms);
    case WireType::kProbe:
      return OnProbe(frame, sender, now_ms);
    case WireType::kBroadcast:
      return;
  }
}

// Every version 4 node answers probes, whichever detector it runs.
void GossipEngine::Impl::OnProbe(const WireFrame& frame, const Member& sender, int64_t now_ms) {
  if (prober_.OnProbe(frame.probe, sender, now_ms) && membership_.probe_mode()) refute_due_ = true;
  dissemination_.OnPiggyback(frame.probe.versions, sender, now_ms);
  dissemination_.OnPiggyback(frame.probe.relayed_versions, sender, now_ms);
}

// A flag that a member probes is taken from anyone (it only changes how the member is
// judged: a member wrongly said to probe still clears any suspicion with each heartbeat);
// that it does not, only from the member itself. A suspicion is taken for the member's
// current epoch and heartbeat only, and confirmed by a ping of this node's own.
void GossipEngine::Impl::OnEntryDetector(const DigestEntry& e, bool own, int64_t now_ms) {
  if (e.probes || own) membership_.NoteProbes(e.origin, e.probes);
  if (!e.suspect) return;
  if (membership_.Suspect(e.origin, e.epoch, e.heartbeat, now_ms)) {
    if (const Member* m = membership_.Find(e.origin)) prober_.Confirm(*m, now_ms);
  }
}

// A summary or delta is its origin's own word when the origin signed it (DecodeBody checked
// the signature) or sent it on its own link.
bool GossipEngine::Impl::OwnWord(std::string_view origin, const Member& sender,
                                 bool verified) const {
  return sigs_.Signs(origin) || (verified && sender.id == origin);
}

void GossipEngine::Impl::OnDigest(const WireFrame& frame, const Member& sender, bool verified,
                                  int64_t now_ms) {
  ++stats_.digests_in;
  const DigestBody& digest = frame.digest;
  int bad_certs = 0;
  int bad_beats = 0;
  for (const DigestEntry& e : digest.entries) {
    // What others say of this node's heartbeat is not taken (LocalNode::Beat); its epoch
    // only when proven above its own (NoteOwnEpoch).
    if (e.origin == opt_.node_id) {
      NoteOwnEpoch(e, &bad_certs);
      // Suspected, or held dead, at this very heartbeat: refute with a newer one.
      if (membership_.probe_mode() && e.epoch == local_.epoch() &&
          e.heartbeat == local_.heartbeat() && (e.suspect || !e.alive)) {
        refute_due_ = true;
      }
      continue;
    }
    const bool own = verified && e.origin == sender.id;
    const BeatClaim beat = CheckBeat(e, &bad_beats);
    // A node's own entry needs no proof; its certificate is kept all the same, to relay.
    const Member* known = membership_.Find(e.origin);
    const bool newer = known != nullptr && e.epoch > known->epoch;
    const bool admitted = AdmitEpoch(e, beat == BeatClaim::kSigned, &bad_certs);
    // Proven by the origin's own signature: a certificate or a beat of that epoch.
    const bool proven = newer && admitted && sigs_.Signs(e.origin) &&
                        (beat == BeatClaim::kSigned || !sigs_.EpochCert(e.origin, e.epoch).empty());
    if (own || admitted) {
      membership_.Merge(e, now_ms, own, beat, proven);
      OnEntryDetector(e, own, now_ms);
    }
  }
  if ((digest.flags & kDigestChecksum) != 0) {
    // Tables that differ are exchanged whole, from here: the sender answers this complete
    // digest with its own, and each side pushes what the other lacks.
    if ((digest.flags & kDigestReplyWanted) != 0 &&
        digest.checksum != dissemination_.TableChecksum()) {
      SendJoinDigest(sender.endpoint, sender.public_key, false, now_ms);
    }
    dissemination_.RequestAnnounced(digest, sender, now_ms);
    return;
  }
  if ((digest.flags & kDigestComplete) != 0) dissemination_.PushMissing(digest, sender, now_ms);
  if ((digest.flags & kDigestReplyWanted) != 0) {
    // The sender pushes what we lack once it reads our reply; asking now would double it.
    outbox_.SendDigest(sender.endpoint, sender.public_key, false,
                       dissemination_.CompleteDigest(kDigestComplete, now_ms));
    imports_.Announce(sender.endpoint, sender.public_key, false, now_ms);
    return;
  }
  dissemination_.RequestAnnounced(digest, sender, now_ms);
}

// This node restarted with an epoch below one it ran before (its epoch file was lost while
// its clock was behind): peers that heard the earlier incarnation take its frames for an old
// incarnation's. A peer's digest names the earlier epoch; proven by this node's own
// signature, it is kept for the daemon to start an epoch above it (SupersededEpoch). Without
// a sign key nothing proves it, and any member could make the node start epoch after epoch:
// such a node is not healed this way (docs/gossip.md).
void GossipEngine::Impl::NoteOwnEpoch(const DigestEntry& e, int* bad_certs) {
  if (!local_.has_summary() || e.epoch <= local_.epoch() || e.epoch <= own_epoch_seen_) return;
  if (opt_.signer == nullptr || !sigs_.Signs(opt_.node_id)) return;
  if (*bad_certs > 0 ||
      !sigs_.ProvesEpoch(opt_.node_id, e.epoch, e.epoch_cert, e.heartbeat, e.beat_sig)) {
    ++*bad_certs;
    ++stats_.epochs_refused;
    return;
  }
  own_epoch_seen_ = e.epoch;
}

// docs/gossip.md, "Who speaks for a node's liveness". A signature is verified only when the
// beat would change something (a newer epoch or heartbeat than the signed one held, or the
// first signed one), so the beats repeated by every link cost a comparison. As with epoch
// certificates, a frame gets one failed verification.
BeatClaim GossipEngine::Impl::CheckBeat(const DigestEntry& e, int* bad_beats) {
  if (!sigs_.Signs(e.origin)) return BeatClaim::kUnsigned;
  const Member* m = membership_.Find(e.origin);
  const bool signs = m != nullptr && m->beats_signed;
  // A node that has not signed a beat here yet may run a version that does not sign them.
  if (e.beat_sig.empty()) return signs ? BeatClaim::kNotTaken : BeatClaim::kUnsigned;
  const bool newer = !signs || e.epoch > m->epoch ||
                     (e.epoch == m->epoch && (e.heartbeat > m->heartbeat || m->beat_sig.empty()));
  if (!newer) return BeatClaim::kNotTaken;
  if (*bad_beats == 0 && sigs_.VerifyBeat(e.origin, e.epoch, e.heartbeat, e.beat_sig)) {
    return BeatClaim::kSigned;
  }
  ++*bad_beats;
  ++stats_.beats_refused;
  return BeatClaim::kNotTaken;
}

// A relayed epoch newer than the one known needs the origin's certificate (OriginSigs says
// when it may go without) or its valid beat signature in that epoch. The sender's own epoch is
// in the header of its authenticated link, so this concerns the entries of others. A frame
// gets one failed verification: after it, newer epochs with certificates are refused
// unchecked, so a hostile digest cannot make this node spend a verification on each of its
// thousands of entries.
bool GossipEngine::Impl::AdmitEpoch(const DigestEntry& e, bool beat_signed, int* bad_certs) {
  const Member* m = membership_.Find(e.origin);
  const uint64_t known = m == nullptr ? 0 : m->epoch;
  if (e.epoch < known || (e.epoch == known && m != nullptr)) {
    // Nothing to adopt; remember a certificate of the current epoch to pass it on.
    if (m != nullptr && e.epoch == known && !e.epoch_cert.empty() && *bad_certs == 0 &&
        sigs_.EpochCert(e.origin, e.epoch).empty() && e.epoch_cert != last_bad_cert_) {
      if (!sigs_.AdmitEpoch(e.origin, e.epoch, e.epoch_cert)) {
        ++*bad_certs;
        last_bad_cert_ = e.epoch_cert;
      }
    }
    return true;
  }
  if (beat_signed) {
    // The beat vouches for the epoch; keep a certificate that came with it to pass it on.
    if (!e.epoch_cert.empty() && *bad_certs == 0 &&
        !sigs_.AdmitEpoch(e.origin, e.epoch, e.epoch_cert)) {
      ++*bad_certs;
    }
    return true;
  }
  if (!e.epoch_cert.empty() && *bad_certs > 0) {
    ++stats_.epochs_refused;
    return false;
  }
  if (sigs_.AdmitEpoch(e.origin, e.epoch, e.epoch_cert)) return true;
  if (!e.epoch_cert.empty()) ++*bad_certs;
  return false;
}

void GossipEngine::Impl::OnRequests(const WireFrame& frame, const Member& sender, int64_t now_ms) {
  ++stats_.requests_in;
  for (const FullRequest& q : frame.requests) {
    dissemination_.Graft(sender, q.origin);  // it missed something: push to it again
    if (imports_.Serve(sender, q, now_ms)) continue;
    if (!dissemination_.Serve(sender, q)) break;
  }
}

}  // namespace peerbloom
