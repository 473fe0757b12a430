// The job queue with real processes on simulated devices: placement, queueing, a job that
// fails, cancel, a daemon restart with a job still running, and the HTTP API with its token.
#include "acco/monitor/jobs.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include "acco/core/stop.hpp"
#include "acco/monitor/daemon.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"
#include "acco/testing/matchers.hpp"

#include "machines.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::acco::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceLoad load(std::string id, double util, double temp, std::uint64_t free_gib = 80,
                double weight = 1) {
  DeviceLoad d;
  d.device = std::move(id);
  d.utilization = util;
  d.temperature = temp;
  d.memory_free_bytes = free_gib << 30;
  d.weight = weight;
  return d;
}

TEST(JobPlacementTest, TheLeastLoadedCoolestDevicesWithRoomAreTaken) {
  const std::vector<DeviceLoad> devices = {load("0", 0.9, 40), load("1", 0.1, 70),
                                           load("2", 0.1, 50), load("3", 0.0, 30, 10),
                                           load("4", 0.0, 30, 80, 0.5)};
  JobRequest request;
  request.argv = {"train"};
  request.memory_bytes = std::uint64_t{20} << 30;
  std::string why;
  auto p = place(request, devices, {}, why);
  ASSERT_TRUE(p.has_value());
  EXPECT_THAT(p->devices, ElementsAre("2")) << "3 is short of memory, 4 is cooling down";
  EXPECT_THAT(p->why, HasSubstr("device 2: 10% busy, 50 °C, 80.0 GiB free"));
  request.gpus = 2;
  p = place(request, devices, {"2"}, why);
  ASSERT_TRUE(p.has_value());
  EXPECT_THAT(p->devices, ElementsAre("1", "0"));
  request.gpus = 4;
  EXPECT_FALSE(place(request, devices, {"2"}, why).has_value());
  EXPECT_EQ(why,
            "waits for 4 device(s): 3 of 5 free (1 running a job, 1 with less than 20.0 GiB "
            "free)");
  auto drained = devices;
  drained[4].weight = 0;
  EXPECT_FALSE(place(request, drained, {"2"}, why).has_value());
  EXPECT_THAT(why, HasSubstr("1 drained by the governor"));
}

TEST(JobPlacementTest, ARequestIsCheckedFieldByField) {
  EXPECT_THAT(parse_request(nlohmann::json::parse(R"({"argv": []})")),
              StatusIs(Errc::kInvalidArgument, HasSubstr("argv")));
  EXPECT_THAT(parse_request(nlohmann::json::parse(R"({"argv": ["x"], "gpus": 0})")),
              StatusIs(Errc::kInvalidArgument, HasSubstr("gpus")));
  EXPECT_THAT(parse_request(nlohmann::json::parse(R"({"argv": ["x"], "env": {"A": 1}})")),
              StatusIs(Errc::kInvalidArgument, HasSubstr("env")));
  EXPECT_THAT(parse_request(nlohmann::json::parse(R"({"argv": ["x"], "memory_bytes": -1})")),
              StatusIs(Errc::kInvalidArgument, HasSubstr("memory_bytes")));
  JobRequest r;
  r.argv = {"python3", "train.py"};
  r.env = {{"PATH", "/usr/bin"}};
  r.gpus = 2;
  auto back = parse_request(request_json(r));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, r);
  EXPECT_THAT(parse_request(nlohmann::json::parse(R"({"argv": ["x"], "mig": 3})")),
              StatusIs(Errc::kInvalidArgument, HasSubstr("a job's mig: expected a MIG profile")));
  EXPECT_THAT(parse_request(request_json(r)).value().mig, "");
  r.mig = "1g.10gb";
  EXPECT_THAT(parse_request(request_json(r)),
              StatusIs(Errc::kInvalidArgument, HasSubstr("one MIG instance per job")));
  r.gpus = 1;
  back = parse_request(request_json(r));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, r);
}

// Device 0 in MIG mode with two 1g.10gb instances and one 3g.40gb, device 1 whole.
std::vector<DeviceLoad> mig_and_whole() {
  auto mig = load("0", 0.5, 40);
  mig.mig = {{"MIG-a", "1g.10gb", std::uint64_t{10} << 30},
             {"MIG-b", "1g.10gb", std::uint64_t{10} << 30},
             {"MIG-c", "3g.40gb", std::uint64_t{40} << 30}};
  return {mig, load("1", 0.0, 30)};
}

TEST(JobPlacementTest, AGpuInMigModeTakesMigJobsOneInstanceEach) {
  const auto devices = mig_and_whole();
  JobRequest whole;
  whole.argv = {"train"};
  std::string why;
  auto p = place(whole, devices, {}, why);
  ASSERT_TRUE(p.has_value());
  EXPECT_THAT(p->devices, ElementsAre("1")) << "a GPU in MIG mode is placed by instance";
  whole.gpus = 2;
  EXPECT_FALSE(place(whole, devices, {}, why).has_value());
  EXPECT_EQ(why, "waits for 2 device(s): 1 of 2 free (1 in MIG mode)");

  JobRequest small;
  small.argv = {"infer"};
  small.mig = "1G.10GB";
  p = place(small, devices, {}, why);
  ASSERT_TRUE(p.has_value());
  EXPECT_THAT(p->devices, ElementsAre("MIG-a"));
  EXPECT_EQ(p->why,
            "MIG 1g.10gb MIG-a of device 0: 50% busy, 40 °C, 10.0 GiB; 2 of 2 instance(s) were "
            "free");
  p = place(small, devices, {"MIG-a", "1"}, why);
  ASSERT_TRUE(p.has_value());
  EXPECT_THAT(p->devices, ElementsAre("MIG-b"));
  EXPECT_FALSE(place(small, devices, {"MIG-a", "MIG-b"}, why).has_value());
  EXPECT_EQ(why, "waits for a 1G.10GB MIG instance: 0 of 2 free (2 running a job)");
  small.memory_bytes = std::uint64_t{20} << 30;
  EXPECT_FALSE(place(small, devices, {}, why).has_value());
  EXPECT_THAT(why, HasSubstr("(2 with less than 20.0 GiB free)"));
  EXPECT_TRUE(mig_profile_exists(devices, "3g.40GB"));

  JobRequest big;
  big.argv = {"train"};
  big.mig = "7g.80gb";
  EXPECT_FALSE(mig_profile_exists(devices, big.mig));
  EXPECT_FALSE(place(big, devices, {}, why).has_value());
  EXPECT_EQ(why,
            "no MIG instance of profile 7g.80gb on this daemon's devices (profiles: 1g.10gb, "
            "3g.40gb)");
  EXPECT_FALSE(place(big, {load("0", 0, 30)}, {}, why).has_value());
  EXPECT_THAT(why, HasSubstr("(no GPU is in MIG mode)"));
}

// The instances NVML listed when the daemon probed, on the sampled device with the same UUID
// (else PCI address); a GPU whose MIG mode is off, or only pending, keeps none.
TEST(JobPlacementTest, MigSlotsComeFromTheProbedMachine) {
  topo::Machine m;
  topo::NvmlGpu on;
  on.uuid = "GPU-0";
  on.pci = "0000:1b:00.0";
  on.mig_enabled = true;
  on.mig_devices = {{.slot = 0,
                     .uuid = "MIG-x",
                     .profile = "3g.40gb",
                     .memory_total_bytes = std::uint64_t{40} << 30}};
  topo::NvmlGpu pending = on;
  pending.uuid = "GPU-1";
  pending.pci = "0000:43:00.0";
  pending.mig_enabled = false;
  pending.mig_pending = true;
  m.nvml.gpus = {on, pending};
  auto by_uuid = load("0", 0, 30);
  by_uuid.uuid = "GPU-0";
  auto by_pci = load("1", 0, 30);
  by_pci.pci_bus_id = "0000:1b:00.0";
  auto other = load("2", 0, 30);
  other.uuid = "GPU-1";
  std::vector<DeviceLoad> loads = {by_uuid, by_pci, other};
  add_mig_slots(loads, m);
  ASSERT_EQ(loads[0].mig.size(), 1U);
  EXPECT_EQ(loads[0].mig[0], (MigSlot{"MIG-x", "3g.40gb", std::uint64_t{40} << 30}));
  EXPECT_EQ(loads[1].mig, loads[0].mig);
  EXPECT_TRUE(loads[2].mig.empty());
}

analyze::Snapshot two_devices() {
  analyze::Snapshot round;
  for (const char* id : {"0", "1"}) {
    power::DeviceSample d;
    d.device = id;
    d.uuid = std::string("SIM-") + id;
    d.source = "simulated";
    d.memory_total_bytes = std::uint64_t{80} << 30;
    d.memory_used_bytes = 0;
    round.devices.push_back(d);
  }
  return round;
}

JobRequest shell(const std::string& script, const std::string& cwd) {
  JobRequest r;
  r.argv = {"sh", "-c", script};
  r.cwd = cwd;
  r.env = {{"PATH", "/usr/bin:/bin"}};
  return r;
}

// Ticks until `done` holds for the job, at most 10 s.
Job tick_until(JobQueue& q, std::int64_t id, const std::function<bool(const Job&)>& done) {
  const auto round = two_devices();
  for (int i = 0; i < 200; ++i) {
    q.tick(round);
    for (const auto& job : q.jobs()) {
      if (job.id == id && done(job)) {
        return job;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "job " << id << " never reached the state asked for";
  return {};
}

TEST(JobQueueTest, JobsRunOnFreeDevicesQueueWhenNoneIsFreeAndEndAsTheirProcessesDo) {
  TempDir dir;
  JobQueueOptions options;
  options.dir = (dir.path() / "jobs").string();
  auto q = JobQueue::open(options);
  ASSERT_THAT(q, IsOk());
  EXPECT_EQ(std::filesystem::status(dir.path() / "jobs" / "token").permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string cwd = dir.path().string();
  auto a = (*q)->submit(shell("echo \"on $CUDA_VISIBLE_DEVICES as $ACCO_JOB_ID\"; sleep 0.5", cwd));
  auto b = (*q)->submit(shell("sleep 0.5; exit 3", cwd));
  auto c = (*q)->submit(shell("pwd", cwd));
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(a->request.name, "sh");
  (*q)->tick(two_devices());
  auto jobs = (*q)->jobs();
  ASSERT_EQ(jobs.size(), 3U);
  EXPECT_EQ(jobs[0].state, "running");
  EXPECT_THAT(jobs[0].devices, ElementsAre("0"));
  EXPECT_THAT(jobs[0].binding, ::testing::Contains("CUDA_VISIBLE_DEVICES=0"));
  EXPECT_EQ(jobs[1].state, "running");
  EXPECT_THAT(jobs[1].devices, ElementsAre("1"));
  EXPECT_EQ(jobs[2].state, "queued");
  EXPECT_EQ(jobs[2].reason, "waits for 1 device(s): 0 of 2 free (2 running a job)");
  auto d = (*q)->submit(shell("true", cwd));
  (*q)->tick(two_devices());
  EXPECT_EQ((*q)->jobs()[3].reason, "waits behind job 3 (jobs start in submission order)");
  EXPECT_THAT((*q)->metrics(), HasSubstr("acco_jobs{state=\"running\"} 2\n"));
  EXPECT_THAT((*q)->metrics(),
              HasSubstr("acco_job_device_info{job=\"1\",name=\"sh\",device=\"0\"} 1\n"));

  const auto first = tick_until(**q, a->id, [](const Job& j) { return finished(j); });
  EXPECT_EQ(first.state, "exited");
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_EQ(*(*q)->logs(a->id, 1 << 20), "on 0 as 1\n");
  const auto second = tick_until(**q, b->id, [](const Job& j) { return finished(j); });
  EXPECT_EQ(second.state, "failed");
  EXPECT_EQ(second.exit_code, 3);
  EXPECT_EQ(second.reason, "exited with status 3");
  const auto third = tick_until(**q, c->id, [](const Job& j) { return finished(j); });
  EXPECT_EQ(third.state, "exited");
  EXPECT_EQ(*(*q)->logs(c->id, 1 << 20), cwd + "\n");
  (void)tick_until(**q, d->id, [](const Job& j) { return finished(j); });
  EXPECT_THAT((*q)->logs(99, 10), StatusIs(Errc::kNotFound));
  acco::testing::expect_conforms(jobs_json((*q)->jobs()).dump(), "jobs.schema.json");
  // The table `acco jobs` prints (times vary: compared up to the TIME column's width).
  const auto text = report::render_text(jobs_report((*q)->jobs()));
  EXPECT_THAT(text, ::testing::StartsWith("ID  NAME  STATE   DEVICES"));
  EXPECT_THAT(text, HasSubstr(" sh    failed  1  "));
  EXPECT_THAT(text, HasSubstr("exited with status 3\n"));
  EXPECT_EQ(report::render_text(jobs_report({})), "no jobs\n");
}

// A MIG job sees its instance alone; one for a profile no GPU has fails at once; a whole-device
// job skips the GPU in MIG mode.
TEST(JobQueueTest, AMigJobRunsOnOneInstanceOfItsProfile) {
  TempDir dir;
  JobQueueOptions options;
  options.dir = (dir.path() / "jobs").string();
  topo::NvmlGpu gpu;
  gpu.uuid = "SIM-0";
  gpu.mig_enabled = true;
  gpu.mig_devices = {{.slot = 0, .uuid = "MIG-a", .profile = "1g.10gb"},
                     {.slot = 1, .uuid = "MIG-b", .profile = "1g.10gb"}};
  options.machine.nvml.gpus = {gpu};
  auto q = JobQueue::open(options);
  ASSERT_THAT(q, IsOk());
  const std::string cwd = dir.path().string();
  auto mig = shell("echo \"on $CUDA_VISIBLE_DEVICES\"", cwd);
  mig.mig = "1g.10gb";
  auto none = mig;
  none.mig = "3g.40gb";
  auto a = (*q)->submit(mig);
  auto b = (*q)->submit(none);
  auto c = (*q)->submit(shell("sleep 0.2", cwd));
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(c, IsOk());
  (*q)->tick(two_devices());
  const auto jobs = (*q)->jobs();
  ASSERT_EQ(jobs.size(), 3U);
  EXPECT_THAT(jobs[0].devices, ElementsAre("MIG-a"));
  EXPECT_THAT(jobs[0].binding, ::testing::Contains("CUDA_VISIBLE_DEVICES=MIG-a"));
  EXPECT_THAT(jobs[0].placement, HasSubstr("MIG 1g.10gb MIG-a of device 0"));
  EXPECT_EQ(jobs[1].state, "failed");
  EXPECT_EQ(jobs[1].reason,
            "no MIG instance of profile 3g.40gb on this daemon's devices (profiles: 1g.10gb)");
  EXPECT_THAT(jobs[2].devices, ElementsAre("1"));
  const auto first = tick_until(**q, a->id, [](const Job& j) { return finished(j); });
  EXPECT_EQ(first.state, "exited");
  EXPECT_EQ(*(*q)->logs(a->id, 1 << 20), "on MIG-a\n");
  acco::testing::expect_conforms(jobs_json((*q)->jobs()).dump(), "jobs.schema.json");
}

// With a delegated cgroup v2 subtree the job runs in a cgroup of its own with the limits it
// asked for; without one (cgroup v1, as in most containers) its binding says why not.
TEST(JobQueueTest, AJobRunsInItsOwnCgroupWhereTheTreeIsDelegated) {
  TempDir dir;
  const auto root = dir.path() / "cgroup";
  const auto scope = root / "user.slice/acco.scope";
  std::filesystem::create_directories(scope / "acco-job-1");
  std::ofstream(root / "cgroup.controllers") << "cpuset io memory\n";
  std::ofstream(scope / "cgroup.controllers") << "cpuset io memory\n";
  std::ofstream(scope / "cgroup.subtree_control") << "memory io\n";
  for (const char* file : {"memory.max", "io.weight", "cgroup.procs"}) {
    std::ofstream(scope / "acco-job-1" / file) << "";
  }
  std::ofstream(dir.path() / "self") << "0::/user.slice/acco.scope\n";
  JobQueueOptions options;
  options.dir = (dir.path() / "jobs").string();
  options.cgroup_root = root.string();
  options.proc_self_cgroup = (dir.path() / "self").string();
  auto q = JobQueue::open(options);
  ASSERT_THAT(q, IsOk());
  auto limited = shell("true", dir.path().string());
  limited.memory_max_bytes = std::uint64_t{2} << 30;
  limited.io_weight = 50;
  auto job = (*q)->submit(limited);
  ASSERT_THAT(job, IsOk());
  const auto done = tick_until(**q, job->id, [](const Job& j) { return finished(j); });
  EXPECT_EQ(done.state, "exited");
  EXPECT_THAT(done.binding, ::testing::Contains("cgroup " + (scope / "acco-job-1").string() +
                                                ": memory.max 2147483648, io.weight default 50"));
  EXPECT_EQ(acco::testing::slurp(scope / "acco-job-1" / "cgroup.procs"), "0");

  TempDir v1;
  options.dir = (v1.path() / "jobs").string();
  options.cgroup_root = v1.path().string();
  auto plain = JobQueue::open(options);
  ASSERT_THAT(plain, IsOk());
  job = (*plain)->submit(limited);
  ASSERT_THAT(job, IsOk());
  const auto unlimited = tick_until(**plain, job->id, [](const Job& j) { return finished(j); });
  EXPECT_EQ(unlimited.state, "exited");
  EXPECT_THAT(unlimited.binding,
              ::testing::Contains(HasSubstr("not limited: no cgroup v2 at " + v1.path().string())));
}

TEST(JobQueueTest, ACancelEndsTheWholeSessionAndAQueuedJobNeverStarts) {
  TempDir dir;
  JobQueueOptions options;
  options.dir = (dir.path() / "jobs").string();
  options.kill_after = std::chrono::milliseconds(200);
  auto q = JobQueue::open(options);
  ASSERT_THAT(q, IsOk());
  const std::string cwd = dir.path().string();
  // The shell ignores SIGTERM; its child sleep does not: SIGKILL follows.
  auto a = (*q)->submit(shell("trap '' TERM; sleep 30 & wait; sleep 30", cwd));
  auto missing = (*q)->submit(shell("true", (dir.path() / "gone").string()));
  ASSERT_THAT(a, IsOk());
  (*q)->tick(two_devices());
  const auto failed =
      tick_until(**q, missing->id, [](const Job& j) { return j.state == "failed"; });
  EXPECT_THAT(failed.reason, HasSubstr("could not start: sh: cannot change to its directory"));
  auto c = (*q)->submit(shell("true", cwd));
  ASSERT_THAT((*q)->cancel(c->id), IsOk());
  auto cancelling = (*q)->cancel(a->id);
  ASSERT_THAT(cancelling, IsOk());
  EXPECT_THAT(cancelling->reason, HasSubstr("SIGTERM sent"));
  const auto ended = tick_until(**q, a->id, [](const Job& j) { return finished(j); });
  EXPECT_EQ(ended.state, "cancelled");
  EXPECT_EQ(ended.exit_code, 128 + 9);
  EXPECT_EQ((*q)->jobs()[2].state, "cancelled");
  EXPECT_EQ((*q)->jobs()[2].reason, "cancelled before it started");
  EXPECT_THAT((*q)->cancel(42), StatusIs(Errc::kNotFound, HasSubstr("no job 42")));
}

TEST(JobQueueTest, ARestartKeepsQueuedJobsAdoptsRunningOnesAndReportsTheGone) {
  TempDir dir;
  JobQueueOptions options;
  options.dir = (dir.path() / "jobs").string();
  const std::string cwd = dir.path().string();
  std::int64_t running = 0;
  std::int64_t queued = 0;
  {
    auto q = JobQueue::open(options);
    ASSERT_THAT(q, IsOk());
    running = (*q)->submit(shell("sleep 1", cwd))->id;
    (void)(*q)->submit(shell("sleep 1", cwd));
    queued = (*q)->submit(shell("echo later", cwd))->id;
    (*q)->tick(two_devices());
    ASSERT_EQ((*q)->jobs()[0].state, "running");
  }  // the daemon stops; its jobs run on
  auto q = JobQueue::open(options);
  ASSERT_THAT(q, IsOk());
  EXPECT_THAT(JobQueue::open(options), StatusIs(Errc::kUnavailable, HasSubstr("in use")))
      << "a second daemon would replace the first one's token";
  auto jobs = (*q)->jobs();
  EXPECT_EQ(jobs[0].state, "running") << "adopted: same PID, same start time";
  EXPECT_EQ(jobs[2].state, "queued");
  const auto adopted = tick_until(**q, running, [](const Job& j) { return finished(j); });
  EXPECT_EQ(adopted.state, "lost");
  EXPECT_THAT(adopted.reason, HasSubstr("its exit status is unknown"));
  const auto later = tick_until(**q, queued, [](const Job& j) { return finished(j); });
  EXPECT_EQ(later.state, "exited");
  // Reaped by nobody (the first queue's children): wait for them so the test leaves none.
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }

  // A table from elsewhere is refused, not overwritten.
  std::ofstream(dir.path() / "other.sqlite") << "not a database at all, just text\n";
  JobQueueOptions other;
  other.dir = (dir.path() / "other").string();
  std::filesystem::create_directories(other.dir);
  std::filesystem::copy_file(dir.path() / "other.sqlite", dir.path() / "other" / "jobs.sqlite");
  EXPECT_THAT(JobQueue::open(other), StatusIs(Errc::kInvalidArgument, HasSubstr("jobs.sqlite")));
}

TEST(JobQueueTest, TheDaemonServesTheQueueToItsTokenOnly) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path() / "root");
  DaemonOptions o;
  o.server.host = "127.0.0.1";
  o.server.port = 0;
  o.interval = std::chrono::milliseconds(100);
  o.sysroot = (dir.path() / "root").string();
  o.sources.nvml_mode = "off";
  o.sources.simulate = 2;
  o.sources.host = false;
  o.checks.probe.sysroot = o.sysroot;
  o.checks.probe.nvml = topo::NvmlMode::kOff;
  o.jobs = JobQueueOptions{};
  o.jobs->dir = (dir.path() / "jobs").string();
  JobClient client;
  client.dir = o.jobs->dir;
  EXPECT_THAT(client.jobs(), StatusIs(Errc::kUnavailable, HasSubstr("acco serve --jobs")));
  auto daemon = Daemon::create(o);
  ASSERT_THAT(daemon, IsOk());
  auto started = daemon->start();
  ASSERT_THAT(started, IsOk());
  auto job = client.submit(shell("echo hello from $CUDA_VISIBLE_DEVICES", dir.path().string()));
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ(job->state, "queued");
  Job done;
  for (int i = 0; i < 100 && !finished(done); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto jobs = client.jobs();
    ASSERT_THAT(jobs, IsOk());
    done = jobs->front();
  }
  EXPECT_EQ(done.state, "exited");
  EXPECT_EQ(*client.logs(job->id), "hello from 0\n");
  EXPECT_THAT(client.cancel(7), StatusIs(Errc::kNotFound, HasSubstr("no job 7")));
  EXPECT_THAT(client.logs(7), StatusIs(Errc::kNotFound));

  httplib::Client http("127.0.0.1", started->port);
  auto anonymous = http.Get("/api/v1/jobs");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  auto wrong =
      http.Post("/api/v1/jobs", {{"Authorization", "Bearer 0000"}}, "{}", "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("acco_jobs{state=\"exited\"} 1\n"));

  // The dashboard's view needs no token and shows no command: a running job's id, name, state,
  // devices and why; finished ones are gone.
  auto sleeper = client.submit(shell("sleep 30", dir.path().string()));
  ASSERT_THAT(sleeper, IsOk());
  nlohmann::json board;
  for (int i = 0; i < 100; ++i) {
    auto placements = http.Get("/api/v1/placements");
    ASSERT_TRUE(placements);
    EXPECT_EQ(placements->status, 200);
    board = nlohmann::json::parse(placements->body);
    if (!board["jobs"].empty() && board["jobs"][0]["state"] == "running") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(board["queue"], true);
  ASSERT_EQ(board["jobs"].size(), 1U) << board.dump();
  EXPECT_EQ(board["jobs"][0]["id"], sleeper->id);
  EXPECT_EQ(board["jobs"][0]["state"], "running");
  EXPECT_EQ(board["jobs"][0]["devices"], nlohmann::json::array({"0"}));
  EXPECT_THAT(board["jobs"][0]["placement"].get<std::string>(), HasSubstr("device 0: "));
  EXPECT_THAT(board.dump(), ::testing::Not(HasSubstr("sleep 30")));
  EXPECT_THAT(client.cancel(sleeper->id), IsOk());
  (void)daemon->stop("the test");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "jobs" / "daemon.json"));
}

}  // namespace
}  // namespace acco::monitor

namespace acco::monitor {
namespace {

TEST(SubmitRequestTest, TheFlagsBecomeTheJobWithThisProcesssDirectoryAndEnvironment) {
  ASSERT_EQ(::setenv("ACCO_SUBMIT_TEST", "1", 1), 0);
  auto job = job_request({.command = {"python3", "train.py"},
                          .gpus = 2,
                          .memory = "20GiB",
                          .mig = "1g.10gb",
                          .memory_max = "16GiB",
                          .io_weight = 200});
  ASSERT_TRUE(job.has_value()) << job.error().message;
  EXPECT_EQ(job->argv, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(job->gpus, 2);
  EXPECT_EQ(job->memory_bytes, 20ULL << 30U);
  EXPECT_EQ(job->mig, "1g.10gb");
  EXPECT_EQ(job->memory_max_bytes, 16ULL << 30U);
  EXPECT_EQ(job->io_weight, 200);
  EXPECT_EQ(job->cwd, std::filesystem::current_path().string());
  EXPECT_EQ(job->env.at("ACCO_SUBMIT_TEST"), "1");
  ASSERT_EQ(::unsetenv("ACCO_SUBMIT_TEST"), 0);
}

TEST(SubmitRequestTest, EachBadValueIsNamedAsItsFlag) {
  const auto message = [](SubmitRequest r) {
    if (r.command.empty()) {
      r.command = {"true"};
    }
    auto job = job_request(r);
    EXPECT_FALSE(job.has_value());
    return job ? std::string() : job.error().message;
  };
  EXPECT_EQ(message({.gpus = 0}), "--gpus: '0' is not a whole number from 1 to 1024");
  EXPECT_EQ(message({.mig = "7g"}), "--mig: '7g' is not a MIG profile such as 1g.10gb or 3g.40gb");
  EXPECT_EQ(message({.memory_max = "0"}), "--memory-max: '0' is not a size such as 16GiB");
  EXPECT_EQ(message({.io_weight = 20000}),
            "--io-weight: '20000' is not a whole number from 1 to 10000");
  EXPECT_THAT(job_request({}),
              StatusIs(Errc::kInvalidArgument, "submit: the command to run is required after --"));
}

}  // namespace
}  // namespace acco::monitor
