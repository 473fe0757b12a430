#include "acco/cluster/fusion.hpp"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace acco::cluster {
namespace {

SizePoint at(std::uint64_t bytes, double seconds) {
  SizePoint p;
  p.bytes = bytes;
  p.seconds = seconds;
  return p;
}

TEST(FitPoints, RecoversTheLineOfExactTimes) {
  // alpha 20 us, beta 10 GB/s
  std::vector<SizePoint> points;
  for (std::uint64_t s = 1024; s <= (std::uint64_t{64} << 20); s *= 4) {
    points.push_back(at(s, 20e-6 + static_cast<double>(s) / 10e9));
  }
  auto fit = fit_points(points);
  ASSERT_TRUE(fit) << fit.error().message;
  EXPECT_NEAR(fit->alpha_seconds, 20e-6, 1e-9);
  EXPECT_NEAR(fit->beta_bytes_per_second, 10e9, 1e3);
  // 10 alpha beta = 2 MB -> 2 MiB
  EXPECT_EQ(fusion_threshold(*fit), std::uint64_t{2} << 20);
}

TEST(FitPoints, AFasterOrLowerLatencyLinkMovesTheThreshold) {
  EXPECT_EQ(fusion_threshold({1e-6, 1e9}), kMinFusionThreshold);            // 10 KB: clamped up
  EXPECT_EQ(fusion_threshold({5e-6, 25e9 / 8}), std::uint64_t{256} << 10);  // 156 KB
  EXPECT_EQ(fusion_threshold({50e-6, 50e9}), std::uint64_t{32} << 20);      // 25 MB
  EXPECT_EQ(fusion_threshold({1e-3, 50e9}), kMaxFusionThreshold);           // 500 MB: clamped
}

TEST(FitPoints, RefusesTimesThatDoNotGrowOrTooFewSizes) {
  EXPECT_FALSE(fit_points({at(1024, 1e-5)}));
  EXPECT_FALSE(fit_points({at(1024, 1e-5), at(1024, 2e-5)}));
  const auto flat = fit_points({at(1024, 2e-5), at(4096, 1e-5)});
  ASSERT_FALSE(flat);
  EXPECT_NE(flat.error().message.find("does not grow with size"), std::string::npos);
}

// A one-rank communicator that counts its collectives and doubles what it reduces (as a sum
// over two ranks holding the same values would), so a result copied back to the wrong buffer or
// not at all shows.
class Doubling final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 2; }
  int nodes() const override { return 1; }
  int node() const override { return 0; }
  std::string backend() const override { return "doubling"; }
  Capabilities capabilities() const override { return {}; }
  double seconds() const override { return 0; }
  Status barrier() override { return {}; }
  Status run(Op op, const float* send, float* recv, std::size_t count) override {
    EXPECT_EQ(op, Op::kAllReduce);
    counts.push_back(count);
    for (std::size_t i = 0; i < count; ++i) {
      recv[i] = 2 * send[i];
    }
    return {};
  }
  Result<std::vector<double>> allgather(double v) override { return std::vector<double>{v, v}; }
  Result<std::vector<std::string>> gather(const std::string& t) override {
    return std::vector<std::string>{t, t};
  }
  Status broadcast(std::span<std::byte> /*d*/, int /*root*/) override { return {}; }
  Status exchange(int /*p*/, std::span<const std::byte> /*s*/,
                  std::span<std::byte> /*r*/) override {
    return {};
  }
  Status post(int /*p*/, int /*t*/, std::vector<std::byte> /*d*/) override {
    return fail(Errc::kUnsupported, "no messages here");
  }
  Result<std::optional<Message>> poll() override { return std::optional<Message>{}; }
  std::size_t pending_sends() override { return 0; }
  Status post_payload(int /*p*/, int /*t*/, std::vector<std::byte> /*h*/,
                      std::span<const std::byte> /*d*/) override {
    return fail(Errc::kUnsupported, "no messages here");
  }
  bool sending_payload(const void* /*p*/) override { return false; }
  Status take_payload(const Message& /*m*/, std::span<std::byte> /*into*/) override {
    return fail(Errc::kUnsupported, "no messages here");
  }
  std::vector<std::size_t> counts;
};

TEST(FusedAllReduce, PacksSmallOnesUpToTheThresholdAndCopiesEachBack) {
  Doubling comm;
  auto fused = FusedAllReduce::make(comm, {.threshold_bytes = 64});  // 16 floats
  ASSERT_TRUE(fused);
  std::vector<std::vector<float>> buffers;
  for (int b = 0; b < 5; ++b) {
    buffers.emplace_back(6, static_cast<float>(b + 1));  // 24 bytes each
  }
  for (auto& b : buffers) {
    ASSERT_TRUE(fused->add(b.data(), b.size()));
  }
  EXPECT_EQ(fused->pending(), 1U);  // 2 + 2 went, the fifth waits
  ASSERT_TRUE(fused->flush());
  EXPECT_EQ(comm.counts, (std::vector<std::size_t>{12, 12, 6}));
  for (std::size_t b = 0; b < buffers.size(); ++b) {
    for (const float v : buffers[b]) {
      EXPECT_EQ(v, 2.0F * static_cast<float>(b + 1)) << "buffer " << b;
    }
  }
  EXPECT_EQ(fused->stats().queued, 5U);
  EXPECT_EQ(fused->stats().collectives, 3U);
  EXPECT_EQ(fused->stats().fused_bytes, 120U);
}

TEST(FusedAllReduce, ALargeOneRunsAloneAfterWhatIsQueued) {
  Doubling comm;
  auto fused = FusedAllReduce::make(comm, {.threshold_bytes = 64});
  ASSERT_TRUE(fused);
  std::vector<float> small(2, 1.0F);
  std::vector<float> large(32, 3.0F);
  ASSERT_TRUE(fused->add(small.data(), small.size()));
  ASSERT_TRUE(fused->add(large.data(), large.size()));
  EXPECT_EQ(comm.counts, (std::vector<std::size_t>{2, 32}));  // order kept
  EXPECT_EQ(small[0], 2.0F);
  EXPECT_EQ(large[31], 6.0F);
  EXPECT_EQ(fused->pending(), 0U);
  ASSERT_TRUE(fused->flush());  // nothing left: no collective
  EXPECT_EQ(comm.counts.size(), 2U);
}

TEST(FusedAllReduce, BadInputIsRefused) {
  Doubling comm;
  EXPECT_FALSE(FusedAllReduce::make(comm, {.threshold_bytes = 2}));
  auto fused = FusedAllReduce::make(comm, {});
  ASSERT_TRUE(fused);
  EXPECT_FALSE(fused->add(nullptr, 3));
  EXPECT_TRUE(fused->add(nullptr, 0));
}

TEST(FusionBuckets, TensorsAreViewsIntoBucketsReducedInPlace) {
  Doubling comm;
  // 64-byte buckets (16 floats): 6 + 6, then 6 + 0 + 4, then 20 alone, then 3.
  const std::vector<std::size_t> counts = {6, 6, 6, 0, 4, 20, 3};
  auto buckets = FusionBuckets::make(comm, counts, {.threshold_bytes = 64});
  ASSERT_TRUE(buckets);
  ASSERT_EQ(buckets->size(), counts.size());
  EXPECT_EQ(buckets->buckets(), 4U);
  for (std::size_t t = 0; t < counts.size(); ++t) {
    const auto view = buckets->tensor(t);
    ASSERT_EQ(view.size(), counts[t]);
    std::fill(view.begin(), view.end(), static_cast<float>(t + 1));
  }
  // Views of one bucket follow each other; the large one starts a bucket of its own.
  EXPECT_EQ(buckets->tensor(1).data(), buckets->tensor(0).data() + 6);
  EXPECT_NE(buckets->tensor(2).data(), buckets->tensor(1).data() + 6);
  EXPECT_EQ(buckets->tensor(4).data(), buckets->tensor(2).data() + 6);
  ASSERT_TRUE(buckets->allreduce());
  EXPECT_EQ(comm.counts, (std::vector<std::size_t>{12, 10, 20, 3}));
  for (std::size_t t = 0; t < counts.size(); ++t) {
    for (const float v : buckets->tensor(t)) {
      EXPECT_EQ(v, 2.0F * static_cast<float>(t + 1)) << "tensor " << t;
    }
  }
  EXPECT_EQ(buckets->stats().collectives, 4U);
  EXPECT_EQ(buckets->stats().fused_bytes, 180U);
  EXPECT_TRUE(buckets->tensor(counts.size()).empty());
  EXPECT_FALSE(FusionBuckets::make(comm, counts, {.threshold_bytes = 3}));
}

TEST(FusionBuckets, PackLikeTheFusedAllReduce) {
  const std::vector<std::size_t> counts = {5, 5, 5, 30, 1, 1, 9, 2};
  Doubling packed;
  auto fused = FusedAllReduce::make(packed, {.threshold_bytes = 40});  // 10 floats
  ASSERT_TRUE(fused);
  std::vector<std::vector<float>> buffers;
  for (const std::size_t n : counts) {
    buffers.emplace_back(n, 1.0F);
  }
  for (auto& b : buffers) {
    ASSERT_TRUE(fused->add(b.data(), b.size()));
  }
  ASSERT_TRUE(fused->flush());
  Doubling viewed;
  auto buckets = FusionBuckets::make(viewed, counts, {.threshold_bytes = 40});
  ASSERT_TRUE(buckets);
  ASSERT_TRUE(buckets->allreduce());
  EXPECT_EQ(viewed.counts, packed.counts);
}

}  // namespace
}  // namespace acco::cluster
