#include "acco/cluster/qdisc.hpp"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace acco::cluster {
namespace {

// Reads a T at `offset` of `bytes` (netlink payloads are only 4-byte aligned); nullopt past the
// end.
template <typename T>
std::optional<T> read_at(std::span<const std::byte> bytes, std::size_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) {
    return std::nullopt;
  }
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

constexpr std::size_t align4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

// Calls `each(type, payload)` for every attribute in `attrs`; stops at a malformed one.
template <typename F>
void for_each_attribute(std::span<const std::byte> attrs, F&& each) {
  std::size_t at = 0;
  while (const auto rta = read_at<rtattr>(attrs, at)) {
    if (rta->rta_len < sizeof(rtattr) || rta->rta_len > attrs.size() - at) {
      return;
    }
    each(rta->rta_type, attrs.subspan(at + sizeof(rtattr), rta->rta_len - sizeof(rtattr)));
    at += align4(rta->rta_len);
  }
}

// tbf's rate in bytes per second from its TCA_OPTIONS: TCA_TBF_RATE64 when present (rates of
// 4 GB/s and above), else the 32-bit rate of TCA_TBF_PARMS.
double tbf_rate(std::span<const std::byte> options) {
  double rate = 0;
  double rate64 = 0;
  for_each_attribute(options, [&](unsigned type, std::span<const std::byte> payload) {
    if (type == TCA_TBF_PARMS) {
      if (const auto q = read_at<tc_tbf_qopt>(payload, 0)) {
        rate = q->rate.rate;
      }
    } else if (type == TCA_TBF_RATE64) {
      if (const auto r = read_at<std::uint64_t>(payload, 0)) {
        rate64 = static_cast<double>(*r);
      }
    }
  });
  return rate64 > 0 ? rate64 : rate;
}

}  // namespace

std::vector<QdiscLimit> parse_qdisc_dump(std::span<const std::byte> messages,
                                         const std::function<std::string(int)>& name_of) {
  std::vector<QdiscLimit> out;
  std::size_t at = 0;
  while (const auto h = read_at<nlmsghdr>(messages, at)) {
    if (h->nlmsg_len < sizeof(nlmsghdr) || h->nlmsg_len > messages.size() - at) {
      break;
    }
    const auto body = messages.subspan(at + sizeof(nlmsghdr), h->nlmsg_len - sizeof(nlmsghdr));
    at += align4(h->nlmsg_len);
    if (h->nlmsg_type != RTM_NEWQDISC) {
      continue;
    }
    const auto tc = read_at<tcmsg>(body, 0);
    if (!tc || tc->tcm_parent != TC_H_ROOT) {
      continue;
    }
    std::string kind;
    double rate = 0;
    std::span<const std::byte> options;
    for_each_attribute(
        body.subspan(align4(sizeof(tcmsg)) <= body.size() ? align4(sizeof(tcmsg)) : body.size()),
        [&](unsigned type, std::span<const std::byte> payload) {
          if (type == TCA_KIND) {
            kind.assign(reinterpret_cast<const char*>(payload.data()),
                        strnlen(reinterpret_cast<const char*>(payload.data()), payload.size()));
          } else if (type == TCA_OPTIONS) {
            options = payload;
          }
        });
    if (kind == "tbf") {
      rate = tbf_rate(options);
    }
    if (rate > 0) {
      out.push_back({name_of(tc->tcm_ifindex), kind, rate});
    }
  }
  return out;
}

Result<std::vector<QdiscLimit>> root_qdisc_limits() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) {
    return fail(Errc::kUnavailable, fmt::format("rtnetlink socket: {}", std::strerror(errno)));
  }
  struct Closer {
    int fd;
    explicit Closer(int f) : fd(f) {}
    Closer(const Closer&) = delete;
    Closer& operator=(const Closer&) = delete;
    ~Closer() { ::close(fd); }
  } closer(fd);
  // A kernel that never answers must not hang the bench: two seconds per receive at most.
  const timeval timeout{2, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));

  struct Request {
    nlmsghdr header;
    tcmsg tc;
  } request{};
  request.header.nlmsg_len = sizeof(Request);
  request.header.nlmsg_type = RTM_GETQDISC;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = 1;
  request.tc.tcm_family = AF_UNSPEC;
  if (::send(fd, &request, sizeof(request), 0) != static_cast<ssize_t>(sizeof(request))) {
    return fail(Errc::kUnavailable, fmt::format("rtnetlink qdisc dump: {}", std::strerror(errno)));
  }
  std::vector<std::byte> all;
  std::array<std::byte, 32768> buffer{};
  for (;;) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail(Errc::kUnavailable,
                  fmt::format("rtnetlink qdisc dump: {}", std::strerror(errno)));
    }
    if (n == 0) {
      break;
    }
    const auto got = std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n));
    bool done = false;
    for (std::size_t at = 0; const auto h = read_at<nlmsghdr>(got, at);) {
      if (h->nlmsg_len < sizeof(nlmsghdr)) {
        break;
      }
      if (h->nlmsg_type == NLMSG_DONE) {
        done = true;
      } else if (h->nlmsg_type == NLMSG_ERROR) {
        const auto e = read_at<nlmsgerr>(got, at + sizeof(nlmsghdr));
        return fail(Errc::kUnavailable,
                    fmt::format("rtnetlink qdisc dump: {}",
                                std::strerror(e && e->error < 0 ? -e->error : EPROTO)));
      }
      at += align4(h->nlmsg_len);
    }
    all.insert(all.end(), got.begin(), got.end());
    if (done) {
      break;
    }
  }
  return parse_qdisc_dump(all, [](int index) {
    std::array<char, IF_NAMESIZE> name{};
    return ::if_indextoname(static_cast<unsigned>(index), name.data()) != nullptr
               ? std::string(name.data())
               : fmt::format("ifindex {}", index);
  });
}

}  // namespace acco::cluster
