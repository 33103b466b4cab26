// Body of kImportedDigest frames, shared by lib/wire/frame_codec.cc (which owns the header)
// and lib/wire/import_codec.cc. docs/wire-protocol.md specifies the layout.
#ifndef PEERBLOOM_LIB_WIRE_IMPORT_BODY_H_
#define PEERBLOOM_LIB_WIRE_IMPORT_BODY_H_

#include <string>
#include <vector>

#include "peerbloom/byte_io.h"
#include "peerbloom/status.h"
#include "peerbloom/wire.h"

namespace peerbloom::wire_internal {

// InvalidArgument naming the first bad field of an entry to encode.
Status ValidateImportEntries(const std::vector<ImportedDigestEntry>& entries,
                             const WireLimits& limits);
// `version`: the frame's layout version; 2 and later append the importers' signatures.
void AppendImportBody(const std::vector<ImportedDigestEntry>& entries, uint8_t version,
                      std::string* out);
Status DecodeImportBody(ByteReader* r, const WireLimits& limits, uint8_t version,
                        std::vector<ImportedDigestEntry>* out);

}  // namespace peerbloom::wire_internal

#endif  // PEERBLOOM_LIB_WIRE_IMPORT_BODY_H_
