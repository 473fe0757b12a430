#include "acco/cluster/collective_bench.hpp"

#include <optional>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/collective_request.hpp"

namespace acco::cluster {
namespace {

CollectiveOptions small(std::vector<Op> ops) {
  CollectiveOptions o;
  o.ops = std::move(ops);
  o.min_bytes = 8;
  o.max_bytes = 4096;
  o.factor = 4;
  o.warmup = 1;
  o.iters = 2;
  return o;
}

TEST(RunCollectives, OneRankRunsEveryOpAndChecksItsResult) {
  auto comm = self_communicator();
  auto run = run_collectives(*comm, small({kOps.begin(), kOps.end()}), {});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->ranks, 1);
  EXPECT_EQ(run->backend, "self");
  ASSERT_EQ(run->ops.size(), kOps.size());
  for (const OpResult& r : run->ops) {
    ASSERT_EQ(r.points.size(), 5U) << to_string(r.op);  // 8, 32, 128, 512, 2048
    EXPECT_EQ(r.points.front().bytes, 8U);
    EXPECT_EQ(r.points.front().count, 2U);
    EXPECT_EQ(r.summary.verdict, Verdict::kSingleRank);
    for (const SizePoint& p : r.points) {
      EXPECT_EQ(p.wrong, 0U);
      EXPECT_GT(p.seconds, 0);
      EXPECT_EQ(p.busbw, 0);  // one rank: no bus
    }
  }
  EXPECT_EQ(run->wrong, 0U);
}

// One rank whose collectives come back with one element off: the check must count it.
class OffByOne final : public Communicator {
 public:
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  int nodes() const override { return 1; }
  int node() const override { return 0; }
  std::string backend() const override { return "off-by-one"; }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  double seconds() const override { return inner_->seconds(); }
  Status barrier() override { return {}; }
  Status run(Op op, const float* send, float* recv, std::size_t count) override {
    ACCO_RETURN_IF_ERROR(inner_->run(op, send, recv, count));
    recv[count - 1] += 1;
    return {};
  }
  Result<std::vector<double>> allgather(double v) override { return inner_->allgather(v); }
  Result<std::vector<std::string>> gather(const std::string& t) override {
    return inner_->gather(t);
  }
  Status broadcast(std::span<std::byte> d, int root) override { return inner_->broadcast(d, root); }
  Status exchange(int peer, std::span<const std::byte> s, std::span<std::byte> r) override {
    return inner_->exchange(peer, s, r);
  }
  Status post(int peer, int tag, std::vector<std::byte> d) override {
    return inner_->post(peer, tag, std::move(d));
  }
  Result<std::optional<Message>> poll() override { return inner_->poll(); }
  std::size_t pending_sends() override { return inner_->pending_sends(); }
  Status post_payload(int peer, int tag, std::vector<std::byte> h,
                      std::span<const std::byte> p) override {
    return inner_->post_payload(peer, tag, std::move(h), p);
  }
  bool sending_payload(const void* p) override { return inner_->sending_payload(p); }
  Status take_payload(const Message& m, std::span<std::byte> into) override {
    return inner_->take_payload(m, into);
  }

 private:
  std::unique_ptr<Communicator> inner_ = self_communicator();
};

TEST(RunCollectives, AWrongElementIsCountedAndReported) {
  OffByOne comm;
  auto run = run_collectives(comm, small({Op::kAllReduce}), {});
  ASSERT_TRUE(run);
  EXPECT_EQ(run->wrong, 5U);  // one per size
  EXPECT_NE(to_text(*run).find("# Out of bounds values : 5 FAILED"), std::string::npos);
  auto unchecked = small({Op::kAllReduce});
  unchecked.check = false;
  auto run2 = run_collectives(comm, unchecked, {});
  ASSERT_TRUE(run2);
  EXPECT_EQ(run2->wrong, 0U);
}

TEST(RunCollectives, BadOptionsNameTheField) {
  auto comm = self_communicator();
  auto o = small({Op::kAllReduce});
  o.factor = 1;
  auto run = run_collectives(*comm, o, {});
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().message, "size factor 1: expected 2 to 1024");
  o = small({});
  EXPECT_FALSE(run_collectives(*comm, o, {}));
  o = small({Op::kAllReduce});
  o.min_bytes = 2;
  EXPECT_FALSE(run_collectives(*comm, o, {}));
  o = small({Op::kAllReduce});
  o.iters = 0;
  EXPECT_FALSE(run_collectives(*comm, o, {}));
}

TEST(CollectiveRequestTest, QuickIsAShortSweepAndWhatIsGivenStays) {
  CollectiveRequest r;
  r.ops = "allreduce";
  r.quick = true;
  r.iters = 7;
  auto o = collective_bench_options(r);
  ASSERT_TRUE(o.has_value()) << o.error().message;
  EXPECT_EQ(o->collectives.max_bytes, 1U << 20U);
  EXPECT_EQ(o->collectives.iters, 7);
  EXPECT_EQ(o->collectives.warmup, 1);
  EXPECT_TRUE(o->collectives.check);
  EXPECT_DOUBLE_EQ(o->nccl_timeout_seconds, 300);
  EXPECT_TRUE(static_cast<bool>(o->open_backend));
}

TEST(CollectiveRequestTest, EachBadValueIsNamedAsItsFlag) {
  const auto message = [](CollectiveRequest r) {
    r.ops = r.ops.empty() ? "all" : r.ops;
    auto o = collective_bench_options(r);
    EXPECT_FALSE(o.has_value());
    EXPECT_TRUE(o || o.error().code == Errc::kInvalidArgument);
    return o ? std::string() : o.error().message;
  };
  CollectiveRequest r;
  r.iters = 0;
  EXPECT_EQ(message(r), "--iters: '0' is not a number from 1 to 100000");
  r = {};
  r.min_bytes = "64MiB";
  EXPECT_EQ(message(r), "--min-bytes 64MiB is larger than --max-bytes 32MiB");
  r = {};
  r.nccl_timeout = "0s";
  EXPECT_EQ(message(r), "--nccl-timeout '0s': expected a duration above 0 (300s, 5m)");
  r = {};
  r.ops = "gather";
  EXPECT_EQ(message(r).rfind("--collective: ", 0), 0U);
}

TEST(CollectiveRequestTest, WithoutAMachineNothingIsRecordedAndTheNoteSaysWhy) {
  const CollectiveRun run;
  auto h = record_collective_run(run, std::nullopt, "/nonexistent/history.sqlite", true);
  ASSERT_TRUE(h.has_value());
  EXPECT_TRUE(h->comparisons.empty());
  EXPECT_EQ(h->note, "No machine fingerprint (the probe failed): nothing to compare.\n");
}

TEST(CollectiveReport, TextHasNcclTestsColumnsAndTheSummary) {
  auto comm = self_communicator();
  auto run = run_collectives(*comm, small({Op::kAllReduce, Op::kBroadcast}), {});
  ASSERT_TRUE(run);
  const std::string text = to_text(*run);
  EXPECT_NE(text.find("# acco collectives: 1 rank on 1 node, backend self"), std::string::npos)
      << text;
  EXPECT_NE(text.find("size        count   type  redop  root       time   algbw   busbw  #wrong"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  float    sum    -1"), std::string::npos) << text;
  EXPECT_NE(text.find("  float   none     0"), std::string::npos) << text;  // broadcast root 0
  EXPECT_NE(text.find("# allreduce: plateau algbw"), std::string::npos) << text;
  EXPECT_NE(text.find("one rank: nothing crosses a link"), std::string::npos) << text;
  EXPECT_NE(text.find("# Out of bounds values : 0 OK"), std::string::npos) << text;
}

TEST(CollectiveReport, JsonCarriesEveryPointAndSummary) {
  auto comm = self_communicator();
  auto run = run_collectives(*comm, small({Op::kAllGather}), {2e9, "lo"});
  ASSERT_TRUE(run);
  const auto j = to_json(*run);
  EXPECT_EQ(j["schema"], "acco.collective/1");
  EXPECT_EQ(j["ranks"], 1);
  ASSERT_EQ(j["ops"].size(), 1U);
  EXPECT_EQ(j["ops"][0]["op"], "allgather");
  EXPECT_EQ(j["ops"][0]["points"].size(), 5U);
  EXPECT_EQ(j["ops"][0]["summary"]["verdict"], "single rank");
  EXPECT_EQ(j["ops"][0]["summary"]["expected_source"], "lo");
  EXPECT_EQ(j["wrong"], 0);
}

}  // namespace
}  // namespace acco::cluster
