#include "acco/cluster/distributed.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/sched/workload.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::cluster {
namespace {

using acco::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Ranks as threads of one process: the messages of post/poll through shared queues, a barrier;
// the collectives are not used by the distributed runtime and say so. A payload is read from the
// sender's memory when the receiver takes it (as MPI may), so a sender that changed it while it
// was being sent shows (wrong data, and a race under TSan).
struct Incoming {
  Message message;
  const std::byte* payload = nullptr;  // the sender's memory
};
constexpr int kAnyWorker = -2;

struct Group {
  explicit Group(int n) : inbox(static_cast<std::size_t>(n)) {}
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::deque<Incoming>> inbox;
  std::vector<const std::byte*> in_flight;  // payloads posted and not yet taken or dropped
  // The library never lets go of a payload (as one whose peer stopped receiving): the sender
  // must put every new version of a datum it sent somewhere else.
  bool hold_payloads = false;
  // Copies whose bytes are not the version their header names (each writer of the emulated
  // workload adds 1 to a byte in every 4 KiB of the datum, from 0; the workloads here read what
  // they write, kReadWrite, so no writer starts from a device copy's old bytes).
  int wrong_copies = 0;
  // With hold_payloads: each payload's bytes when posted, to compare at the end (the sender
  // keeps memory that is still being sent).
  std::vector<std::pair<const std::byte*, std::vector<std::byte>>> held;
  int arrived = 0;
  int generation = 0;
  // Fault injection: the `cut_nth`th message (1 = the first) rank `cut_rank` (kAnyWorker: any
  // rank but 0) posts with tag `cut_tag` loses its last 3 bytes, as a message cut short on the
  // wire.
  int cut_rank = -1;
  int cut_tag = 0;
  int cut_nth = 1;
  int cut_seen = 0;
};

class ThreadRank final : public Communicator {
 public:
  ThreadRank(std::shared_ptr<Group> g, int rank) : g_(std::move(g)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(g_->inbox.size()); }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  int nodes() const override { return size(); }
  int node() const override { return rank_; }
  std::string backend() const override { return "threads"; }
  Capabilities capabilities() const override { return {}; }
  double seconds() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  Status barrier() override {
    std::unique_lock lock(g_->mutex);
    const int generation = g_->generation;
    if (++g_->arrived == size()) {
      g_->arrived = 0;
      ++g_->generation;
      g_->cv.notify_all();
    } else {
      g_->cv.wait(lock, [&] { return g_->generation != generation; });
    }
    return {};
  }
  Status run(Op /*op*/, const float* /*s*/, float* /*r*/, std::size_t /*n*/) override {
    return fail(Errc::kUnsupported, "threads: no collectives");
  }
  Result<std::vector<double>> allgather(double /*v*/) override {
    return fail(Errc::kUnsupported, "threads: no collectives");
  }
  Result<std::vector<std::string>> gather(const std::string& /*t*/) override {
    return fail(Errc::kUnsupported, "threads: no collectives");
  }
  Status broadcast(std::span<std::byte> /*d*/, int /*root*/) override {
    return fail(Errc::kUnsupported, "threads: no collectives");
  }
  Status exchange(int /*p*/, std::span<const std::byte> /*s*/,
                  std::span<std::byte> /*r*/) override {
    return fail(Errc::kUnsupported, "threads: no collectives");
  }
  Status post(int peer, int tag, std::vector<std::byte> data) override {
    if (peer < 0 || peer >= size()) {
      return fail(Errc::kInvalidArgument, "threads: bad peer");
    }
    std::lock_guard lock(g_->mutex);
    const bool cut_here = rank_ == g_->cut_rank || (g_->cut_rank == kAnyWorker && rank_ != 0);
    if (cut_here && tag == g_->cut_tag && ++g_->cut_seen == g_->cut_nth && data.size() >= 3) {
      data.resize(data.size() - 3);
    }
    g_->inbox[static_cast<std::size_t>(peer)].push_back({{rank_, tag, std::move(data), 0}});
    return {};
  }
  Result<std::optional<Message>> poll() override {
    std::lock_guard lock(g_->mutex);
    drop_owed();
    auto& q = g_->inbox[static_cast<std::size_t>(rank_)];
    if (q.empty()) {
      return std::optional<Message>{};
    }
    Incoming in = std::move(q.front());
    q.pop_front();
    if (in.payload != nullptr) {
      owed_ = in.payload;
    }
    return std::optional<Message>{std::move(in.message)};
  }
  std::size_t pending_sends() override { return 0; }
  Status post_payload(int peer, int tag, std::vector<std::byte> header,
                      std::span<const std::byte> payload) override {
    if (peer < 0 || peer >= size() || payload.empty()) {
      return fail(Errc::kInvalidArgument, "threads: bad peer or empty payload");
    }
    std::lock_guard lock(g_->mutex);
    g_->inbox[static_cast<std::size_t>(peer)].push_back(
        {{rank_, tag, std::move(header), payload.size()}, payload.data()});
    g_->in_flight.push_back(payload.data());
    if (g_->hold_payloads) {
      g_->held.emplace_back(payload.data(), std::vector<std::byte>(payload.begin(), payload.end()));
    }
    return {};
  }
  bool sending_payload(const void* payload) override {
    std::lock_guard lock(g_->mutex);
    return std::find(g_->in_flight.begin(), g_->in_flight.end(), payload) != g_->in_flight.end();
  }
  Status take_payload(const Message& m, std::span<std::byte> into) override {
    std::lock_guard lock(g_->mutex);
    if (owed_ == nullptr || m.payload == 0) {
      return fail(Errc::kInvalidArgument, "threads: no payload owed");
    }
    if (into.size() != m.payload) {
      drop_owed();
      return fail(Errc::kInvalidArgument, "threads: payload size differs");
    }
    std::memcpy(into.data(), owed_, into.size());
    drop_owed();
    // The header: run, datum, version (distributed.cpp's data message).
    std::uint64_t version = 0;
    if (m.data.size() == 3 * sizeof version) {
      std::memcpy(&version, m.data.data() + 2 * sizeof version, sizeof version);
      for (std::size_t b = 0; b < into.size(); b += 4096) {
        if (into[b] != static_cast<std::byte>(version & 0xFFU)) {
          ++g_->wrong_copies;
          break;
        }
      }
    }
    return {};
  }

 private:
  void drop_owed() {  // under the group's mutex
    if (owed_ != nullptr && !g_->hold_payloads) {
      auto it = std::find(g_->in_flight.begin(), g_->in_flight.end(), owed_);
      if (it != g_->in_flight.end()) {
        g_->in_flight.erase(it);
      }
    }
    owed_ = nullptr;
  }

  std::shared_ptr<Group> g_;
  int rank_;
  const std::byte* owed_ = nullptr;
};

sched::Workload distributed_cholesky(int tiles, std::size_t devices) {
  sched::WorkloadSpec spec;
  spec.tiles = tiles;
  spec.tile_bytes = 64 << 10;
  spec.time_scale = 0.05;  // sirocco's gpu kernels: a few hundred microseconds each
  auto w = sched::make_workload(
      spec, std::vector<sched::DeviceModel>(devices, sched::DeviceModel{"gpu", 1}));
  EXPECT_THAT(w, IsOk());
  return *w;
}

// Runs the workload over `ranks` threads of `each` host devices; every copy that moved between
// ranks must have carried the version its header named.
struct Cut {
  int rank = -1;
  int tag = 0;
  int nth = 1;
};

std::vector<Result<DistributedOutcome>> run(const sched::Workload& w, int ranks, std::size_t each,
                                            const DistributedOptions& options,
                                            bool hold_payloads = false, Cut cut = {}) {
  auto group = std::make_shared<Group>(ranks);
  group->hold_payloads = hold_payloads;
  group->cut_rank = cut.rank;
  group->cut_tag = cut.tag;
  group->cut_nth = cut.nth;
  std::vector<Result<DistributedOutcome>> out(static_cast<std::size_t>(ranks),
                                              fail(Errc::kInternal, "did not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      ThreadRank comm(group, r);
      device::HostBackendOptions host;
      host.devices = static_cast<int>(each);
      auto backend = device::make_host_backend(host);
      if (!backend) {
        out[static_cast<std::size_t>(r)] = tl::unexpected(backend.error());
        return;
      }
      std::vector<sched::DeviceSpec> local;
      for (device::Device* d : (*backend)->devices()) {
        sched::DeviceSpec s;
        s.device = d;
        s.kind = "gpu";
        local.push_back(std::move(s));
      }
      out[static_cast<std::size_t>(r)] =
          run_distributed(comm, w, std::vector<std::size_t>(static_cast<std::size_t>(ranks), each),
                          std::move(local), {}, options);
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(group->wrong_copies, 0);
  std::size_t changed = 0;
  for (const auto& [memory, bytes] : group->held) {
    changed += std::memcmp(memory, bytes.data(), bytes.size()) != 0 ? 1 : 0;
  }
  EXPECT_EQ(changed, 0U) << "payloads written while being sent, of " << group->held.size();
  return out;
}

TEST(RunDistributed, CholeskyOverTwoRanksOfTwoDevices) {
  const sched::Workload w = distributed_cholesky(5, 4);
  DistributedOptions options;
  options.calibration_runs = 1;
  const auto out = run(w, 2, 2, options);
  ASSERT_THAT(out[0], IsOk());
  ASSERT_THAT(out[1], IsOk());
  const DistributedOutcome& o = *out[0];
  EXPECT_TRUE(o.coordinator);
  EXPECT_FALSE(out[1]->coordinator);
  EXPECT_EQ(o.ranks, 2);
  EXPECT_EQ(o.devices, 4U);
  EXPECT_EQ(o.tasks, w.tasks.size());
  EXPECT_EQ(o.reruns, 0U);
  EXPECT_GT(o.makespan_seconds, 0);
  EXPECT_GT(o.efficiency, 0);
  EXPECT_LE(o.efficiency, 1.05);
  ASSERT_EQ(o.workers.size(), 2U);
  EXPECT_EQ(o.workers[0].tasks + o.workers[1].tasks, w.tasks.size());
  EXPECT_EQ(out[0]->local_tasks + out[1]->local_tasks, w.tasks.size());
  EXPECT_EQ(o.workers[1].tasks, out[1]->local_tasks);
}

// Copies go from where they lie; while the library still holds one, a new version of that
// datum on the sender lands in a fresh buffer, and every copy still arrives as sent.
TEST(RunDistributed, ANewVersionOfADatumBeingSentGoesToAFreshBuffer) {
  const sched::Workload w = distributed_cholesky(5, 4);
  DistributedOptions options;
  options.calibration_runs = 1;
  const auto held = run(w, 2, 2, options, /*hold_payloads=*/true);
  ASSERT_THAT(held[0], IsOk());
  ASSERT_THAT(held[1], IsOk());
  EXPECT_EQ(held[0]->local_tasks + held[1]->local_tasks, w.tasks.size());
  EXPECT_GT(held[0]->bytes_between_ranks, 0U);
}

// Rank 0 writes a datum, rank 1 reads it (a copy from rank 0, which the library keeps holding),
// then rank 0 writes it again: the second writer must not write the memory being sent (its
// result would reach it on the write-back), so the datum moves to a fresh buffer first. The
// costs (1 ms where each task should run, 1 s elsewhere) place the tasks.
TEST(RunDistributed, ADatumWrittenAgainWhileBeingSentMovesToAFreshBuffer) {
  sched::Workload w;
  w.name = "write-read-write";
  w.data_bytes = {64 << 10};
  const std::vector<double> on_rank0{1e-3, 1e-3, 1, 1};
  const std::vector<double> on_rank1{1, 1, 1e-3, 1e-3};
  w.tasks = {{"task", "w0", {{0, sched::Access::kReadWrite}}, 0, on_rank0},
             {"task", "r1", {{0, sched::Access::kRead}}, 0, on_rank1},
             {"task", "w2", {{0, sched::Access::kReadWrite}}, 0, on_rank0}};
  DistributedOptions options;
  options.calibration_runs = 0;
  const auto held = run(w, 2, 2, options, /*hold_payloads=*/true);
  ASSERT_THAT(held[0], IsOk());
  ASSERT_THAT(held[1], IsOk());
  ASSERT_EQ(held[0]->workers.size(), 2U);
  EXPECT_EQ(held[0]->workers[0].tasks, 2U);
  EXPECT_EQ(held[0]->workers[1].tasks, 1U);
  EXPECT_EQ(held[0]->bytes_between_ranks, std::uint64_t{64} << 10);
}

TEST(RunDistributed, AWorkerThatStopsAnsweringIsLostAndItsWorkRunsElsewhere) {
  const sched::Workload w = distributed_cholesky(6, 6);
  DistributedOptions options;
  options.calibration_runs = 0;
  options.hang_rank = 2;
  options.hang_after = 0;  // hangs on its first task: it gets some of the trsm(i,0) at least
  options.heartbeat_seconds = 0.02;
  options.lost_after_seconds = 0.3;
  const auto out = run(w, 3, 2, options);
  for (const auto& o : out) {
    ASSERT_TRUE(o) << o.error().message;
  }
  const DistributedOutcome& o = *out[0];
  EXPECT_TRUE(o.workers[2].lost);
  EXPECT_EQ(o.workers[2].tasks, 0U);
  EXPECT_EQ(o.workers[0].tasks + o.workers[1].tasks + o.workers[2].tasks,
            w.tasks.size() + o.reruns);
}

// A message cut short is malformed where it arrives; that rank stops, and so does every other
// rank, each with an error naming the message and its sender, instead of waiting for it.
TEST(RunDistributed, AReportCutShortStopsEveryRankWithTheReason) {
  const sched::Workload w = distributed_cholesky(4, 6);
  DistributedOptions options;
  options.calibration_runs = 0;
  // The first report of whichever worker reports first: no rank has to be given work.
  const auto out = run(w, 3, 2, options, false, Cut{.rank = kAnyWorker, .tag = 2, .nth = 1});
  ASSERT_EQ(out.size(), 3U);
  for (std::size_t r = 0; r < out.size(); ++r) {
    ASSERT_FALSE(out[r].has_value()) << "rank " << r << " went on";
    EXPECT_THAT(out[r].error().message, HasSubstr("malformed message (tag 2, ")) << r;
  }
  EXPECT_THAT(out[0].error().message, StartsWith("measured run: rank 0: distributed: malformed"));
  EXPECT_THAT(out[1].error().message, HasSubstr("distributed run: rank 0 stopped: "));
  EXPECT_THAT(out[2].error().message, HasSubstr("distributed run: rank 0 stopped: "));
}

TEST(RunDistributed, AnAssignmentCutShortStopsEveryRankWithTheReason) {
  const sched::Workload w = distributed_cholesky(4, 6);
  DistributedOptions options;
  options.calibration_runs = 0;
  for (const int nth : {1, 2, 3}) {
    const auto out = run(w, 3, 2, options, false, Cut{.rank = 0, .tag = 1, .nth = nth});
    for (std::size_t r = 0; r < out.size(); ++r) {
      ASSERT_FALSE(out[r].has_value()) << "rank " << r << " went on";
      EXPECT_THAT(out[r].error().message, HasSubstr("malformed message (tag 1, ")) << r;
      EXPECT_THAT(out[r].error().message, HasSubstr("from rank 0")) << r;
    }
  }
}

TEST(RunDistributed, RefusesDevicesThatDoNotMatchTheJob) {
  const sched::Workload w = distributed_cholesky(3, 4);
  auto comm = self_communicator();
  device::HostBackendOptions host;
  host.devices = 2;
  auto backend = device::make_host_backend(host);
  ASSERT_THAT(backend, IsOk());
  std::vector<sched::DeviceSpec> local;
  for (device::Device* d : (*backend)->devices()) {
    local.push_back({d, "gpu", {}, 0, std::nullopt});
  }
  auto ranks = run_distributed(*comm, w, {2, 2}, local, {}, {});
  ASSERT_FALSE(ranks);
  EXPECT_THAT(ranks.error().message, ::testing::HasSubstr("devices given for 2 ranks"));
  auto costs = run_distributed(*comm, w, {2}, local, {}, {});
  ASSERT_FALSE(costs);
  EXPECT_THAT(costs.error().message, ::testing::HasSubstr("costs for 4 devices"));
  // One rank alone runs it all itself.
  const sched::Workload two = distributed_cholesky(3, 2);
  auto alone = run_distributed(*comm, two, {2}, local, {}, {});
  ASSERT_THAT(alone, IsOk());
  EXPECT_EQ(alone->workers.at(0).tasks, two.tasks.size());
}

}  // namespace
}  // namespace acco::cluster
