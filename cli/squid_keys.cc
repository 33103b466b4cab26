// squid-keys: the store keys Squid ufs/aufs/diskd cache_dirs hold, read from the disk, in
// store.log's key form; for rebuilding a live set when store.log lines were lost.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "peerbloom/squid_cache_dir.h"
#include "peerbloom/squid_key_set.h"

namespace peerbloom::cli {
namespace {

using json = nlohmann::ordered_json;

struct SquidKeysArgs {
  std::vector<std::string> cache_dirs;
  std::string source = "both";
  bool urls = false;
};

// URLs come from files on disk: bytes that would break the one-line format (controls,
// spaces, non-ASCII) are percent-encoded.
std::string PrintableUrl(std::string_view url) {
  std::string out;
  for (char c : url) {
    const auto b = static_cast<unsigned char>(c);
    if (b > 0x20 && b < 0x7F) {
      out.push_back(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", b);
      out += hex;
    }
  }
  return out;
}

json FileStatsJson(const CacheFileStats& f) {
  return {{"directories", f.directories},
          {"files_read", f.files_read},
          {"objects", f.objects},
          {"duplicate_keys", f.duplicate_keys},
          {"refused", f.refused},
          {"incomplete", f.incomplete},
          {"private_keys", f.private_keys},
          {"vanished", f.vanished},
          {"other_entries", f.other_entries}};
}

json SwapStateJson(const SwapStateStats& s) {
  json j = {{"records", s.records},
            {"adds", s.adds},
            {"dels", s.dels},
            {"invalid", s.invalid},
            {"private_adds", s.private_adds},
            {"unmatched_dels", s.unmatched_dels},
            {"reused_files", s.reused_files},
            {"superseded_adds", s.superseded_adds},
            {"trailing_bytes", s.trailing_bytes}};
  if (s.first_invalid) j["first_invalid"] = s.first_invalid->message();
  return j;
}

json ReportJson(const std::string& dir, size_t keys, const CacheDirReport& r) {
  json j = {
      {"cache_dir", dir}, {"source", std::string(CacheDirSourceName(r.source))}, {"keys", keys}};
  if (r.source != CacheDirSource::kSwapState) j["files"] = FileStatsJson(r.files);
  if (r.source != CacheDirSource::kFiles) j["swap_state"] = SwapStateJson(r.swap_state);
  if (r.source == CacheDirSource::kBoth) {
    j["cross_check"] = {{"confirmed", r.confirmed},
                        {"indexed_missing_file", r.indexed_missing_file},
                        {"indexed_other_key", r.indexed_other_key},
                        {"files_not_indexed", r.files_not_indexed}};
  }
  json problems = json::array();
  for (const CacheDirProblem& p : r.files.problems) {
    problems.push_back({{"path", p.path}, {"error", p.status.message()}});
  }
  j["refused"] = problems;
  return j;
}

void PrintReport(const std::string& dir, size_t keys, const CacheDirReport& r) {
  std::fprintf(stderr, "squid-keys: '%s': %zu keys (source '%s')\n", dir.c_str(), keys,
               std::string(CacheDirSourceName(r.source)).c_str());
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  if (r.source != CacheDirSource::kSwapState) {
    const CacheFileStats& f = r.files;
    std::fprintf(stderr,
                 "  files: %llu read, %llu objects, %llu duplicate keys, %llu refused, %llu "
                 "incomplete, %llu private, %llu vanished, %llu other entries\n",
                 u(f.files_read), u(f.objects), u(f.duplicate_keys), u(f.refused), u(f.incomplete),
                 u(f.private_keys), u(f.vanished), u(f.other_entries));
  }
  if (r.source != CacheDirSource::kFiles) {
    const SwapStateStats& s = r.swap_state;
    std::fprintf(stderr,
                 "  swap.state: %llu records, %llu adds, %llu dels, %llu invalid, %llu "
                 "trailing bytes\n",
                 u(s.records), u(s.adds), u(s.dels), u(s.invalid), u(s.trailing_bytes));
    if (s.first_invalid) {
      std::fprintf(stderr, "  swap.state: first invalid record: %s\n",
                   s.first_invalid->message().c_str());
    }
  }
  if (r.source == CacheDirSource::kBoth) {
    std::fprintf(stderr,
                 "  cross-check: %llu confirmed, %llu indexed without a file, %llu indexed "
                 "with another key in the file, %llu files not indexed\n",
                 u(r.confirmed), u(r.indexed_missing_file), u(r.indexed_other_key),
                 u(r.files_not_indexed));
  }
  for (const CacheDirProblem& p : r.files.problems) {
    std::fprintf(stderr, "  refused '%s': %s\n", p.path.c_str(), p.status.message().c_str());
  }
  if (r.files.refused > r.files.problems.size()) {
    std::fprintf(stderr, "  ... and %llu more refused\n",
                 u(r.files.refused - r.files.problems.size()));
  }
}

int RunSquidKeys(const GlobalOptions& g, const SquidKeysArgs& a) {
  CacheDirOptions options;
  const auto source = ParseCacheDirSource(a.source);
  if (!source) {
    return Error("--source '" + a.source + "' is not one of 'both', 'files', 'swap-state'");
  }
  options.source = *source;
  options.want_urls = a.urls;
  if (a.urls && *source == CacheDirSource::kSwapState) {
    return Error("--urls needs the files: swap.state holds no URLs (use --source both or files)");
  }
  SquidKeySet printed;
  std::string out;
  for (const std::string& dir : a.cache_dirs) {
    std::vector<CacheDirKey> keys;
    CacheDirReport report;
    Status s = ReadSquidCacheDir(dir, options, &keys, &report);
    if (!s.ok()) {
      return Error(s.IsNotFound() && *source == CacheDirSource::kBoth
                       ? s.message() + " (use --source files to read the files alone)"
                       : s.message());
    }
    for (const CacheDirKey& k : keys) {
      if (!printed.Insert(k.key)) continue;  // another cache_dir gave it already
      if (g.json) {
        json j = {{"key", SquidKeyHex(k.key)}};
        if (a.urls) j["url"] = PrintableUrl(k.url);
        out += j.dump() + "\n";
      } else {
        out += SquidKeyHex(k.key);
        if (a.urls) out += " " + PrintableUrl(k.url);
        out += "\n";
      }
      if (out.size() >= (1 << 16)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
    if (g.json) {
      std::fprintf(stderr, "%s\n", ReportJson(dir, keys.size(), report).dump().c_str());
    } else {
      PrintReport(dir, keys.size(), report);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) return Error("cannot write the keys to standard output");
  return 0;
}

}  // namespace

Runner SetUpSquidKeys(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<SquidKeysArgs>();
  sub->add_option("cache_dir", a->cache_dirs, "Squid ufs, aufs or diskd cache_dir(s)")->required();
  sub->add_option("--source", a->source,
                  "'both' (swap.state entries whose file holds the key; default), 'files' "
                  "or 'swap-state'");
  sub->add_flag("--urls", a->urls, "print each key's URL after it (from the file)");
  return [g, a] { return RunSquidKeys(*g, *a); };
}

}  // namespace peerbloom::cli
