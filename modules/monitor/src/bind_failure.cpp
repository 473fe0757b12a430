#include "bind_failure.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace acco::monitor::detail {

std::string bind_failure_reason(int error, const std::string& host) {
  switch (error) {
    case EADDRINUSE:
      return "the port is in use (another acco serve? `ss -ltnp` names the process)";
    case EACCES:
      return "permission denied (ports below net.ipv4.ip_unprivileged_port_start, 1024 by "
             "default, need root or CAP_NET_BIND_SERVICE; pick a higher port)";
    case EADDRNOTAVAIL:
      return fmt::format(
          "{} is not an address of this machine (listen on one of its own, "
          "127.0.0.1, or 0.0.0.0 for all)",
          host);
    case 0:
      return "address in use, not local, or not permitted";
    default:
      return std::strerror(error);
  }
}

int bind_error_of(const std::vector<BindAttempt>& attempts) {
  int socket_error = 0;
  for (const BindAttempt& a : attempts) {
    if (a.socket_error != 0) {
      socket_error = socket_error != 0 ? socket_error : a.socket_error;
      continue;
    }
    return a.bind_error;  // the first address that opened decides: its error, or 0 (binds now)
  }
  return socket_error;
}

std::string diagnose_bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc =
          ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return fmt::format("{} does not resolve ({})", host, ::gai_strerror(rc));
  }
  std::vector<BindAttempt> attempts;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      attempts.push_back({.socket_error = errno});
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    const int bound = ::bind(fd, a->ai_addr, a->ai_addrlen);
    attempts.push_back({.bind_error = bound == 0 ? 0 : errno});
    ::close(fd);
    if (bound == 0) {
      break;
    }
  }
  ::freeaddrinfo(found);
  return bind_failure_reason(bind_error_of(attempts), host);
}

}  // namespace acco::monitor::detail
