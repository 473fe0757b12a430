// The collective bench's data planes over one rank: the path chosen from what the job offers,
// device buffers of the host backend staged through pinned buffers by the transfer engine, and
// NCCL's collectives through the fake libnccl.so.2 (its results checked, its failures reported).
// Two ranks under mpirun are in tests/integration/collective_test.cpp.
#include "acco/cluster/collective_plane.hpp"

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/cluster/agreement.hpp"
#include "acco/cluster/collective_bench.hpp"
#include "acco/device/host_backend.hpp"

namespace acco::cluster {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFake = ACCO_FAKE_NCCL_PATH;
const std::string kFakeNoConfig = ACCO_FAKE_NCCL_NO_CONFIG_PATH;  // NCCL before 2.14

TEST(DataPathTest, HostBuffersGoOverTheCommunicator) {
  EXPECT_EQ(choose_data_path({}).value(), DataPath::kHost);
  PathQuery q;
  q.via = Via::kNccl;
  const auto bad = choose_data_path(q);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(bad.error().message, HasSubstr("--via nccl: needs --buffers device"));
}

TEST(DataPathTest, DeviceBuffersPreferNcclOnAGpuThenCudaAwareMpiThenStaging) {
  PathQuery q;
  q.buffers = Buffers::kDevice;
  q.device_is_gpu = true;
  EXPECT_EQ(choose_data_path(q).value(), DataPath::kStagedMpi);
  q.mpi_cuda_aware = true;
  EXPECT_EQ(choose_data_path(q).value(), DataPath::kCudaAwareMpi);
  q.nccl_bootstrapped = true;
  EXPECT_EQ(choose_data_path(q).value(), DataPath::kNccl);
  q.via = Via::kMpi;
  EXPECT_EQ(choose_data_path(q).value(), DataPath::kCudaAwareMpi);
  // Memory standing in for a device: NCCL only when asked, MPI never handed it "as CUDA".
  q.via = Via::kAuto;
  q.device_is_gpu = false;
  EXPECT_EQ(choose_data_path(q).value(), DataPath::kStagedMpi);
  q.via = Via::kNccl;
  EXPECT_EQ(choose_data_path(q).value(), DataPath::kNccl);
}

TEST(DataPathTest, AskingForNcclThatDidNotBootstrapSaysWhy) {
  PathQuery q;
  q.buffers = Buffers::kDevice;
  q.via = Via::kNccl;
  q.nccl_why = "NCCL (libnccl.so.2) not used: stopped at load";
  const auto r = choose_data_path(q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kUnavailable);
  EXPECT_EQ(r.error().message, "--via nccl: NCCL (libnccl.so.2) not used: stopped at load");
}

TEST(DataPathTest, WordsParseAndBadOnesAreNamed) {
  EXPECT_EQ(parse_buffers("device").value(), Buffers::kDevice);
  EXPECT_EQ(parse_via("mpi").value(), Via::kMpi);
  EXPECT_THAT(parse_buffers("gpu").error().message, HasSubstr("'gpu' is not one of host, device"));
  EXPECT_THAT(parse_via("ucx").error().message, HasSubstr("'ucx' is not one of auto, nccl, mpi"));
  EXPECT_EQ(describe(DataPath::kStagedMpi, "mpi"),
            "device buffers staged through pinned host buffers over MPI");
  EXPECT_EQ(describe(DataPath::kHost, "self"), "host buffers, one rank (copy)");
}

TEST(AgreementTest, OneRanksOutcomeIsItsOwn) {
  const auto comm = self_communicator();
  EXPECT_TRUE(agree(*comm, {}));
  const auto failed = agree(*comm, fail(Errc::kDeviceError, "out of memory"));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, Errc::kDeviceError);  // its own error, not a peer's
  EXPECT_EQ(failed.error().message, "out of memory");
  const auto first = first_failure(*comm, fail(Errc::kDeviceError, "out of memory"));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->value_or(""), "rank 0: out of memory");
}

class DevicePlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device::HostBackendOptions o;
    o.devices = 1;
    auto backend = device::make_host_backend(o);
    ASSERT_TRUE(backend) << backend.error().message;
    backend_ = std::move(*backend);
  }
  void TearDown() override { ::unsetenv("ACCO_FAKE_NCCL_MODE"); }

  device::Device& device() { return *backend_->devices().front(); }
  static CollectiveOptions every_op() {
    CollectiveOptions o;
    o.ops = {kOps.begin(), kOps.end()};
    o.min_bytes = 8;
    o.max_bytes = 64 << 10;
    o.factor = 8;
    o.warmup = 1;
    o.iters = 2;
    return o;
  }

  std::unique_ptr<Communicator> comm_ = self_communicator();
  std::unique_ptr<device::Backend> backend_;
};

TEST_F(DevicePlaneTest, StagedBuffersCarryEveryCollectiveCorrectly) {
  auto plane = device_plane(*comm_, device(), DataPath::kStagedMpi, nullptr);
  ASSERT_TRUE(plane) << plane.error().message;
  const auto run = run_collectives(*comm_, **plane, every_op(), {});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->path, DataPath::kStagedMpi);
  EXPECT_EQ(run->data_path, "device buffers staged through pinned host buffers, one rank (copy)");
  EXPECT_EQ(run->ops.size(), kOps.size());
  EXPECT_EQ(run->wrong, 0U);
  for (const OpResult& op : run->ops) {
    EXPECT_GE(op.points.size(), 2U) << to_string(op.op);
  }
}

TEST_F(DevicePlaneTest, NcclCollectivesRunOnTheDeviceBuffers) {
  ::setenv("ACCO_FAKE_NCCL_MODE", "ok", 1);
  auto session = open_nccl(*comm_, kFake);
  ASSERT_TRUE(session) << session.error().message;
  ASSERT_TRUE(session->report.bootstrapped()) << session->report.error;
  ASSERT_NE(session->comm, nullptr);
  auto plane = device_plane(*comm_, device(), DataPath::kNccl, session->comm.get());
  ASSERT_TRUE(plane) << plane.error().message;
  const auto run = run_collectives(*comm_, **plane, every_op(), {});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->data_path, "device buffers over NCCL");
  EXPECT_EQ(run->wrong, 0U);
  // The init was watched; the collectives ran on its blocking copy (ncclCommSplit).
  EXPECT_TRUE(session->report.nonblocking);
  EXPECT_TRUE(session->report.blocking_data_plane);
}

// Without the copy the collectives run on the watched, nonblocking communicator: every call
// answers ncclInProgress in the fake, which refuses a call made before the poll that NCCL
// requires has answered ncclSuccess.
TEST_F(DevicePlaneTest, NcclCollectivesRunOnTheNonblockingCommunicatorWhenItCannotBeCopied) {
  ::setenv("ACCO_FAKE_NCCL_MODE", "ok", 1);
  ::setenv("ACCO_FAKE_NCCL_SPLIT_FAILS", "1", 1);
  auto session = open_nccl(*comm_, kFake);
  ::unsetenv("ACCO_FAKE_NCCL_SPLIT_FAILS");
  ASSERT_TRUE(session) << session.error().message;
  ASSERT_TRUE(session->report.bootstrapped()) << session->report.error;
  EXPECT_TRUE(session->report.nonblocking);
  EXPECT_FALSE(session->report.blocking_data_plane);
  auto plane = device_plane(*comm_, device(), DataPath::kNccl, session->comm.get());
  ASSERT_TRUE(plane) << plane.error().message;
  const auto run = run_collectives(*comm_, **plane, every_op(), {});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->wrong, 0U);
}

TEST_F(DevicePlaneTest, NcclCollectivesRunOnABlockingCommunicatorToo) {
  ::setenv("ACCO_FAKE_NCCL_MODE", "ok", 1);
  auto session = open_nccl(*comm_, kFakeNoConfig);
  ASSERT_TRUE(session) << session.error().message;
  ASSERT_TRUE(session->report.bootstrapped()) << session->report.error;
  EXPECT_FALSE(session->report.nonblocking);
  EXPECT_FALSE(session->report.blocking_data_plane);
  auto plane = device_plane(*comm_, device(), DataPath::kNccl, session->comm.get());
  ASSERT_TRUE(plane) << plane.error().message;
  const auto run = run_collectives(*comm_, **plane, every_op(), {});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->wrong, 0U);
}

TEST_F(DevicePlaneTest, AWrongNcclSumIsCounted) {
  ::setenv("ACCO_FAKE_NCCL_MODE", "wrong-sum", 1);
  auto session = open_nccl(*comm_, kFake);
  ASSERT_TRUE(session && session->comm);
  auto plane = device_plane(*comm_, device(), DataPath::kNccl, session->comm.get());
  ASSERT_TRUE(plane);
  CollectiveOptions o = every_op();
  o.ops = {Op::kAllReduce, Op::kAllGather};
  const auto run = run_collectives(*comm_, **plane, o, {});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->ops[0].points.front().wrong, 1U);  // the first element of every size
  EXPECT_EQ(run->wrong, run->ops[0].points.size());
}

// NCCL reports no error while its kernels wait for a peer that is gone (the fake answers
// ncclInProgress for ever once the calls pass K here, as on a rank other than the failed one):
// the watchdog aborts them after the plane's timeout.
TEST_F(DevicePlaneTest, NcclWorkThatNeverCompletesIsAbortedByTheWatchdog) {
  ::setenv("ACCO_FAKE_NCCL_MODE", "async-error-on-rank-1-after-2", 1);
  auto session = open_nccl(*comm_, kFake);
  ASSERT_TRUE(session && session->comm);
  auto plane = device_plane(*comm_, device(), DataPath::kNccl, session->comm.get(), 0.2);
  ASSERT_TRUE(plane);
  CollectiveOptions o = every_op();
  o.ops = {Op::kAllReduce};
  const auto run = run_collectives(*comm_, **plane, o, {});
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, Errc::kDeviceError);
  EXPECT_THAT(run.error().message,
              HasSubstr("NCCL collectives not complete after 0.2 s (a peer failed or stopped while "
                        "they wait for it): aborted by the watchdog (--nccl-timeout)"));
  // Aborted: nothing more goes on that communicator.
  EXPECT_FALSE((*plane)->run(Op::kAllReduce, 1));
}

TEST_F(DevicePlaneTest, TheFailedRanksOwnAsynchronousErrorStopsItAtOnce) {
  ::setenv("ACCO_FAKE_NCCL_MODE", "async-error-on-rank-0-after-2", 1);
  auto session = open_nccl(*comm_, kFake);
  ASSERT_TRUE(session && session->comm);
  auto plane = device_plane(*comm_, device(), DataPath::kNccl, session->comm.get(), 5);
  ASSERT_TRUE(plane);
  CollectiveOptions o = every_op();
  o.ops = {Op::kAllReduce};
  const auto run = run_collectives(*comm_, **plane, o, {});
  ASSERT_FALSE(run);
  EXPECT_THAT(run.error().message, HasSubstr("NCCL communicator (asynchronous error)"));
  EXPECT_THAT(run.error().message, HasSubstr("Got completion from peer with status=12"));
  EXPECT_THAT(run.error().message, Not(HasSubstr("watchdog")));
}

TEST_F(DevicePlaneTest, ATimeoutThatIsNotPositiveIsRefused) {
  auto plane = device_plane(*comm_, device(), DataPath::kStagedMpi, nullptr, 0);
  ASSERT_FALSE(plane);
  EXPECT_EQ(plane.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(plane.error().message, HasSubstr("NCCL timeout 0 s: expected more than 0"));
}

TEST_F(DevicePlaneTest, AFailingNcclCollectiveIsAnErrorNamingIt) {
  ::setenv("ACCO_FAKE_NCCL_MODE", "collective-fails", 1);
  auto session = open_nccl(*comm_, kFake);
  ASSERT_TRUE(session && session->comm);
  auto plane = device_plane(*comm_, device(), DataPath::kNccl, session->comm.get());
  ASSERT_TRUE(plane);
  CollectiveOptions o = every_op();
  o.ops = {Op::kSendRecv};
  const auto run = run_collectives(*comm_, **plane, o, {});
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, Errc::kDeviceError);
  EXPECT_THAT(run.error().message, HasSubstr("sendrecv of 8 bytes"));
  EXPECT_THAT(run.error().message, HasSubstr("ncclSend: unhandled system error"));
  EXPECT_THAT(run.error().message, HasSubstr("peer closed the connection"));
}

TEST_F(DevicePlaneTest, PlanesThatCannotBeAreRefused) {
  const auto host = device_plane(*comm_, device(), DataPath::kHost, nullptr);
  ASSERT_FALSE(host);
  EXPECT_EQ(host.error().code, Errc::kInvalidArgument);
  const auto nccl = device_plane(*comm_, device(), DataPath::kNccl, nullptr);
  ASSERT_FALSE(nccl);
  EXPECT_THAT(nccl.error().message, HasSubstr("without an NCCL communicator"));
}

}  // namespace
}  // namespace acco::cluster
