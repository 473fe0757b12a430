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
  // The first address's failure: the server listens on the first address that binds, so that
  // is the one it tried first (a host with IPv4 and IPv6 addresses may fail differently on each).
  int error = 0;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = error != 0 ? error : errno;
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    const int bound = ::bind(fd, a->ai_addr, a->ai_addrlen);
    const int bind_error = errno;
    ::close(fd);
    if (bound == 0) {  // binds now: the failure was a race, or is not the address's
      error = 0;
      break;
    }
    error = error != 0 ? error : bind_error;
  }
  ::freeaddrinfo(found);
  return bind_failure_reason(error, host);
}

}  // namespace acco::monitor::detail
