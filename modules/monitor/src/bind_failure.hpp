// Why a listening address cannot be bound, in words: cpp-httplib only says that binding failed,
// so the server asks the kernel again with a socket of its own and names the cause.
#pragma once

#include <string>
#include <vector>

namespace acco::monitor::detail {

// The reason for errno `error` from bind(2) on `host` (a port in use, a privileged port, an
// address that is not this machine's), for "cannot listen on HOST:PORT: <reason>". Pure.
[[nodiscard]] std::string bind_failure_reason(int error, const std::string& host);

// What one address of the host did when asked again: socket(2)'s errno (0 when it opened) and
// bind(2)'s (0 when it bound).
struct BindAttempt {
  int socket_error = 0;
  int bind_error = 0;
};

// The errno that explains the failure: the first address's bind error, since the server takes
// the first address that binds; a family the kernel lacks (socket() fails, EAFNOSUPPORT on a host
// without IPv6) is passed over; 0 when an address binds now (a race, or not the address's
// fault). Only when no socket opened at all is socket()'s own error the reason. Pure.
[[nodiscard]] int bind_error_of(const std::vector<BindAttempt>& attempts);

// Binds `host`:`port` once (SO_REUSEADDR, as the server does) and closes it again; the reason
// it fails, or, when it binds now (the address was freed meanwhile), the general one.
[[nodiscard]] std::string diagnose_bind(const std::string& host, int port);

}  // namespace acco::monitor::detail
