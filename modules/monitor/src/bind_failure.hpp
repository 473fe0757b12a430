// Why a listening address cannot be bound, in words: cpp-httplib only says that binding failed,
// so the server asks the kernel again with a socket of its own and names the cause.
#pragma once

#include <string>

namespace acco::monitor::detail {

// The reason for errno `error` from bind(2) on `host` (a port in use, a privileged port, an
// address that is not this machine's), for "cannot listen on HOST:PORT: <reason>". Pure.
[[nodiscard]] std::string bind_failure_reason(int error, const std::string& host);

// Binds `host`:`port` once (SO_REUSEADDR, as the server does) and closes it again; the reason
// it fails, or, when it binds now (the address was freed meanwhile), the general one.
[[nodiscard]] std::string diagnose_bind(const std::string& host, int port);

}  // namespace acco::monitor::detail
