// Offline filter tools: build a summary file, query one, dedup a stream.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "cli/cli.h"
#include "cli/tool_util.h"
#include "peerbloom/bloom_filter.h"
#include "peerbloom/params.h"
#include "peerbloom/summary.h"

namespace peerbloom::cli {
namespace {

using json = nlohmann::ordered_json;

struct BuildArgs {
  std::string input = "-";
  std::string output;
  double fpr = 0.01;
  unsigned k = 0;
  std::string origin = "offline";
  KeyingArgs keying;
};

// The index hashes of the input's keys; lines that make no key are counted in *invalid.
Status HashInput(const GlobalOptions& g, const BuildArgs& a, KeyScheme* scheme,
                 std::vector<KeyHash>* hashes, uint64_t* invalid) {
  SipKey index_key;
  SquidUrlOptions squid_url;
  NginxKeyTemplate nginx_key;
  PEERBLOOM_RETURN_IF_ERROR(
      ResolveKeying(g, a.keying, nullptr, scheme, &index_key, &squid_url, &nginx_key));
  const IndexHasher hasher(index_key);
  KeyMaker maker(*scheme, squid_url, a.keying.keys, nginx_key);
  LineInput input("build");
  PEERBLOOM_RETURN_IF_ERROR(input.Open(a.input));
  std::string line;
  while (input.Next(&line)) {
    std::string_view key;
    if (!maker.Make(line, &key).ok()) {
      ++*invalid;
      continue;
    }
    hashes->push_back(hasher.Hash(key));
  }
  return Status::Ok();
}

int RunBuild(const GlobalOptions& g, const BuildArgs& a) {
  if (!IsValidNodeId(a.origin)) {
    return Error("--origin " + QuoteBytes(a.origin) + " is not a node id");
  }
  KeyScheme scheme;
  std::vector<KeyHash> hashes;
  uint64_t invalid = 0;
  Status s = HashInput(g, a, &scheme, &hashes, &invalid);
  if (!s.ok()) return Error(s);
  const unsigned k = a.k ? a.k : HashesForFpr(a.fpr);
  const double n = static_cast<double>(std::max<size_t>(hashes.size(), 1));
  const unsigned log2 = SmallestLog2Bits(n, k, DesignFpr(a.fpr), 10, 32);
  Summary summary;
  summary.origin = a.origin;
  summary.epoch = 1;
  summary.version = 1;
  summary.key_scheme = scheme;
  summary.estimated_items = hashes.size();
  s = BloomFilter::Create(log2, k, &summary.filter);
  if (!s.ok()) return Error(s);
  for (const KeyHash& h : hashes) summary.filter.Add(h);
  std::string encoded;
  s = EncodeSummary(summary, &encoded);
  if (s.ok()) s = WriteFileBytes(a.output, encoded);
  if (!s.ok()) return Error(s);
  json out = {{"output", JsonText(a.output)},
              {"keys", hashes.size()},
              {"invalid_lines", invalid},
              {"k", k},
              {"log2_bits", log2},
              {"estimated_fpr", summary.filter.EstimatedFpr()},
              {"encoded_bytes", encoded.size()}};
  if (g.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf(
        "wrote %s: %zu keys, 2^%u bits, k = %u, estimated fpr %.4g, %zu bytes "
        "(%.2f bits per key)\n",
        QuotePath(a.output).c_str(), hashes.size(), log2, k, summary.filter.EstimatedFpr(),
        encoded.size(), 8.0 * static_cast<double>(encoded.size()) / n);
  }
  if (invalid > 0) {
    std::fprintf(stderr, "peerbloom: warning: skipped %llu invalid lines\n",
                 static_cast<unsigned long long>(invalid));
  }
  return 0;
}

struct QueryArgs {
  std::string summary_path;
  std::vector<std::string> items;
  KeyingArgs keying;
};

int RunQuery(const GlobalOptions& g, const QueryArgs& a) {
  std::string bytes;
  Status s = ReadFileBytes(a.summary_path, &bytes);
  Summary summary;
  if (s.ok()) s = DecodeSummary(bytes, DecodeLimits(), &summary);
  if (!s.ok()) return Error(QuotePath(a.summary_path) + ": " + s.message());
  KeyScheme scheme;
  SipKey index_key;
  SquidUrlOptions squid_url;
  NginxKeyTemplate nginx_key;
  s = ResolveKeying(g, a.keying, &summary.key_scheme, &scheme, &index_key, &squid_url, &nginx_key);
  if (!s.ok()) return Error(s);
  const IndexHasher hasher(index_key);
  KeyMaker maker(scheme, squid_url, a.keying.keys, nginx_key);
  uint64_t present = 0;
  std::string out;
  auto test = [&](const std::string& item) {
    std::string_view key;
    const bool valid = maker.Make(item, &key).ok();
    const bool maybe = valid && summary.filter.MayContain(hasher.Hash(key));
    present += maybe ? 1 : 0;
    if (g.json) {
      json j;
      PutKey(item, &j);  // first: ordered_json keeps "key" leading as before
      j["maybe"] = maybe;
      if (!valid) j["error"] = "invalid key";
      out += j.dump() + "\n";
    } else {
      out += item + (!valid ? ": invalid key\n" : maybe ? ": maybe\n" : ": no\n");
    }
    if (out.size() > (1 << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  };
  if (a.items.size() == 1 && a.items[0] == "-") {
    LineInput input("query");
    s = input.Open("-");
    std::string line;
    while (s.ok() && input.Next(&line)) test(line);
  } else {
    for (const std::string& item : a.items) test(item);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return present > 0 ? kExitClaimed : kExitNone;
}

struct DedupArgs {
  double items = 10000000;
  double fpr = 0.001;
  std::string input = "-";
  bool stats = false;
};

int RunDedup(const GlobalOptions& g, const DedupArgs& a) {
  const unsigned k = HashesForFpr(a.fpr);
  const unsigned log2 = SmallestLog2Bits(a.items, k, DesignFpr(a.fpr), 10, kMaxLog2Bits);
  BloomFilter seen;
  Status s = BloomFilter::Create(log2, k, &seen);
  if (!s.ok()) return Error(s);
  // A random key per run: no input can be crafted to collide.
  SipKey key;
  std::random_device rd;
  for (auto& b : key) b = static_cast<uint8_t>(rd());
  const IndexHasher hasher(key);
  LineInput input("dedup");
  s = input.Open(a.input);
  if (!s.ok()) return Error(s);
  std::string line;
  uint64_t unique = 0;
  std::string out;
  while (input.Next(&line)) {
    const KeyHash h = hasher.Hash(line);
    if (seen.MayContain(h)) continue;
    seen.Add(h);
    ++unique;
    out.append(line).push_back('\n');
    if (out.size() >= (1 << 16)) {
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return kExitError;
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  if (a.stats || g.json) {
    json j = {{"lines", input.lines()},
              {"unique", unique},
              {"log2_bits", log2},
              {"k", k},
              {"estimated_fpr", seen.EstimatedFpr()}};
    std::fprintf(stderr, "%s\n", j.dump().c_str());
  }
  if (static_cast<double>(unique) > a.items) {
    std::fprintf(stderr,
                 "peerbloom: warning: %llu unique lines is more than --items %.0f; the "
                 "false-positive rate (lines wrongly dropped) is now %.3g\n",
                 static_cast<unsigned long long>(unique), a.items, seen.EstimatedFpr());
  }
  return 0;
}

}  // namespace

Runner SetUpBuild(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<BuildArgs>();
  sub->add_option("-i,--input", a->input,
                  "file of URLs (or keys with --key), one a line; '-' "
                  "for stdin")
      ->required();
  sub->add_option("-o,--output", a->output, "summary file to write")->required();
  sub->add_option("-p,--fpr", a->fpr, "target false-positive rate")->check(CLI::Range(1e-9, 0.5));
  sub->add_option("-k,--hashes", a->k, "probes per key (default: round(log2(1/fpr)))")
      ->check(CLI::Range(1u, kMaxHashes));
  sub->add_option("--origin", a->origin, "node id written into the summary");
  AddKeyingOptions(sub, &a->keying);
  return [g, a] { return RunBuild(*g, *a); };
}

Runner SetUpQuery(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<QueryArgs>();
  sub->add_option("-s,--summary", a->summary_path, "summary file")->required();
  sub->add_option("items", a->items, "URLs to test ('-' reads them from stdin)")->required();
  AddKeyingOptions(sub, &a->keying);
  return [g, a] { return RunQuery(*g, *a); };
}

Runner SetUpDedup(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<DedupArgs>();
  sub->add_option("-n,--items", a->items, "distinct lines expected (sizes the filter)")
      ->check(CLI::PositiveNumber);
  sub->add_option("-p,--fpr", a->fpr, "chance that a new line is wrongly dropped")
      ->check(CLI::Range(1e-9, 0.5));
  sub->add_option("-i,--input", a->input, "input file ('-' for stdin, the default)");
  sub->add_flag("--stats", a->stats, "print counts as JSON on stderr at the end");
  return [g, a] { return RunDedup(*g, *a); };
}

}  // namespace peerbloom::cli
