// Offline tools that need no daemon: calc, inspect, keygen.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/tool_util.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/params.h"
#include "peerbloom/summary.h"

namespace peerbloom::cli {
namespace {

using json = nlohmann::ordered_json;

struct CalcArgs {
  double items = 0;
  double fpr = 0;
  double bits = 0;
  unsigned k = 0;
};

std::string Bytes(double bits) {
  const double bytes = std::ceil(bits / 8);
  char text[64];
  if (bytes >= 1 << 30) {
    std::snprintf(text, sizeof(text), "%.0f bytes, %.2f GiB", bytes, bytes / (1 << 30));
  } else if (bytes >= 1 << 20) {
    std::snprintf(text, sizeof(text), "%.0f bytes, %.2f MiB", bytes, bytes / (1 << 20));
  } else {
    std::snprintf(text, sizeof(text), "%.0f bytes, %.2f KiB", bytes, bytes / 1024);
  }
  return text;
}

// --items and --fpr: the optimal size, and the sizes peerbloom's filters would take.
json SizeFor(const CalcArgs& a, bool json_out) {
  const double m = static_cast<double>(OptimalBits(a.items, a.fpr));
  const unsigned k = a.k ? a.k : OptimalHashes(m, a.items);
  const unsigned log2 = SmallestLog2Bits(a.items, k, DesignFpr(a.fpr), kMinLog2Bits, kMaxLog2Bits);
  const double pow2 = std::ldexp(1.0, static_cast<int>(log2));
  // filter_sizes = "exact": the fewest c x 2^j bits (c odd) meeting the same design rate.
  const std::optional<FilterSize> exact =
      SmallestSize(a.items, k, DesignFpr(a.fpr), kMinLog2Bits, kMaxLog2Bits, AllSizeMultipliers());
  const double exact_bits = exact ? static_cast<double>(exact->bits()) : pow2;
  const json out = {{"items", a.items},
                    {"bits", m},
                    {"bytes", std::ceil(m / 8)},
                    {"k", k},
                    {"fpr", FalsePositiveRate(m, a.items, k)},
                    {"bits_per_item", m / a.items},
                    {"pow2_log2_bits", log2},
                    {"pow2_fpr", FalsePositiveRate(pow2, a.items, k)},
                    {"exact_bits", exact_bits},
                    {"exact_fpr", FalsePositiveRate(exact_bits, a.items, k)}};
  if (!json_out) {
    std::printf("m = %.0f bits (%s, %.2f bits per item)\nk = %u\nfpr = %.6g\n", m, Bytes(m).c_str(),
                m / a.items, k, FalsePositiveRate(m, a.items, k));
    std::printf(
        "power-of-two size (filter_sizes = \"power-of-two\"): 2^%u = %.0f bits (%s), "
        "fpr = %.6g\n",
        log2, pow2, Bytes(pow2).c_str(), FalsePositiveRate(pow2, a.items, k));
    if (exact) {
      std::printf(
          "exact size (filter_sizes = \"exact\", the default): %u x 2^%u = %.0f bits (%s), fpr = "
          "%.6g\n",
          exact->multiplier, exact->log2, exact_bits, Bytes(exact_bits).c_str(),
          FalsePositiveRate(exact_bits, a.items, k));
    }
  }
  return out;
}

int RunCalc(const GlobalOptions& g, const CalcArgs& a) {
  const bool has_items = a.items > 0, has_fpr = a.fpr > 0, has_bits = a.bits > 0;
  if (has_fpr && !(a.fpr < 1)) return Error("--fpr must be in (0, 1)");
  json out;
  if (has_items && has_fpr && !has_bits) {
    out = SizeFor(a, g.json);
  } else if (has_bits && has_items && !has_fpr) {
    const unsigned k = a.k ? a.k : OptimalHashes(a.bits, a.items);
    const double f = FalsePositiveRate(a.bits, a.items, k);
    out = {{"items", a.items}, {"bits", a.bits}, {"k", k}, {"fpr", f}};
    if (!g.json) std::printf("fpr = %.6g\nk = %u\n", f, k);
  } else if (has_bits && has_fpr && !has_items) {
    unsigned best_k = a.k ? a.k : 1;
    double best = Capacity(a.bits, best_k, a.fpr);
    for (unsigned k = 1; a.k == 0 && k <= kMaxHashes; ++k) {
      const double c = Capacity(a.bits, k, a.fpr);
      if (c > best) {
        best = c;
        best_k = k;
      }
    }
    out = {{"bits", a.bits}, {"fpr", a.fpr}, {"k", best_k}, {"capacity", std::floor(best)}};
    if (!g.json) std::printf("capacity = %.0f items\nk = %u\n", std::floor(best), best_k);
  } else {
    return Error("give exactly two of --items, --fpr and --bits");
  }
  if (g.json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

json DescribeSummary(const Summary& s, size_t encoded_bytes, const MessageHeader& h) {
  const double n = static_cast<double>(s.estimated_items);
  return {{"kind", "full"},
          {"origin", s.origin},
          {"epoch", s.epoch},
          {"version", s.version},
          {"format_version", h.format_version},
          {"body_encoding", std::string(BodyEncodingName(h.body_encoding))},
          {"key_scheme", std::string(KeySchemeName(s.key_scheme))},
          {"hash_scheme", static_cast<int>(s.hash_scheme)},
          {"k", s.filter.k()},
          {"log2_bits", s.filter.log2_bits()},
          {"bits", s.filter.bits()},
          {"set_bits", s.filter.PopCount()},
          {"fill", s.filter.FillRatio()},
          {"estimated_items", s.estimated_items},
          {"items_from_fill", s.filter.EstimatedItems()},
          {"estimated_fpr", s.filter.EstimatedFpr()},
          {"encoded_bytes", encoded_bytes},
          {"encoded_bits_per_item", n > 0 ? 8.0 * static_cast<double>(encoded_bytes) / n : 0.0}};
}

int RunInspect(const GlobalOptions& g, const std::string& path) {
  std::string bytes;
  Status s = ReadFileBytes(path, &bytes);
  if (!s.ok()) return Error(s);
  MessageHeader header;
  s = PeekHeader(bytes, DecodeLimits(), &header);
  if (!s.ok()) return Error(QuotePath(path) + ": " + s.message());
  json out;
  if (header.kind == MessageKind::kDelta) {
    SummaryDelta d;
    s = DecodeDelta(bytes, DecodeLimits(), &d);
    if (!s.ok()) return Error(QuotePath(path) + ": " + s.message());
    out = {{"kind", "delta"},
           {"origin", d.origin},
           {"epoch", d.epoch},
           {"base_version", d.base_version},
           {"version", d.version},
           {"k", d.k},
           {"log2_bits", d.log2_bits},
           {"flipped", d.flipped.size()},
           {"estimated_items", d.estimated_items},
           {"encoded_bytes", bytes.size()}};
  } else {
    Summary summary;
    s = DecodeSummary(bytes, DecodeLimits(), &summary);
    if (!s.ok()) return Error(QuotePath(path) + ": " + s.message());
    out = DescribeSummary(summary, bytes.size(), header);
  }
  if (g.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (auto it = out.begin(); it != out.end(); ++it) {
      std::printf("%-22s %s\n", it.key().c_str(),
                  it->is_string() ? it->get<std::string>().c_str() : it->dump().c_str());
    }
  }
  return 0;
}

// The allow-list line of an existing key file, for the node it speaks for: what every node's
// authorized_keys needs of this one (docs/deploy-squid.md collects these lines).
int PrintAuthorizedLine(const GlobalOptions& g, const std::string& path,
                        const std::string& node_id) {
  if (!IsValidNodeId(node_id) || node_id.rfind("squid:", 0) == 0) {
    return Error("node id " + QuoteBytes(node_id) +
                 " is not 1-64 characters of [A-Za-z0-9._:-] outside 'squid:'");
  }
  client::CurveKeyPair pair;
  const Status s = client::ReadKeyFile(path, &pair);
  if (!s.ok()) return Error(s);
  std::string line = pair.public_key + " " + node_id;
  if (!pair.sign_public_key.empty()) line += " sign=" + pair.sign_public_key;
  if (g.json) {
    std::printf("%s\n", json({{"authorized_keys_line", line}}).dump(2).c_str());
  } else {
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

int RunKeygen(const GlobalOptions& g, const std::string& output, bool force,
              const std::string& add_sign_key) {
  client::CurveKeyPair pair;
  Status s;
  if (!add_sign_key.empty()) {
    s = client::AddSignKeys(add_sign_key, &pair);
    if (!s.ok()) return Error(s);
  } else {
    s = client::GenerateCurveKeyPair(&pair);
    if (s.ok()) s = client::GenerateSignKeys(&pair);
    if (!s.ok()) return Error(s);
  }
  if (!output.empty()) {
    s = client::WriteKeyFile(output, pair, force);
    if (!s.ok()) return Error(s.message() + (force ? "" : " (use --force to overwrite)"));
  }
  const std::string written = add_sign_key.empty() ? output : add_sign_key;
  if (g.json) {
    json out = {{"public_key", pair.public_key},
                {"sign_public_key", pair.sign_public_key},
                {"authorized_keys_line", client::PublicLine(pair)}};
    if (written.empty()) {
      out["secret_key"] = pair.secret_key;
      out["sign_secret_key"] = pair.sign_secret_key;
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else if (written.empty()) {
    std::printf("public-key = %s\nsecret-key = %s\nsign-public-key = %s\nsign-secret-key = %s\n",
                pair.public_key.c_str(), pair.secret_key.c_str(), pair.sign_public_key.c_str(),
                pair.sign_secret_key.c_str());
  } else {
    std::printf(
        "wrote %s (secret, mode 0600) and %s\npublic key: %s\nsign key: %s\n"
        "authorized_keys line: %s\n",
        QuotePath(written).c_str(), QuotePath(written + ".pub").c_str(), pair.public_key.c_str(),
        pair.sign_public_key.c_str(), client::PublicLine(pair).c_str());
  }
  return 0;
}

}  // namespace

Runner SetUpCalc(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<CalcArgs>();
  sub->add_option("-n,--items", a->items, "number of items")->check(CLI::PositiveNumber);
  sub->add_option("-p,--fpr", a->fpr, "false-positive rate, e.g. 0.01")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("-m,--bits", a->bits, "filter size in bits")->check(CLI::PositiveNumber);
  sub->add_option("-k,--hashes", a->k, "probes per key (default: the optimum)")
      ->check(CLI::Range(1u, kMaxHashes));
  return [g, a] { return RunCalc(*g, *a); };
}

Runner SetUpInspect(CLI::App* sub, const GlobalOptions* g) {
  auto path = std::make_shared<std::string>();
  sub->add_option("file", *path, "summary file (from 'peerbloom build' or 'summary -o')")
      ->required();
  return [g, path] { return RunInspect(*g, *path); };
}

Runner SetUpKeygen(CLI::App* sub, const GlobalOptions* g) {
  auto output = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  sub->add_option("-o,--output", *output,
                  "key file to write (FILE and FILE.pub); prints the pair when absent");
  sub->add_flag("--force", *force, "overwrite existing files");
  auto add_sign_key = std::make_shared<std::string>();
  sub->add_option("--add-sign-key", *add_sign_key,
                  "add Ed25519 sign keys to the existing key FILE (for signed origins)")
      ->excludes("--output");
  auto line = std::make_shared<std::vector<std::string>>();
  sub->add_option("--authorized-line", *line,
                  "print the authorized_keys line of the existing key FILE for NODE-ID")
      ->expected(2)
      ->type_name("FILE NODE-ID")
      ->excludes("--output", "--add-sign-key", "--force");
  return [g, output, force, add_sign_key, line] {
    if (!line->empty()) return PrintAuthorizedLine(*g, (*line)[0], (*line)[1]);
    return RunKeygen(*g, *output, *force, *add_sign_key);
  };
}

}  // namespace peerbloom::cli
