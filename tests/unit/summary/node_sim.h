// A simulated node (counting filter, summary builder, the keys it holds) and a peer that
// receives its publications over the wire.
#ifndef PEERBLOOM_TESTS_UNIT_SUMMARY_NODE_SIM_H_
#define PEERBLOOM_TESTS_UNIT_SUMMARY_NODE_SIM_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/summary.h"
#include "peerbloom/summary_builder.h"

namespace peerbloom::testing_util {

// A node: its counting filter, the builder, and the keys its cache holds (with repeats when
// the same key was added twice).
struct Node {
  Node(unsigned log2_counters, unsigned k, SummaryBuilderOptions options, unsigned multiplier = 1)
      : filter(log2_counters, k, multiplier), builder(&filter, std::move(options)) {}
  void Add(const KeyHash& h) {
    filter.Add(h);
    builder.Touch(h);
    held.push_back(h);
  }
  void RemoveAt(size_t i) {
    ASSERT_TRUE(filter.Remove(held[i]));
    builder.Touch(held[i]);
    held[i] = held.back();
    held.pop_back();
  }
  CountingBloomFilter filter;
  SummaryBuilder builder;
  std::vector<KeyHash> held;
};

// A peer that receives every publication over the wire.
struct Receiver {
  void Take(const SummaryBuilder& builder, const Publication& p, BodyEncoding encoding) {
    std::string bytes;
    if (p.full) {
      ASSERT_TRUE(EncodeSummary(builder.current(), &bytes, encoding).ok());
      const Status st = DecodeSummary(bytes, DecodeLimits{}, &summary);
      ASSERT_TRUE(st.ok()) << st.ToString();
      digest = FilterDigest(summary.filter);
      return;
    }
    ASSERT_TRUE(EncodeDelta(p.delta, &bytes).ok());
    SummaryDelta d;
    ASSERT_TRUE(DecodeDelta(bytes, DecodeLimits{}, &d).ok());
    const Status st = ApplyDelta(d, &summary, &digest);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  Summary summary;
  uint64_t digest = 0;
};

}  // namespace peerbloom::testing_util

#endif  // PEERBLOOM_TESTS_UNIT_SUMMARY_NODE_SIM_H_
