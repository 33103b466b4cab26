// Ed25519 through OpenSSL's EVP interface (EVP_PKEY_ED25519, one-shot EVP_DigestSign and
// EVP_DigestVerify with a NULL digest: Ed25519 hashes internally). Public keys are parsed
// once into EVP_PKEY objects, so a verification costs the curve arithmetic alone.
#include "peerbloom/origin_sig.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <bit>
#include <cstring>

#include "peerbloom/byte_io.h"

namespace peerbloom {
namespace {

constexpr std::string_view kSigDomain = "peerbloom origin sig v1";
constexpr std::string_view kStateDomain = "peerbloom summary state v1";

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

struct OriginSigner::Key {
  PkeyPtr pkey;
};
struct SignKeyRing::Key {
  PkeyPtr pkey;
};

Sha256Hash Sha256(std::string_view bytes) {
  Sha256Hash out{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

std::string OriginSigMessage(uint64_t cluster_tag, const OriginClaim& claim) {
  std::string m;
  m.reserve(kSigDomain.size() + 1 + 8 + 1 + 1 + claim.origin.size() + 24 + 32);
  m.append(kSigDomain);
  PutU8(&m, 0);
  PutU64(&m, cluster_tag);
  PutU8(&m, static_cast<uint8_t>(claim.kind));
  PutStr8(&m, claim.origin.substr(0, 255));
  PutU64(&m, claim.epoch);
  PutU64(&m, claim.base_version);
  PutU64(&m, claim.version);
  m.append(reinterpret_cast<const char*>(claim.body_hash.data()), claim.body_hash.size());
  return m;
}

Sha256Hash StateHash(const Summary& s) {
  std::string head(kStateDomain);
  PutU8(&head, 0);
  PutU8(&head, static_cast<uint8_t>(s.key_scheme));
  PutU8(&head, static_cast<uint8_t>(s.hash_scheme));
  PutU8(&head, static_cast<uint8_t>(s.filter.k()));
  PutU8(&head, static_cast<uint8_t>(s.filter.log2_bits()));
  PutU32(&head, s.filter.multiplier());
  PutU64(&head, s.estimated_items);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  Sha256Hash out{};
  unsigned int len = 0;
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx.get(), head.data(), head.size());
  const std::vector<uint64_t>& words = s.filter.words();
  if constexpr (std::endian::native == std::endian::little) {
    EVP_DigestUpdate(ctx.get(), words.data(), words.size() * sizeof(uint64_t));
  } else {
    std::string le;
    for (uint64_t w : words) PutU64(&le, w);
    EVP_DigestUpdate(ctx.get(), le.data(), le.size());
  }
  EVP_DigestFinal_ex(ctx.get(), out.data(), &len);
  return out;
}

Status SignPublicKeyOf(std::string_view secret_key, std::string* public_key) {
  if (secret_key.size() != kSignKeyBytes) {
    return Status::InvalidArgument("sign secret key of '" + std::to_string(secret_key.size()) +
                                   "' bytes");
  }
  PkeyPtr k(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, Bytes(secret_key),
                                         secret_key.size()));
  std::string pub(kSignKeyBytes, '\0');
  size_t len = pub.size();
  if (k == nullptr ||
      EVP_PKEY_get_raw_public_key(k.get(), reinterpret_cast<unsigned char*>(pub.data()), &len) !=
          1 ||
      len != kSignKeyBytes) {
    return Status::NotSupported("cannot derive the Ed25519 public key");
  }
  *public_key = std::move(pub);
  return Status::Ok();
}

Status GenerateSignKeyPair(std::string* public_key, std::string* secret_key) {
  std::string secret(kSignKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(secret.data()), kSignKeyBytes) != 1) {
    return Status::NotSupported("no random bytes for an Ed25519 key");
  }
  PEERBLOOM_RETURN_IF_ERROR(SignPublicKeyOf(secret, public_key));
  *secret_key = std::move(secret);
  return Status::Ok();
}

OriginSigner::~OriginSigner() = default;

Status OriginSigner::Create(std::string_view secret_key, std::unique_ptr<OriginSigner>* out) {
  std::unique_ptr<OriginSigner> signer(new OriginSigner());
  PEERBLOOM_RETURN_IF_ERROR(SignPublicKeyOf(secret_key, &signer->public_key_));
  signer->key_ = std::make_unique<Key>();
  signer->key_->pkey.reset(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                                        Bytes(secret_key), secret_key.size()));
  if (signer->key_->pkey == nullptr) return Status::NotSupported("cannot load the Ed25519 key");
  *out = std::move(signer);
  return Status::Ok();
}

Status OriginSigner::Sign(uint64_t cluster_tag, const OriginClaim& claim,
                          std::string* signature) const {
  const std::string message = OriginSigMessage(cluster_tag, claim);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  std::string sig(kSignatureBytes, '\0');
  size_t len = sig.size();
  if (ctx == nullptr ||
      EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_->pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, Bytes(message),
                     message.size()) != 1 ||
      len != kSignatureBytes) {
    return Status::NotSupported("Ed25519 signing failed");
  }
  *signature = std::move(sig);
  return Status::Ok();
}

std::string_view SigVerdictName(SigVerdict verdict) noexcept {
  switch (verdict) {
    case SigVerdict::kValid:
      return "valid";
    case SigVerdict::kNoKey:
      return "no sign key";
    case SigVerdict::kMissing:
      return "unsigned";
    case SigVerdict::kInvalid:
      return "bad signature";
  }
  return "unknown";
}

SignKeyRing::SignKeyRing() = default;
SignKeyRing::~SignKeyRing() = default;

Status SignKeyRing::Add(const std::string& node_id, std::string_view public_key) {
  if (public_key.size() != kSignKeyBytes) {
    return Status::InvalidArgument("sign public key of '" + std::to_string(public_key.size()) +
                                   "' bytes");
  }
  auto key = std::make_unique<Key>();
  key->pkey.reset(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, Bytes(public_key), public_key.size()));
  if (key->pkey == nullptr) return Status::InvalidArgument("not an Ed25519 public key");
  keys_[node_id].push_back(std::move(key));
  return Status::Ok();
}

bool SignKeyRing::Has(std::string_view node_id) const { return keys_.contains(node_id); }

SigVerdict SignKeyRing::Verify(uint64_t cluster_tag, const OriginClaim& claim,
                               std::string_view signature) const {
  auto it = keys_.find(claim.origin);
  if (it == keys_.end()) return SigVerdict::kNoKey;
  if (signature.empty()) return SigVerdict::kMissing;
  if (signature.size() != kSignatureBytes) return SigVerdict::kInvalid;
  const std::string message = OriginSigMessage(cluster_tag, claim);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  for (const auto& key : it->second) {
    if (ctx == nullptr) break;
    EVP_MD_CTX_reset(ctx.get());
    if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key->pkey.get()) == 1 &&
        EVP_DigestVerify(ctx.get(), Bytes(signature), signature.size(), Bytes(message),
                         message.size()) == 1) {
      return SigVerdict::kValid;
    }
  }
  return SigVerdict::kInvalid;
}

}  // namespace peerbloom
