#include "acco/monitor/server.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/monitor/series_store.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/testing/matchers.hpp"

#include "bind_failure.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::unique_ptr<power::SensorSource>> sources;
    sources.push_back(
        std::make_unique<power::SimulatedSource>(2, power::SimulatedScenario::kCompute));
    sampler_ = std::make_unique<Sampler>(std::move(sources), nullptr, SamplerOptions{});
    sampler_->round();
    sampler_->round();
    ServerOptions options;
    options.port = 0;
    options.max_request_bytes = 1024;
    server_ = std::make_unique<Server>(
        *sampler_, options, [](std::int64_t) { return std::string("{\"event\":\"x\"}\n"); });
    auto port = server_->start();
    ASSERT_THAT(port, IsOk());
    port_ = *port;
  }
  void TearDown() override {
    server_.reset();
    sampler_.reset();
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(5, 0);
    return c;
  }

  // Sends bytes as they are and returns the status line of the answer.
  std::string raw(const std::string& request) const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port_));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return "connect failed";
    }
    timeval timeout{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    (void)!::write(fd, request.data(), request.size());
    std::string answer;
    char buffer[512];
    ssize_t n = 0;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
      answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return answer.substr(0, answer.find("\r\n"));
  }

  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

TEST_F(ServerTest, MetricsAreTheLatestRoundInPrometheusText) {
  auto c = client();
  const auto res = c.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), kMetricsContentType);
  EXPECT_THAT(res->body, HasSubstr("# TYPE acco_gpu_temperature_celsius gauge"));
  EXPECT_THAT(res->body, HasSubstr("acco_sampler_rounds_total 2"));
  // cpp-httplib counts a request in its logger, after the answer is sent, and the client opens
  // a connection per request: the next scrape may be served before that count lands.
  std::string body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto again = c.Get("/metrics");
    ASSERT_TRUE(again);
    body = again->body;
    if (body.find("acco_http_requests_total{code=\"200\",path=\"/metrics\"}") !=
        std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(body, ::testing::ContainsRegex(
                        "acco_http_requests_total\\{code=\"200\",path=\"/metrics\"\\} [1-9]"));
}

TEST_F(ServerTest, ApiAnswersDevicesSnapshotAndSeries) {
  auto c = client();
  const auto devices = c.Get("/api/v1/devices");
  ASSERT_TRUE(devices);
  const auto j = nlohmann::json::parse(devices->body);
  ASSERT_EQ(j["devices"].size(), 2U);
  EXPECT_EQ(j["devices"][0]["source"], "simulated");
  EXPECT_TRUE(j["devices"][0].contains("power_watts"));
  const auto series = c.Get("/api/v1/series?name=power_watts&since=0");
  ASSERT_TRUE(series);
  const auto s = nlohmann::json::parse(series->body);
  EXPECT_EQ(s["unit"], "watts");
  ASSERT_EQ(s["series"].size(), 2U);
  EXPECT_EQ(s["series"][0]["points"].size(), 2U);
  const auto snapshot = c.Get("/api/v1/snapshot");
  ASSERT_TRUE(snapshot);
  EXPECT_THAT(nlohmann::json::parse(snapshot->body)["time"].get<std::string>(),
              ::testing::EndsWith("Z"));
  const auto events = c.Get("/api/v1/events");
  ASSERT_TRUE(events);
  EXPECT_EQ(events->body, "{\"event\":\"x\"}\n");
  const auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_THAT(page->body, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(page->body, ::testing::Not(HasSubstr("http://")));  // nothing from the network
}

TEST_F(ServerTest, BadRequestsGet4xxAndAreCounted) {
  auto c = client();
  const auto unknown = c.Get("/nope");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_THAT(unknown->body, HasSubstr("no such path: /nope"));
  const auto bad_series = c.Get("/api/v1/series?name=bogus");
  ASSERT_TRUE(bad_series);
  EXPECT_EQ(bad_series->status, 400);
  EXPECT_THAT(bad_series->body, HasSubstr("unknown series 'bogus' (expected one of"));
  const auto bad_since = c.Get("/api/v1/series?name=power_watts&since=yesterday");
  ASSERT_TRUE(bad_since);
  EXPECT_EQ(bad_since->status, 400);
  const auto big = c.Post("/metrics", std::string(4096, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  for (const char* malformed : {"GARBAGE\r\n\r\n", "GET\r\n\r\n", "GET / HTTP/9.9\r\n\r\n"}) {
    EXPECT_EQ(raw(malformed), "HTTP/1.1 400 Bad Request") << malformed;
  }
  // A request line beyond cpp-httplib's limit is dropped without an answer; the server goes on.
  EXPECT_THAT(raw("GET /" + std::string(10000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"),
              ::testing::Not(HasSubstr(" 200 ")));
  const auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);  // still serving
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_requests_total{code=\"404\",path=\"other\"} 1"));
  EXPECT_THAT(metrics->body,
              HasSubstr("acco_http_requests_total{code=\"400\",path=\"/api/v1/series\"} 2"));
  // A path that decodes to bytes that are not UTF-8 ended the daemon (nlohmann threw in the 404
  // answer's dump).
  EXPECT_EQ(raw("GET /%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 404 Not Found");
  // Another method on a served path is 405 naming the ones allowed, not "no such path".
  const auto post = c.Delete("/metrics");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  EXPECT_THAT(post->body, HasSubstr("DELETE /metrics: method not allowed (GET or HEAD)"));
  const auto after = c.Get("/metrics");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

// The guards (http_guard.hpp) on a server of 4 threads with a 1 s deadline: of 4 connections
// that send half a request, 2 wait and 2 are answered 503 at once; a whole request is still
// served beside them; the 2 waiting get 408 at their deadline; each cut is counted.
TEST(ServerGuardTest, SlowRequestsHoldAtMostHalfTheThreadsAndEndAtTheirDeadline) {
  std::vector<std::unique_ptr<power::SensorSource>> sources;
  sources.push_back(std::make_unique<power::SimulatedSource>(1, power::SimulatedScenario::kIdle));
  Sampler sampler(std::move(sources), nullptr, SamplerOptions{});
  sampler.round();
  ServerOptions options;
  options.port = 0;
  options.threads = 4;
  options.io_timeout = std::chrono::seconds(1);
  Server server(sampler, options);
  std::vector<std::string> told;
  std::mutex told_mutex;
  server.set_on_refused([&](const std::string& what) {
    const std::lock_guard lock(told_mutex);
    told.push_back(what);
  });
  const auto port = server.start();
  ASSERT_THAT(port, IsOk());
  const auto connect = [&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(*port));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const std::string half = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    EXPECT_EQ(::send(fd, half.data(), half.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(half.size()));
    return fd;
  };
  std::vector<int> slow;
  for (int i = 0; i < 4; ++i) {
    slow.push_back(connect());
  }
  const auto status_line = [](int fd) {
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string answer;
    char buffer[512];
    ssize_t n = 0;
    while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) {
      answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return answer.substr(0, answer.find("\r\n"));
  };
  httplib::Client c("127.0.0.1", *port);
  c.set_read_timeout(10, 0);
  const auto healthz = c.Get("/healthz");
  ASSERT_TRUE(healthz);
  EXPECT_EQ(healthz->status, 200);
  std::map<std::string, int> statuses;
  for (const int fd : slow) {
    ++statuses[status_line(fd)];
  }
  EXPECT_EQ(statuses["HTTP/1.1 503 Service Unavailable"], 2);
  EXPECT_EQ(statuses["HTTP/1.1 408 Request Timeout"], 2);
  const auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_cut_total{reason=\"too_many_waiting\"} 2"));
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_cut_total{reason=\"request_deadline\"} 2"));
  server.stop();
  const std::lock_guard lock(told_mutex);
  ASSERT_FALSE(told.empty());
  EXPECT_THAT(told.front(),
              HasSubstr("GET /healthz: 503 (2 connections already wait on their clients)"));
}

TEST_F(ServerTest, SecondServerOnTheSamePortIsRefusedByName) {
  ServerOptions options;
  options.port = port_;
  Server second(*sampler_, options);
  const auto r = second.start();
  ASSERT_THAT(r, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(r.error().message,
              HasSubstr(fmt::format("cannot listen on 127.0.0.1:{}: the port is in use", port_)));
}

TEST_F(ServerTest, AnAddressOfAnotherMachineIsNamedAsNotLocal) {
  ServerOptions options;
  options.host = "192.0.2.1";  // TEST-NET-1 (RFC 5737): never this machine's
  options.port = port_;
  Server other(*sampler_, options);
  const auto r = other.start();
  ASSERT_THAT(r, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(r.error().message,
              HasSubstr(fmt::format("cannot listen on 192.0.2.1:{}: 192.0.2.1 is not an address "
                                    "of this machine",
                                    port_)));
}

TEST(BindFailureTest, EachCauseHasItsOwnWords) {
  EXPECT_THAT(detail::bind_failure_reason(EADDRINUSE, "h"), HasSubstr("the port is in use"));
  EXPECT_THAT(detail::bind_failure_reason(EACCES, "h"),
              HasSubstr("permission denied (ports below"));
  EXPECT_THAT(detail::bind_failure_reason(EADDRNOTAVAIL, "10.9.9.9"),
              HasSubstr("10.9.9.9 is not an address of this machine"));
  EXPECT_EQ(detail::bind_failure_reason(0, "h"), "address in use, not local, or not permitted");
  EXPECT_EQ(detail::bind_failure_reason(ENOMEM, "h"), std::strerror(ENOMEM));
}

TEST(BindFailureTest, AFamilyTheKernelLacksDoesNotHideTheBindError) {
  // localhost on a host without IPv6: ::1's socket() fails, 127.0.0.1's bind finds the port taken.
  EXPECT_EQ(detail::bind_error_of({{.socket_error = EAFNOSUPPORT}, {.bind_error = EADDRINUSE}}),
            EADDRINUSE);
  EXPECT_EQ(detail::bind_error_of({{.bind_error = EACCES}, {.bind_error = EADDRINUSE}}), EACCES);
  EXPECT_EQ(detail::bind_error_of({{.socket_error = EAFNOSUPPORT}, {.bind_error = 0}}), 0);
  EXPECT_EQ(detail::bind_error_of({{.socket_error = EAFNOSUPPORT}, {.socket_error = EMFILE}}),
            EAFNOSUPPORT);
  EXPECT_EQ(detail::bind_error_of({}), 0);
}

TEST(BindFailureTest, AHostThatDoesNotResolveIsSaid) {
  EXPECT_THAT(detail::diagnose_bind("no-such-host.invalid", 8080),
              HasSubstr("no-such-host.invalid does not resolve"));
}

TEST(ServerStoreTest, SeriesOlderThanTheHistoryComeFromTheStoreAndUntilEndsTheWindow) {
  const auto path =
      std::filesystem::temp_directory_path() / fmt::format("acco-server-store-{}.db", ::getpid());
  std::filesystem::remove(path);
  SeriesStoreOptions options;
  options.batch_rounds = 1;
  auto store = SeriesStore::open(path.string(), options);
  ASSERT_TRUE(store) << store.error().message;
  std::vector<std::unique_ptr<power::SensorSource>> sources;
  sources.push_back(std::make_unique<power::SimulatedSource>(1, power::SimulatedScenario::kIdle));
  Sampler sampler(std::move(sources), nullptr,
                  {.interval = std::chrono::milliseconds(5), .history_rounds = 2});
  sampler.add_observer([&](const Published& p) { (*store)->add(p.snapshot); });
  std::vector<std::int64_t> times;
  for (int i = 0; i < 5; ++i) {
    sampler.round();
    times.push_back(sampler.latest()->snapshot.time_unix_nanos);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Server server(sampler, {.port = 0});
  server.set_store(store->get());
  const auto port = server.start();
  ASSERT_TRUE(port);
  httplib::Client c("127.0.0.1", *port);
  const auto points = [&](const std::string& query) {
    const auto r = c.Get("/api/v1/series?name=power_watts" + query);
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    const auto body = nlohmann::json::parse(r->body);
    std::vector<std::int64_t> out;
    for (const auto& p : body["series"][0]["points"]) {
      out.push_back(p[0].get<std::int64_t>());
    }
    return out;
  };
  EXPECT_EQ(points("&since=1"), times);  // three from the store, two from memory
  EXPECT_EQ(points(fmt::format("&since=1&until={}", times[1])),
            (std::vector<std::int64_t>{times[0], times[1]}));
  EXPECT_EQ(points(fmt::format("&since={}&until={}", times[3], times[3])),
            (std::vector<std::int64_t>{times[3]}));
  const auto bad = c.Get("/api/v1/series?name=power_watts&until=later");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("until: expected Unix time in nanoseconds"));
  const auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("acco_store_points_total "));
  server.stop();
  store->reset();
  std::filesystem::remove(path);
}

// A host whose eth0 receives 1 MB and whose CPUs are half busy each round, on the clock the
// sampler stamps (one second a round).
class SteadyHost final : public power::HostSource {
 public:
  Result<power::HostSample> read() override {
    ++round_;
    power::HostSample h;
    h.time_unix_nanos = round_ * 1'000'000'000;
    h.cpu.cpus = 2;
    h.cpu.seconds = {{"user", static_cast<double>(round_)}, {"idle", static_cast<double>(round_)}};
    h.memory_bytes = {{"total", 1000}, {"available", 400}};
    h.net = {{"eth0", 1'000'000 * static_cast<std::uint64_t>(round_), 0, 0, 0, 0, 0, 0, 0, true}};
    return h;
  }

 private:
  std::int64_t round_ = 0;
};

TEST(ServerHostTest, HostSeriesAndTheSummaryAnswerRatesBetweenRounds) {
  std::vector<std::unique_ptr<power::SensorSource>> sources;
  sources.push_back(std::make_unique<power::SimulatedSource>(1, power::SimulatedScenario::kIdle));
  std::int64_t clock = 0;
  Sampler sampler(std::move(sources), std::make_unique<SteadyHost>(),
                  {.clock = [&clock] { return clock += 1'000'000'000; }});
  for (int i = 0; i < 3; ++i) {
    sampler.round();
  }
  Server server(sampler, {.port = 0});
  SourceOptions options;
  options.simulate = 1;
  server.set_sources(sources_info(options, "/", "off"));
  const auto port = server.start();
  ASSERT_TRUE(port);
  httplib::Client c("127.0.0.1", *port);
  const auto rx = c.Get("/api/v1/series?name=host_network_receive_bytes_per_second&since=0");
  ASSERT_TRUE(rx);
  ASSERT_EQ(rx->status, 200) << rx->body;
  const auto body = nlohmann::json::parse(rx->body);
  EXPECT_EQ(body["unit"], "bytes_per_second");
  ASSERT_EQ(body["series"].size(), 1U);
  EXPECT_EQ(body["series"][0]["device"], "host");
  // Three rounds, two rates: the first round of the window has no previous one.
  EXPECT_EQ(body["series"][0]["points"],
            nlohmann::json::parse("[[2000000000, 1000000.0], [3000000000, 1000000.0]]"));
  const auto memory = c.Get("/api/v1/series?name=host_memory_used_bytes&since=0");
  ASSERT_TRUE(memory);
  EXPECT_EQ(nlohmann::json::parse(memory->body)["series"][0]["points"].size(), 3U);

  const auto summary = c.Get("/api/v1/summary");
  ASSERT_TRUE(summary);
  ASSERT_EQ(summary->status, 200);
  const auto j = nlohmann::json::parse(summary->body);
  EXPECT_EQ(j["time_unix_nanos"], 3'000'000'000);
  EXPECT_EQ(j["host"]["network_receive_bytes_per_second"], 1e6);
  EXPECT_EQ(j["host"]["cpu_busy_ratio"], 0.5);
  EXPECT_EQ(j["host"]["memory_used_bytes"], 600);
  EXPECT_EQ(j["sources"]["simulated"], 1);
  EXPECT_EQ(j["devices"][0]["pcie_link"], "PCIe Gen5 x16");
  server.stop();
}

TEST(ParseListenTest, TakesHostPortForms) {
  EXPECT_EQ(parse_listen("127.0.0.1:9100")->port, 9100);
  EXPECT_EQ(parse_listen("0.0.0.0:9100")->host, "0.0.0.0");
  EXPECT_EQ(parse_listen("[::1]:9100")->host, "::1");
  EXPECT_EQ(parse_listen(":9100")->host, "127.0.0.1");
  EXPECT_EQ(parse_listen("9100")->port, 9100);
  for (const char* bad : {"", "host:", "::1:9100", "[::1]9100", "a:70000", "a:-1", "a:b"}) {
    const auto r = parse_listen(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("as HOST:PORT")) << bad;
  }
}

}  // namespace
}  // namespace acco::monitor
