#include "acco/monitor/client.hpp"

#include <string_view>

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "acco/analyze/json.hpp"
#include "acco/core/units.hpp"

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

}  // namespace acco::monitor
