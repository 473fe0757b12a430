#include "acco/monitor/server.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <nlohmann/json.hpp>

#include "acco/analyze/json.hpp"
#include "acco/core/json.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/dashboard.hpp"
#include "acco/monitor/fields.hpp"
#include "acco/monitor/host_rates.hpp"
#include "acco/monitor/jobs.hpp"
#include "acco/monitor/series_store.hpp"
#include "acco/monitor/summary.hpp"

#include "bind_failure.hpp"
#include "http_guard.hpp"

namespace acco::monitor {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kJson = "application/json";
constexpr int kListenBacklog = 1024;
constexpr std::size_t kKeepAliveRequests = 1000;
constexpr std::size_t kMaxStoredPoints = 2000;  // per device, from the store, per request
constexpr std::size_t kMaxLogBytes = std::size_t{1} << 20;  // a job's output, its last MiB

// A JSON document and a newline; a path or a stored name that is not UTF-8 must not end the
// daemon.
template <typename Document>
std::string json_body(const Document& j) {
  return core::dump_replacing_invalid_utf8(j) + "\n";
}

void json_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json_body(Json{{"error", message}}), kJson);
}

// Paths as label values: the known ones, everything else "other" (bounded cardinality).
std::string path_label(const std::string& path) {
  for (const char* known :
       {"/", "/metrics", "/healthz", "/api/v1/devices", "/api/v1/series", "/api/v1/events",
        "/api/v1/snapshot", "/api/v1/findings", "/api/v1/summary", "/api/v1/placements"}) {
    if (path == known) {
      return path;
    }
  }
  return "other";
}

}  // namespace

struct Server::Impl {
  const Sampler& sampler;
  ServerOptions options;
  EventsFn events;
  const SeriesStore* store = nullptr;
  std::function<std::string()> findings;
  std::optional<SourcesInfo> sources;
  JobQueue* jobs = nullptr;
  std::function<void(const std::string&)> on_refused;
  std::mutex refused_mutex;
  std::chrono::steady_clock::time_point refused_told{};
  std::size_t refused_untold = 0;
  detail::GuardedServer http;
  std::thread thread;
  socket_t listen_socket = INVALID_SOCKET;
  prometheus::Registry registry;
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("acco_http_requests_total")
          .Help("HTTP requests answered, by path and status code")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& cuts =
      prometheus::BuildCounter()
          .Name("acco_http_cut_total")
          .Help(
              "Requests and connections cut to keep the server's threads for other clients, "
              "by reason: request_deadline (not whole in time), too_many_waiting (too many "
              "connections already waiting on their clients), header_too_large (answered 431)")
          .Register(registry);

  Impl(const Sampler& s, ServerOptions o, EventsFn e)
      : sampler(s), options(std::move(o)), events(std::move(e)), http(guard_options()) {}

  // A request must arrive whole within the I/O timeout; at most half the threads wait on
  // clients that have not sent theirs.
  detail::GuardOptions guard_options() {
    detail::GuardOptions guard;
    guard.request_deadline = options.io_timeout;
    guard.max_waiting = static_cast<std::size_t>(std::max(1, options.threads / 2));
    guard.on_cut = [this](detail::Cut cut, const std::string& peer, bool answered) {
      cuts.Add({{"reason", detail::cut_label(cut)}}).Increment();
      if (!answered) {  // an answer is told by the logger
        tell_refused(
            fmt::format("connection from {} cut: {}", peer.empty() ? "?" : peer, cut_reason(cut)));
      }
    };
    return guard;
  }

  std::string cut_reason(detail::Cut cut) const {
    switch (cut) {
      case detail::Cut::kRequestDeadline:
        return fmt::format("request not whole within {} s of its first byte",
                           options.io_timeout.count());
      case detail::Cut::kTooManyWaiting:
        return fmt::format("{} connections already wait on their clients",
                           std::max(1, options.threads / 2));
      case detail::Cut::kHeaderTooLarge:
        return "request headers too large (a line past 8 KiB or 64 KiB in all)";
      case detail::Cut::kNone:
        break;
    }
    return {};
  }

  void count(const std::string& path, int status) {
    requests.Add({{"path", path_label(path)}, {"code", std::to_string(status)}}).Increment();
  }

  std::string http_metrics() const {
    return prometheus::TextSerializer().Serialize(registry.Collect());
  }

  void routes() {
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      const auto latest = sampler.latest();
      if (!latest) {
        res.status = 503;
        res.set_content("no sample yet\n", "text/plain");
        return;
      }
      res.set_content(latest->metrics +
                          (store != nullptr ? render_store_metrics(store->stats()) : "") +
                          (jobs != nullptr ? jobs->metrics() : "") + http_metrics(),
                      kMetricsContentType);
    });
    http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    http.Get("/api/v1/devices", [this](const httplib::Request&, httplib::Response& res) {
      const auto latest = sampler.latest();
      Json devices = Json::array();
      if (latest) {
        for (const auto& d : latest->snapshot.devices) {
          devices.push_back(analyze::to_json(d));
        }
      }
      res.set_content(json_body(Json{{"devices", devices}}), kJson);
    });
    http.Get("/api/v1/snapshot", [this](const httplib::Request&, httplib::Response& res) {
      const auto latest = sampler.latest();
      if (!latest) {
        json_error(res, 503, "no sample yet");
        return;
      }
      res.set_content(json_body(analyze::to_json(latest->snapshot)), kJson);
    });
    http.Get("/api/v1/summary", [this](const httplib::Request&, httplib::Response& res) {
      const auto latest = sampler.latest();
      if (!latest) {
        json_error(res, 503, "no sample yet");
        return;
      }
      // The round before the latest, for the host's rates; the recent rounds are held while
      // the summary is written.
      const std::int64_t latest_time = latest->snapshot.time_unix_nanos;
      const auto recent =
          sampler.since(latest_time - std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          4 * sampler.options().interval)
                                          .count());
      const analyze::Snapshot* previous = nullptr;
      for (const auto& round : recent) {
        if (round->snapshot.time_unix_nanos >= latest_time) {
          break;
        }
        previous = &round->snapshot;
      }
      res.set_content(summary_json(latest->snapshot, previous, sources ? &*sources : nullptr),
                      kJson);
    });
    http.Get("/api/v1/series",
             [this](const httplib::Request& req, httplib::Response& res) { series(req, res); });
    http.Get("/api/v1/events", [this](const httplib::Request& req, httplib::Response& res) {
      std::int64_t since = 0;
      if (req.has_param("since")) {
        const auto v = units::parse_int(req.get_param_value("since"));
        if (!v) {
          json_error(res, 400, "since: expected Unix time in nanoseconds");
          return;
        }
        since = *v;
      }
      res.set_content(events ? events(since) : std::string(), "application/x-ndjson");
    });
    http.Get("/api/v1/findings", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          findings
              ? findings()
              : std::string("{\"findings\": null, \"note\": \"not checked by this daemon\"}\n"),
          kJson);
    });
    job_routes();
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(dashboard_html()), "text/html; charset=utf-8");
    });
    http.set_error_handler(
        [this](const httplib::Request& req, httplib::Response& res) { answer_error(req, res); });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      count(req.path, res.status);
      if (res.status >= 400 && res.status != 404) {
        refused(req, res);
      }
    });
  }

  // The answer to a request no route took, or that cpp-httplib refused: a JSON reason.
  void answer_error(const httplib::Request& req, httplib::Response& res) const {
    if (!res.body.empty()) {
      return;  // a handler's own answer (the job API's 404 for an unknown job)
    }
    if (const auto cut = detail::GuardedServer::current_cut(); cut != detail::Cut::kNone) {
      // cpp-httplib says 400 when its read stops; the guard knows why.
      res.set_header("Connection", "close");
      json_error(res,
                 cut == detail::Cut::kHeaderTooLarge    ? 431
                 : cut == detail::Cut::kRequestDeadline ? 408
                                                        : 503,
                 cut_reason(cut));
    } else if (res.status == 404 && path_label(req.path) != "other") {
      // A path served for GET (and HEAD) only: httplib answers other methods with 404.
      res.set_header("Allow", "GET, HEAD");
      json_error(res, 405,
                 fmt::format("{} {}: method not allowed (GET or HEAD)", req.method, req.path));
    } else if (res.status == 404 &&
               (req.path.rfind("http://", 0) == 0 || req.path.rfind("https://", 0) == 0)) {
      // The absolute form (RFC 9112 3.2.2) is what clients send to a proxy, which this is not.
      json_error(res, 400,
                 fmt::format("{}: an absolute URI is for a proxy; send the path alone (GET "
                             "/metrics)",
                             units::excerpt(req.path, 120)));
    } else if (res.status == 404) {
      json_error(res, 404, fmt::format("no such path: {}", req.path));
    } else if (res.body.empty()) {
      json_error(res, res.status, fmt::format("request refused ({})", res.status));
    }
  }

  // Tells on_refused of a refused request.
  void refused(const httplib::Request& req, const httplib::Response& res) {
    if (!on_refused) {
      return;
    }
    const auto reason = nlohmann::json::parse(res.body, nullptr, false);
    tell_refused(fmt::format(
        "{} {}: {}{}", req.method.empty() ? std::string("?") : req.method,
        units::excerpt(req.path.empty() ? std::string("(unparsed)") : req.path, 120), res.status,
        reason.is_object() && reason.contains("error") && reason["error"].is_string()
            ? " (" + reason["error"].get<std::string>() + ")"
            : std::string()));
  }

  // At most once a second, with the count not told since.
  void tell_refused(const std::string& what) {
    if (!on_refused) {
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    std::string told;
    {
      const std::lock_guard lock(refused_mutex);
      if (now - refused_told < std::chrono::seconds(1) &&
          refused_told != std::chrono::steady_clock::time_point{}) {
        ++refused_untold;
        return;
      }
      told = what + (refused_untold > 0
                         ? fmt::format("; {} more refused since the last told", refused_untold)
                         : std::string());
      refused_told = now;
      refused_untold = 0;
    }
    on_refused(told);
  }

  // The job queue's API: every call needs "Authorization: Bearer <token>", the token the queue
  // wrote to its directory, readable by the daemon's user alone.
  bool authorised(const httplib::Request& req, httplib::Response& res) const {
    if (jobs == nullptr) {
      json_error(res, 404, "this daemon runs no job queue (start it with acco serve --jobs)");
      return false;
    }
    // Local only: the token travels in plain HTTP, so a daemon listening on a network address
    // answers the job API to its own host alone.
    const auto& peer = req.remote_addr;
    if (peer != "127.0.0.1" && peer != "::1" && peer != "::ffff:127.0.0.1") {
      json_error(res, 403, "the job queue answers local clients only (127.0.0.1, ::1)");
      return false;
    }
    const std::string expected = "Bearer " + jobs->token();
    const std::string given = req.get_header_value("Authorization");
    unsigned char diff = given.size() == expected.size() ? 0 : 1;
    for (std::size_t i = 0; i < std::min(given.size(), expected.size()); ++i) {
      diff |= static_cast<unsigned char>(given[i] ^ expected[i]);
    }
    if (diff != 0) {
      json_error(res, 401,
                 "the job queue answers its own user only: send the token from the jobs "
                 "directory (Authorization: Bearer ...)");
      return false;
    }
    return true;
  }

  static std::optional<std::int64_t> job_id(const httplib::Request& req, httplib::Response& res) {
    const auto id = units::parse_int(req.matches[1].str());
    if (!id) {
      json_error(res, 400, "a job id: expected a number");
      return std::nullopt;
    }
    return *id;
  }

  static int status_of(Errc code) {
    return code == Errc::kNotFound ? 404 : code == Errc::kInvalidArgument ? 400 : 500;
  }

  void job_routes() {
    // The dashboard's view: queued and running jobs as /metrics shows them (ids, names, states,
    // devices, why), never a command, a directory or an environment; no token.
    http.Get("/api/v1/placements", [this](const httplib::Request&, httplib::Response& res) {
      auto list = Json::array();
      if (jobs != nullptr) {
        for (const auto& job : jobs->jobs()) {
          if (finished(job)) {
            continue;
          }
          list.push_back({{"id", job.id},
                          {"name", job.request.name},
                          {"state", job.state},
                          {"devices", job.devices},
                          {"reason", job.reason},
                          {"placement", job.placement},
                          {"started_unix_nanos", job.started_unix_nanos}});
        }
      }
      res.set_content(json_body(Json{{"queue", jobs != nullptr}, {"jobs", list}}), kJson);
    });
    http.Get("/api/v1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
      if (authorised(req, res)) {
        res.set_content(json_body(jobs_json(jobs->jobs())), kJson);
      }
    });
    http.Post("/api/v1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorised(req, res)) {
        return;
      }
      const auto body = nlohmann::json::parse(req.body, nullptr, false);
      auto request = parse_request(body);
      if (!request) {
        json_error(res, 400, request.error().message);
        return;
      }
      auto job = jobs->submit(std::move(*request));
      if (!job) {
        json_error(res, status_of(job.error().code), job.error().message);
        return;
      }
      res.status = 201;
      res.set_content(json_body(to_json(*job)), kJson);
    });
    http.Post(R"(/api/v1/jobs/([^/]+)/cancel)",
              [this](const httplib::Request& req, httplib::Response& res) {
                with_job(req, res, [&](std::int64_t id) {
                  auto job = jobs->cancel(id);
                  if (job) {
                    res.set_content(json_body(to_json(*job)), kJson);
                  }
                  return job.has_value() ? Status{} : Status(tl::unexpected(job.error()));
                });
              });
    http.Get(R"(/api/v1/jobs/([^/]+)/logs)",
             [this](const httplib::Request& req, httplib::Response& res) {
               with_job(req, res, [&](std::int64_t id) {
                 auto text = jobs->logs(id, kMaxLogBytes);
                 if (text) {
                   res.set_content(*text, "text/plain; charset=utf-8");
                 }
                 return text.has_value() ? Status{} : Status(tl::unexpected(text.error()));
               });
             });
  }

  // An authorised request naming a job by its id: `act` answers, or its error becomes the
  // status (404 for an unknown job).
  template <typename Act>
  void with_job(const httplib::Request& req, httplib::Response& res, Act act) {
    if (!authorised(req, res)) {
      return;
    }
    const auto id = job_id(req, res);
    if (!id) {
      return;
    }
    if (auto done = act(*id); !done) {
      json_error(res, status_of(done.error().code), done.error().message);
    }
  }

  // Parses the optional Unix-nanosecond parameter `key`; false after answering 400.
  static bool time_param(const httplib::Request& req, httplib::Response& res, const char* key,
                         std::int64_t& out) {
    if (!req.has_param(key)) {
      return true;
    }
    const auto v = units::parse_int(req.get_param_value(key));
    if (!v) {
      json_error(res, 400, fmt::format("{}: expected Unix time in nanoseconds", key));
      return false;
    }
    out = *v;
    return true;
  }

  void series(const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.get_param_value("name");
    const DeviceField* field = find_device_field(name);
    const HostField* host_field = find_host_field(name);
    if (field == nullptr && host_field == nullptr) {
      std::string names;
      for (const auto& f : device_fields()) {
        names += fmt::format("{}{}", names.empty() ? "" : ", ", f.name);
      }
      for (const auto& f : host_fields()) {
        names += fmt::format(", {}", f.name);
      }
      json_error(res, 400,
                 fmt::format("name: unknown series '{}' (expected one of {})", units::excerpt(name),
                             names));
      return;
    }
    std::int64_t since = 0;
    std::int64_t until = std::numeric_limits<std::int64_t>::max();
    if (!time_param(req, res, "since", since) || !time_param(req, res, "until", until)) {
      return;
    }
    // device -> [[time_unix_nanos, value], ...]
    std::map<std::string, Json> points;
    const auto append = [&](const std::string& device, std::int64_t t, double v) {
      auto& list = points[device];
      if (list.is_null()) {
        list = Json::array();
      }
      list.push_back(Json::array({t, v}));
    };
    const auto rounds = sampler.since(since);
    const std::int64_t memory_from = rounds.empty() ? std::numeric_limits<std::int64_t>::max()
                                                    : rounds.front()->snapshot.time_unix_nanos;
    // The first round at or after `since` comes within an interval of it when `since` is inside
    // the in-memory history; a larger gap means older rounds, which only the store has.
    const auto slack =
        std::chrono::duration_cast<std::chrono::nanoseconds>(2 * sampler.options().interval)
            .count();
    const std::string_view field_name = field != nullptr ? field->name : host_field->name;
    if (store != nullptr && since < memory_from - slack) {
      const auto stored = store->query(std::string(field_name), std::nullopt, since,
                                       std::min(until, memory_from - 1), kMaxStoredPoints);
      for (const auto& s : stored.value_or(std::vector<Series>{})) {
        for (const auto& p : s.points) {
          append(s.device, p.time_unix_nanos, p.value);
        }
      }
    }
    const power::HostSample* previous_host = nullptr;
    for (const auto& round : rounds) {
      if (round->snapshot.time_unix_nanos > until) {
        break;
      }
      const auto& snapshot = round->snapshot;
      if (field != nullptr) {
        for (const auto& d : snapshot.devices) {
          if (const auto v = field->get(d)) {
            append(d.device, snapshot.time_unix_nanos, *v);
          }
        }
      } else if (snapshot.host) {
        // Rates between consecutive rounds of the window: its first round has none.
        const HostRates rates = host_rates(*snapshot.host, previous_host);
        if (const auto v = rates.*host_field->value) {
          append("host", snapshot.time_unix_nanos, *v);
        }
        previous_host = &*snapshot.host;
      }
    }
    Json series = Json::array();
    for (auto& [device, list] : points) {
      series.push_back({{"device", device}, {"points", std::move(list)}});
    }
    res.set_content(json_body(Json{{"name", field_name},
                                   {"unit", field != nullptr ? field->unit : host_field->unit},
                                   {"series", series}}),
                    kJson);
  }
};

Server::Server(const Sampler& sampler, ServerOptions options, EventsFn events)
    : impl_(std::make_unique<Impl>(sampler, std::move(options), std::move(events))) {}

void Server::set_store(const SeriesStore* store) {
  impl_->store = store;
}

void Server::set_findings(std::function<std::string()> findings) {
  impl_->findings = std::move(findings);
}

void Server::set_jobs(JobQueue* jobs) {
  impl_->jobs = jobs;
}

void Server::set_on_refused(std::function<void(const std::string& what)> on_refused) {
  impl_->on_refused = std::move(on_refused);
}

void Server::set_sources(SourcesInfo sources) {
  impl_->sources = std::move(sources);
}

Server::~Server() {
  stop();
}

Result<int> Server::start() {
  Impl& i = *impl_;
  i.routes();
  const int threads = std::max(1, i.options.threads);
  i.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  i.http.set_payload_max_length(i.options.max_request_bytes);
  const auto timeout = static_cast<time_t>(i.options.io_timeout.count());
  i.http.set_read_timeout(timeout, 0);
  i.http.set_write_timeout(timeout, 0);
  i.http.set_keep_alive_timeout(timeout);
  // cpp-httplib sets SO_REUSEPORT by default, which lets a second daemon bind the same port and
  // take half the scrapes; SO_REUSEADDR alone lets a restart rebind at once and no more.
  i.http.set_socket_options([&i](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    i.listen_socket = sock;
  });
  // A scraper keeps its connection for up to this many requests (cpp-httplib closes after 5 by
  // default, and every reconnect goes through the accept queue).
  i.http.set_keep_alive_max_count(kKeepAliveRequests);
  int port = i.options.port;
  if (port == 0) {
    port = i.http.bind_to_any_port(i.options.host);
    if (port < 0) {
      port = 0;
    }
  } else if (!i.http.bind_to_port(i.options.host, port)) {
    port = 0;
  }
  // cpp-httplib listens with a backlog of 5 (compiled into Debian's library): 50 scrapers
  // connecting at once overflow it, and each dropped SYN costs its client a 1 s retransmit.
  // Linux lets listen() on a listening socket change the backlog.
  if (port > 0 && i.listen_socket >= 0) {
    ::listen(i.listen_socket, kListenBacklog);
  }
  if (port <= 0) {
    return fail(Errc::kUnavailable,
                fmt::format("cannot listen on {}:{}: {}", i.options.host, i.options.port,
                            detail::diagnose_bind(i.options.host, i.options.port)));
  }
  i.thread = std::thread([&i] { i.http.listen_after_bind(); });
  // stop() only ends a server that already runs its accept loop, so start() returns once it
  // does: a stop() right after start() would otherwise leave the thread listening forever.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!i.http.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return port;
}

void Server::stop() {
  if (!impl_) {
    return;
  }
  impl_->http.stop();
  if (impl_->thread.joinable()) {
    impl_->thread.join();
  }
}

Result<ServerOptions> parse_listen(const std::string& text, ServerOptions base) {
  const auto bad = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse '{}' as HOST:PORT (expected e.g. 127.0.0.1:9477, "
                            "0.0.0.0:9477, [::1]:9477 or a port)",
                            units::excerpt(text)));
  };
  std::string host = base.host;
  std::string port_text = text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad();
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    if (text.find(':') != colon) {
      return bad();  // a bare IPv6 address needs brackets
    }
    if (colon > 0) {
      host = text.substr(0, colon);
    }
    port_text = text.substr(colon + 1);
  }
  const auto port = units::parse_int(port_text);
  if (!port || *port < 0 || *port > 65535 || host.empty()) {
    return bad();
  }
  base.host = host;
  base.port = static_cast<int>(*port);
  return base;
}

}  // namespace acco::monitor
