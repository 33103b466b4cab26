// Nanoseconds per key hash, for the choice of index hash (docs/hashing.md).
//
// Inputs: an 80-byte URL (a typical cached object's URL) and a 16-byte key (what the
// squid-md5 key scheme hashes). Candidates:
//   siphash13_128   ours, the index hash (keyed PRF)
//   siphash24_128   ours, the conservative SipHash variant
//   xxh3_128        libxxhash, seeded; fast but NOT a PRF: a seed does not stop an attacker
//                   who can observe positions from crafting collisions
//   md5_ours        Md5WithPrefix, as KeyEncoder does (the squid-md5 scheme)
//   md5_lanes_x4    Md5WithPrefixLanes: four digests side by side per iteration, as batched
//                   who-has does (divide by 4 for one digest)
//   md5_reused      EVP MD5 with a reused context
//   md5_fetch       EVP_MD_fetch("MD5") + a fresh context per call
//   sha256          EVP SHA-256 with a reused context
// and, on whole URLs of about 80 bytes (some with an upper-case host or a default port):
//   key_from_url    KeyEncoder::FromUrl under squid-md5: a URL to its 16-byte store key, the
//                   cost of a who-has, add or remove given as a URL
//   canonical_url   CanonicalSquidUrl alone, the part of key_from_url that is not MD5
//
// Usage: hash_bench [Google Benchmark flags]. Without flags it runs with
// --benchmark_repetitions=5 --benchmark_report_aggregates_only=true (medians reported).
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/md5.h"
#include "peerbloom/squid_url.h"

namespace peerbloom {
namespace {

// 64 distinct inputs of the given length (the tail of a URL, so the varying digits are in
// it), so that no predictor learns a single input.
std::vector<std::string> Inputs(size_t len) {
  std::vector<std::string> inputs;
  for (int i = 0; i < 64; ++i) {
    std::string s = "http://cdn.example.com/assets/images/2024/03/product-photo-large.jpg?v=";
    while (s.size() < len + 4) s += std::to_string(1000 + i);
    inputs.push_back(s.substr(s.size() - len));
  }
  return inputs;
}

template <typename Fn>
void Run(benchmark::State& state, size_t len, Fn&& fn) {
  const std::vector<std::string> inputs = Inputs(len);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fn(inputs[i]));
    i = (i + 1) & 63;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * len));
}

const SipKey& Key() {
  static const SipKey key = DeriveIndexKey("hash bench secret");
  return key;
}

void SipHash13(benchmark::State& state, size_t len) {
  const IndexHasher hasher(Key());
  Run(state, len, [&](const std::string& s) { return hasher.Hash(s); });
}

void SipHash24(benchmark::State& state, size_t len) {
  Run(state, len,
      [&](const std::string& s) { return SipHash128(2, 4, Key(), s.data(), s.size()); });
}

void Xxh3(benchmark::State& state, size_t len) {
  const uint64_t seed = 0x0123456789abcdefULL;
  Run(state, len, [&](const std::string& s) {
    const XXH128_hash_t h = XXH3_128bits_withSeed(s.data(), s.size(), seed);
    return h.low64 ^ h.high64;
  });
}

void Md5Ours(benchmark::State& state, size_t len) {
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  Run(state, len, [&](const std::string& s) { return encoder.SquidStoreKey(s)[0]; });
}

void Md5LanesX4(benchmark::State& state, size_t len) {
  const std::vector<std::string> inputs = Inputs(len);
  std::string_view views[kMd5Lanes];
  Md5Digest out[kMd5Lanes];
  size_t i = 0;
  for (auto _ : state) {
    for (size_t l = 0; l < kMd5Lanes; ++l) views[l] = inputs[(i + l) & 63];
    Md5WithPrefixLanes(kSquidMethodGet, views, out);
    benchmark::DoNotOptimize(out);
    i = (i + kMd5Lanes) & 63;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * len * kMd5Lanes));
}

void Md5Reused(benchmark::State& state, size_t len) {
  EVP_MD* md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (md5 == nullptr || ctx == nullptr) std::abort();
  Run(state, len, [&](const std::string& s) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    const uint8_t method = kSquidMethodGet;
    EVP_DigestInit_ex(ctx, md5, nullptr);
    EVP_DigestUpdate(ctx, &method, 1);
    EVP_DigestUpdate(ctx, s.data(), s.size());
    EVP_DigestFinal_ex(ctx, digest, &digest_len);
    return digest[0];
  });
  EVP_MD_CTX_free(ctx);
  EVP_MD_free(md5);
}

void Md5Fetch(benchmark::State& state, size_t len) {
  Run(state, len, [&](const std::string& s) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    EVP_MD* md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, md5, nullptr);
    EVP_DigestUpdate(ctx, s.data(), s.size());
    EVP_DigestFinal_ex(ctx, digest, &digest_len);
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md5);
    return digest[0];
  });
}

void Sha256(benchmark::State& state, size_t len) {
  EVP_MD* sha = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (sha == nullptr || ctx == nullptr) std::abort();
  Run(state, len, [&](const std::string& s) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    EVP_DigestInit_ex(ctx, sha, nullptr);
    EVP_DigestUpdate(ctx, s.data(), s.size());
    EVP_DigestFinal_ex(ctx, digest, &digest_len);
    return digest[0];
  });
  EVP_MD_CTX_free(ctx);
  EVP_MD_free(sha);
}

// 64 distinct absolute URLs of about 80 bytes; every fourth spells its host in upper case and
// every eighth names the default port, as typed URLs sometimes do.
std::vector<std::string> Urls() {
  std::vector<std::string> urls;
  for (int i = 0; i < 64; ++i) {
    std::string host = i % 4 == 0 ? "CDN.Example.COM" : "cdn.example.com";
    if (i % 8 == 0) host += ":80";
    urls.push_back("http://" + host +
                   "/assets/images/2024/03/product-photo-large.jpg?v=" + std::to_string(1000 + i));
  }
  return urls;
}

void KeyFromUrl(benchmark::State& state) {
  const std::vector<std::string> urls = Urls();
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(encoder.FromUrl(urls[i]).data());
    bytes += urls[i].size();
    i = (i + 1) & 63;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void CanonicalUrl(benchmark::State& state) {
  const std::vector<std::string> urls = Urls();
  const SquidUrlOptions options;
  std::string out;
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(CanonicalSquidUrl(urls[i], options, &out).ok());
    benchmark::DoNotOptimize(out.data());
    bytes += urls[i].size();
    i = (i + 1) & 63;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void Register() {
  struct Candidate {
    const char* name;
    void (*fn)(benchmark::State&, size_t);
  };
  const Candidate candidates[] = {
      {"siphash13_128", SipHash13}, {"siphash24_128", SipHash24}, {"xxh3_128", Xxh3},
      {"md5_ours", Md5Ours},        {"md5_lanes_x4", Md5LanesX4}, {"md5_reused", Md5Reused},
      {"md5_fetch", Md5Fetch},      {"sha256", Sha256},
  };
  for (size_t len : {size_t{80}, size_t{16}}) {
    for (const Candidate& c : candidates) {
      const std::string name = std::string(c.name) + "/" + std::to_string(len) + "B";
      benchmark::RegisterBenchmark(name.c_str(), c.fn, len);
    }
  }
  benchmark::RegisterBenchmark("key_from_url/80B", KeyFromUrl);
  benchmark::RegisterBenchmark("canonical_url/80B", CanonicalUrl);
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=5";
  std::string aggregates = "--benchmark_report_aggregates_only=true";
  if (argc == 1) {
    args.push_back(reps.data());
    args.push_back(aggregates.data());
  }
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;
  peerbloom::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
