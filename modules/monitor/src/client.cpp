#include "acco/monitor/client.hpp"

#include <string_view>

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "acco/analyze/json.hpp"
#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/jobs.hpp"

namespace acco::monitor {

std::string ServerUrl::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

Result<ServerUrl> parse_server_url(const std::string& url) {
  const auto bad = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse '{}' as a daemon's address (expected HOST:PORT or "
                            "http://HOST:PORT, e.g. 127.0.0.1:9477)",
                            units::excerpt(url)));
  };
  constexpr std::string_view kScheme = "http://";
  const bool scheme = url.rfind(kScheme, 0) == 0;
  if (!scheme && url.find("://") != std::string::npos) {  // https://, ftp://: not served
    return bad();
  }
  std::string rest = scheme ? url.substr(kScheme.size()) : url;
  if (!rest.empty() && rest.back() == '/') {
    rest.pop_back();
  }
  ServerUrl out;
  if (!scheme) {
    out.port = kDefaultServePort;  // a bare HOST is acco serve's
  }
  std::string port_text;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) {
      return bad();
    }
    out.host = rest.substr(1, close - 1);
    const std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return bad();
      }
      port_text = after.substr(1);
    }
  } else {
    const auto colon = rest.find(':');
    out.host = rest.substr(0, colon);
    if (colon != std::string::npos) {
      port_text = rest.substr(colon + 1);
    }
  }
  if (out.host.empty() || out.host.find_first_of("/?#@ ") != std::string::npos) {
    return bad();
  }
  if (!port_text.empty() || rest.find(':') != std::string::npos) {
    const auto port = units::parse_int(port_text);
    if (!port || *port < 1 || *port > 65535) {
      return bad();
    }
    out.port = static_cast<int>(*port);
  }
  return out;
}

namespace {

// httplib's own names are one word ("Connection"); what each means for a user.
std::string describe(httplib::Error error, std::chrono::milliseconds timeout) {
  switch (error) {
    case httplib::Error::Connection:
      return "connection failed (nothing listening there, or the host is unreachable)";
    case httplib::Error::ConnectionTimeout:
      return fmt::format("no connection within {} ms", timeout.count());
    case httplib::Error::Read:
      return fmt::format("no complete answer within {} ms (or the connection closed)",
                         timeout.count());
    case httplib::Error::Write:
      return "the request could not be sent (the connection closed)";
    case httplib::Error::BindIPAddress:
      return "could not bind the local address";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

Result<analyze::Snapshot> fetch_snapshot(const ServerUrl& url, std::chrono::milliseconds timeout) {
  httplib::Client client(url.host, url.port);
  const auto seconds = static_cast<time_t>(timeout.count() / 1000);
  const auto micros = static_cast<time_t>((timeout.count() % 1000) * 1000);
  client.set_connection_timeout(seconds, micros);
  client.set_read_timeout(seconds, micros);
  const std::string where = url.text() + "/api/v1/snapshot";
  const auto res = client.Get("/api/v1/snapshot");
  if (!res) {
    return fail(Errc::kUnavailable,
                fmt::format("cannot reach {}: {}", where, describe(res.error(), timeout)));
  }
  if (res->status != 200) {
    return fail(Errc::kUnavailable, fmt::format("{} answered HTTP {}", where, res->status));
  }
  const auto json = nlohmann::json::parse(res->body, nullptr, false);
  if (json.is_discarded()) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: the answer is not JSON", where));
  }
  auto snapshot = analyze::snapshot_from_json(json);
  if (!snapshot) {
    return tl::unexpected(std::move(snapshot).error().with_context(where));
  }
  return snapshot;
}

namespace {

struct JobCall {
  ServerUrl url;
  std::string token;
};

Result<JobCall> job_call(const JobClient& client) {
  JobCall call;
  const std::string dir = client.dir;
  std::string url = client.url;
  if (url.empty()) {
    const std::string daemon = dir + "/daemon.json";
    auto text = core::read_text_file(daemon);
    if (!text) {
      return fail(Errc::kUnavailable,
                  fmt::format("no job queue running: {} is missing (start acco serve --jobs, or "
                              "name one with --daemon URL)",
                              daemon));
    }
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object() || !j.contains("url") || !j["url"].is_string()) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: expected {{\"url\": \"http://HOST:PORT\", ...}}", daemon));
    }
    url = j["url"].get<std::string>();
  }
  ACCO_ASSIGN_OR_RETURN(call.url, parse_server_url(url), "--daemon");
  const std::string token_path = dir + "/token";
  auto token = core::read_text_file(token_path);
  if (!token) {
    return fail(Errc::kUnavailable,
                fmt::format("cannot read the job queue's token: {} (the queue answers the user "
                            "who runs it)",
                            token.error().message));
  }
  call.token = std::string(units::trim(*token));
  return call;
}

// The daemon's {"error": "..."} or the status.
Error daemon_error(const std::string& where, const httplib::Result& res) {
  const auto j = nlohmann::json::parse(res->body, nullptr, false);
  const std::string said = j.is_object() && j.contains("error") && j["error"].is_string()
                               ? j["error"].get<std::string>()
                               : fmt::format("{} answered HTTP {}", where, res->status);
  const Errc code = res->status == 404   ? Errc::kNotFound
                    : res->status == 400 ? Errc::kInvalidArgument
                                         : Errc::kUnavailable;
  return Error{code, said};
}

template <typename Send>
Result<std::string> job_request(const JobClient& client, const std::string& path, int expected,
                                Send send) {
  ACCO_ASSIGN_OR_RETURN(const auto call, job_call(client));
  httplib::Client http(call.url.host, call.url.port);
  const auto seconds = static_cast<time_t>(client.timeout.count() / 1000);
  const auto micros = static_cast<time_t>((client.timeout.count() % 1000) * 1000);
  http.set_connection_timeout(seconds, micros);
  http.set_read_timeout(seconds, micros);
  const httplib::Headers headers = {{"Authorization", "Bearer " + call.token}};
  const std::string where = call.url.text() + path;
  const auto res = send(http, headers);
  if (!res) {
    return fail(Errc::kUnavailable, fmt::format("cannot reach the job queue at {}: {}", where,
                                                describe(res.error(), client.timeout)));
  }
  if (res->status != expected) {
    return tl::unexpected(daemon_error(where, res));
  }
  return res->body;
}

Result<Job> job_from_body(const std::string& body) {
  return parse_job(nlohmann::json::parse(body, nullptr, false));
}

}  // namespace

Result<Job> JobClient::submit(const JobRequest& request) const {
  ACCO_ASSIGN_OR_RETURN(
      const auto body,
      job_request(*this, "/api/v1/jobs", 201, [&](httplib::Client& http, const auto& headers) {
        return http.Post("/api/v1/jobs", headers, request_json(request).dump(), "application/json");
      }));
  return job_from_body(body);
}

Result<std::vector<Job>> JobClient::jobs() const {
  ACCO_ASSIGN_OR_RETURN(
      const auto body,
      job_request(*this, "/api/v1/jobs", 200, [&](httplib::Client& http, const auto& headers) {
        return http.Get("/api/v1/jobs", headers);
      }));
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("jobs") || !j["jobs"].is_array()) {
    return fail(Errc::kInvalidArgument, "the job queue's answer: expected {\"jobs\": [...]}");
  }
  std::vector<Job> out;
  for (const auto& item : j["jobs"]) {
    ACCO_ASSIGN_OR_RETURN(auto job, parse_job(item));
    out.push_back(std::move(job));
  }
  return out;
}

Result<Job> JobClient::cancel(std::int64_t id) const {
  const std::string path = fmt::format("/api/v1/jobs/{}/cancel", id);
  ACCO_ASSIGN_OR_RETURN(const auto body,
                        job_request(*this, path, 200, [&](httplib::Client& http, const auto& h) {
                          return http.Post(path, h, "", "application/json");
                        }));
  return job_from_body(body);
}

Result<std::string> JobClient::logs(std::int64_t id) const {
  const std::string path = fmt::format("/api/v1/jobs/{}/logs", id);
  return job_request(*this, path, 200,
                     [&](httplib::Client& http, const auto& h) { return http.Get(path, h); });
}

}  // namespace acco::monitor
