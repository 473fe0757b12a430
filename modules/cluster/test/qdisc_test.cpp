#include "acco/cluster/qdisc.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "acco/cluster/expected_peak.hpp"

namespace acco::cluster {
namespace {

// Builds netlink messages the way the kernel lays them out: 4-byte aligned headers and
// attributes, nested options.
class Dump {
 public:
  // One RTM_NEWQDISC message for `ifindex` with `parent`, kind and options attributes.
  Dump& qdisc(int ifindex, std::uint32_t parent, const std::string& kind,
              const std::vector<std::byte>& options, std::uint16_t type = RTM_NEWQDISC) {
    std::vector<std::byte> body(NLMSG_ALIGN(sizeof(tcmsg)));
    tcmsg tc{};
    tc.tcm_ifindex = ifindex;
    tc.tcm_parent = parent;
    std::memcpy(body.data(), &tc, sizeof(tc));
    append_attribute(body, TCA_KIND, bytes_of(kind.c_str(), kind.size() + 1));
    append_attribute(body, TCA_OPTIONS, options);
    nlmsghdr h{};
    h.nlmsg_len = static_cast<std::uint32_t>(sizeof(nlmsghdr) + body.size());
    h.nlmsg_type = type;
    const auto header = bytes_of(&h, sizeof(h));
    data_.insert(data_.end(), header.begin(), header.end());
    data_.insert(data_.end(), body.begin(), body.end());
    data_.resize(NLMSG_ALIGN(data_.size()));
    return *this;
  }
  [[nodiscard]] const std::vector<std::byte>& bytes() const { return data_; }
  std::vector<std::byte>& mutable_bytes() { return data_; }

  static std::vector<std::byte> bytes_of(const void* p, std::size_t n) {
    std::vector<std::byte> out(n);
    std::memcpy(out.data(), p, n);
    return out;
  }
  static void append_attribute(std::vector<std::byte>& to, std::uint16_t type,
                               const std::vector<std::byte>& payload) {
    rtattr a{};
    a.rta_len = static_cast<std::uint16_t>(RTA_LENGTH(payload.size()));
    a.rta_type = type;
    const auto header = bytes_of(&a, sizeof(a));
    to.insert(to.end(), header.begin(), header.end());
    to.insert(to.end(), payload.begin(), payload.end());
    to.resize(RTA_ALIGN(to.size()));
  }
  // tbf's options: TCA_TBF_PARMS with a 32-bit rate, and TCA_TBF_RATE64 when given.
  static std::vector<std::byte> tbf(std::uint32_t rate, std::uint64_t rate64 = 0) {
    tc_tbf_qopt q{};
    q.rate.rate = rate;
    std::vector<std::byte> options;
    append_attribute(options, TCA_TBF_PARMS, bytes_of(&q, sizeof(q)));
    if (rate64 > 0) {
      append_attribute(options, TCA_TBF_RATE64, bytes_of(&rate64, sizeof(rate64)));
    }
    return options;
  }

 private:
  std::vector<std::byte> data_;
};

std::string name_of(int index) {
  return "if" + std::to_string(index);
}

TEST(QdiscDump, ARootTbfGivesItsRateInBytesPerSecond) {
  Dump d;
  d.qdisc(4, TC_H_ROOT, "tbf", Dump::tbf(12'500'000));  // tc ... tbf rate 100mbit
  const auto limits = parse_qdisc_dump(d.bytes(), name_of);
  ASSERT_EQ(limits.size(), 1U);
  EXPECT_EQ(limits[0], (QdiscLimit{"if4", "tbf", 12.5e6}));
}

TEST(QdiscDump, Rate64WinsForFastShaping) {
  Dump d;
  d.qdisc(2, TC_H_ROOT, "tbf", Dump::tbf(0xffffffff, 12'500'000'000ULL));  // 100gbit
  const auto limits = parse_qdisc_dump(d.bytes(), name_of);
  ASSERT_EQ(limits.size(), 1U);
  EXPECT_DOUBLE_EQ(limits[0].bytes_per_second, 12.5e9);
}

TEST(QdiscDump, OtherKindsChildQdiscsAndOtherMessagesAreSkipped) {
  Dump d;
  d.qdisc(1, TC_H_ROOT, "noqueue", {})
      .qdisc(2, TC_H_ROOT, "fq_codel", {})
      .qdisc(3, 0x00010001, "tbf", Dump::tbf(1'000'000))  // under a class, not the root
      .qdisc(5, TC_H_ROOT, "tbf", Dump::tbf(2'000'000), RTM_NEWLINK)
      .qdisc(6, TC_H_ROOT, "tbf", Dump::tbf(3'000'000));
  const auto limits = parse_qdisc_dump(d.bytes(), name_of);
  ASSERT_EQ(limits.size(), 1U);
  EXPECT_EQ(limits[0].interface, "if6");
}

TEST(QdiscDump, ATruncatedBufferKeepsTheWholeMessagesBeforeIt) {
  Dump d;
  d.qdisc(1, TC_H_ROOT, "tbf", Dump::tbf(1'000'000))
      .qdisc(2, TC_H_ROOT, "tbf", Dump::tbf(2'000'000));
  auto bytes = d.bytes();
  bytes.resize(bytes.size() - 6);
  const auto limits = parse_qdisc_dump(bytes, name_of);
  ASSERT_EQ(limits.size(), 1U);
  EXPECT_EQ(limits[0].interface, "if1");
  EXPECT_TRUE(parse_qdisc_dump({}, name_of).empty());
  const std::vector<std::byte> junk(7, std::byte{0xff});
  EXPECT_TRUE(parse_qdisc_dump(junk, name_of).empty());
}

TEST(QdiscLive, ThisNamespaceAnswersOrSaysWhy) {
  // Loopback and the CI machine's interfaces carry no tbf, so the list is usually empty; what is
  // checked is that the dump completes (or fails with a reason) and names what it finds.
  const auto limits = root_qdisc_limits();
  if (!limits) {
    EXPECT_FALSE(limits.error().message.empty());
    return;
  }
  for (const auto& l : *limits) {
    EXPECT_FALSE(l.interface.empty());
    EXPECT_EQ(l.kind, "tbf");
    EXPECT_GT(l.bytes_per_second, 0);
  }
}

TEST(FastestLink, AShapedInterfaceCarriesItsShapingAndSaysSo) {
  topo::Machine m;
  m.hostname = "node4";
  m.net_interfaces = {{"eth0", "", 10000, "up"}, {"eth1", "", std::nullopt, "up"}};
  const std::vector<QdiscLimit> limits = {{"eth0", "tbf", 12.5e6}};
  const NodeLink shaped = fastest_link(m, limits);
  EXPECT_EQ(shaped.port, "eth0 (tbf)");
  EXPECT_DOUBLE_EQ(shaped.bytes_per_second, 12.5e6);
  // A limit above the line rate changes nothing; an unknown speed takes the limit.
  EXPECT_EQ(fastest_link(m, std::vector<QdiscLimit>{{"eth0", "tbf", 5e9}}).port, "eth0");
  const NodeLink unknown = fastest_link(m, std::vector<QdiscLimit>{{"eth1", "tbf", 5e9}});
  EXPECT_EQ(unknown.port, "eth1 (tbf)");
  EXPECT_DOUBLE_EQ(unknown.bytes_per_second, 5e9);
}

}  // namespace
}  // namespace acco::cluster
