// The daemon's HTTP front: each input is sent as it is over a fresh TCP connection to a running
// monitor::Server on 127.0.0.1 (two simulated devices, one sampled round), the writing side then
// shut, and the answer read to its end. It reaches the guarded stream (deadlines, header limits),
// cpp-httplib's request parsing, and every route's handling of paths and query strings
// (/api/v1/series's name, since and until; 404 and 405 answers; paths that are not UTF-8).
// Seeds: requests of each route and the hostile ones of ServeTest.
#include <chrono>
#include <memory>
#include <string>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "acco/monitor/sampler.hpp"
#include "acco/monitor/server.hpp"
#include "acco/power/simulated_device.hpp"

#include "fuzz_input.hpp"

namespace {

struct Daemon {
  std::unique_ptr<acco::monitor::Sampler> sampler;
  std::unique_ptr<acco::monitor::Server> server;
  int port = 0;

  Daemon() {
    std::vector<std::unique_ptr<acco::power::SensorSource>> sources;
    sources.push_back(std::make_unique<acco::power::SimulatedSource>(
        2, acco::power::SimulatedScenario::kCompute));
    sampler = std::make_unique<acco::monitor::Sampler>(std::move(sources), nullptr,
                                                       acco::monitor::SamplerOptions{});
    sampler->round();
    acco::monitor::ServerOptions options;
    options.port = 0;
    options.threads = 4;
    options.io_timeout = std::chrono::seconds(1);
    server = std::make_unique<acco::monitor::Server>(
        *sampler, options, [](std::int64_t) { return std::string("{\"event\":\"x\"}\n"); });
    server->set_findings([] { return std::string("{\"findings\":[]}"); });
    if (auto p = server->start()) {
      port = *p;
    }
  }
};

Daemon& daemon() {
  static Daemon d;
  return d;
}

void exchange(int port, std::string_view request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {  // NOLINT
    std::size_t done = 0;
    while (done < request.size()) {
      const auto n = ::send(fd, request.data() + done, request.size() - done, MSG_NOSIGNAL);
      if (n <= 0) {
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    char buffer[8192];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 5000) == 1 && ::recv(fd, buffer, sizeof buffer, 0) > 0) {
    }
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Daemon& d = daemon();
  if (d.port > 0) {
    exchange(d.port, acco::fuzz::text(data, size));
  }
  return 0;
}
