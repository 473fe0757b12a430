// Reads a running `acco serve` over HTTP: the base URL checked once, then the daemon's latest
// snapshot fetched from /api/v1/snapshot. Used by `acco top --from`.
#pragma once

#include <chrono>
#include <string>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"

namespace acco::monitor {

struct ServerUrl {
  std::string host;  // "127.0.0.1", "node-1" or an IPv6 literal without brackets
  int port = 80;
  [[nodiscard]] std::string text() const;  // "http://127.0.0.1:9477"
};

// "http://HOST[:PORT][/]" (port 80 by default), or "HOST[:PORT]" as `acco serve --listen`
// takes it (port kDefaultServePort by default); an IPv6 host in brackets. kInvalidArgument
// otherwise (only http, no path).
inline constexpr int kDefaultServePort = 9477;

[[nodiscard]] Result<ServerUrl> parse_server_url(const std::string& url);

// GET URL/api/v1/snapshot within `timeout`. kUnavailable when the daemon cannot be reached or
// answers other than 200; kInvalidArgument (naming the field) when the body is not a snapshot.
// Blocking; safe to call from any thread.
[[nodiscard]] Result<analyze::Snapshot> fetch_snapshot(const ServerUrl& url,
                                                       std::chrono::milliseconds timeout);

}  // namespace acco::monitor
