// The node daemon's HTTP side (cpp-httplib): /metrics (Prometheus text), the JSON API
// (/api/v1/devices, /api/v1/snapshot, /api/v1/summary, /api/v1/series, /api/v1/events,
// /api/v1/findings), /healthz and the dashboard page at /.
// Handlers only read what the sampler published, so a slow or malformed client never delays
// sampling; requests are bounded in size, served by a fixed pool of threads, answered 4xx when
// malformed or unknown, and counted in acco_http_requests_total{path,code}.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "acco/core/result.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/summary.hpp"

namespace acco::monitor {

class SeriesStore;
class JobQueue;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 9477;  // 0: a free port, chosen by the kernel
  // A job submitted carries its command and environment: 64 KiB holds a large one.
  std::size_t max_request_bytes = std::size_t{64} * 1024;
  // One per concurrent connection: cpp-httplib serves a keep-alive connection on one thread.
  int threads = 64;
  std::chrono::seconds io_timeout{5};
};

// Recent events for /api/v1/events, newest last, as JSON Lines objects; may be empty.
using EventsFn = std::function<std::string(std::int64_t since_unix_nanos)>;

class Server {
 public:
  Server(const Sampler& sampler, ServerOptions options, EventsFn events = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Answers /api/v1/series windows older than the sampler's history from `store`, and adds
  // its counters to /metrics. Before start(); the store outlives the server.
  void set_store(const SeriesStore* store);
  // Answers /api/v1/findings with what `findings` returns (a JSON document). Before start().
  void set_findings(std::function<std::string()> findings);
  // Serves the job queue's API (/api/v1/jobs: list and submit; /api/v1/jobs/ID/cancel and
  // /logs), each call authorised by the queue's token, and its series in /metrics. Before
  // start(); the queue outlives the server.
  void set_jobs(JobQueue* jobs);
  // What the daemon samples, for /api/v1/summary's "sources" (null without it). Before start().
  void set_sources(SourcesInfo sources);
  // Told of refused requests (4xx but 404, and 5xx): "GET /x?y: 400 (why)", with how many
  // were not told since; at most one call a second however many arrive, so a flood of bad
  // requests cannot flood the event log. Before start(); called on the server's threads.
  void set_on_refused(std::function<void(const std::string& what)> on_refused);
  // Binds and serves on a thread of its own; returns the port it listens on. kUnavailable
  // naming the address when it cannot bind (in use, no permission).
  [[nodiscard]] Result<int> start();
  // Stops accepting, finishes the requests in flight, joins; idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// host:port as given to --listen: "127.0.0.1:9477", "0.0.0.0:9100", "[::1]:9477", ":9477"
// (127.0.0.1), "9477". kInvalidArgument naming the text otherwise.
[[nodiscard]] Result<ServerOptions> parse_listen(const std::string& text, ServerOptions base = {});

}  // namespace acco::monitor
