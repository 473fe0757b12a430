// The one-rank communicator's messages: plain ones and those with a payload (post_payload /
// take_payload), as the distributed runtime uses them. The MPI communicator's are driven by the
// integration tests under mpirun (tests/integration/schedule_distributed_test.cpp).
#include "acco/cluster/communicator.hpp"

#include <cstddef>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::cluster {
namespace {

using acco::testing::IsOk;
using ::testing::HasSubstr;

std::vector<std::byte> payload_bytes(std::size_t n, unsigned char first) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<std::byte>(first + i);
  }
  return v;
}

TEST(SelfMessages, APayloadArrivesAfterItsHeaderAndIsTakenIntoTheCallersMemory) {
  auto comm = self_communicator();
  const std::vector<std::byte> header{std::byte{7}, std::byte{8}};
  std::vector<std::byte> sent = payload_bytes(1000, 3);
  ASSERT_THAT(comm->post_payload(0, 3, header, sent), IsOk());
  // One rank copies when posting: the sender may change its memory at once.
  EXPECT_FALSE(comm->sending_payload(sent.data()));
  const std::vector<std::byte> expected = sent;
  sent.assign(sent.size(), std::byte{0});

  auto m = comm->poll();
  ASSERT_THAT(m, IsOk());
  ASSERT_TRUE(m->has_value());
  EXPECT_EQ((*m)->tag, 3);
  EXPECT_EQ((*m)->data, header);
  EXPECT_EQ((*m)->payload, 1000U);
  std::vector<std::byte> into(1000);
  ASSERT_THAT(comm->take_payload(**m, into), IsOk());
  EXPECT_EQ(into, expected);
  // Taken once.
  auto again = comm->take_payload(**m, into);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kInvalidArgument);
}

TEST(SelfMessages, APayloadNotTakenIsDroppedByTheNextPoll) {
  auto comm = self_communicator();
  ASSERT_THAT(comm->post_payload(0, 1, {std::byte{1}}, payload_bytes(64, 0)), IsOk());
  ASSERT_THAT(comm->post(0, 1, {std::byte{2}}), IsOk());
  auto first = comm->poll();
  ASSERT_THAT(first, IsOk());
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->payload, 64U);
  auto second = comm->poll();  // the first one's payload goes
  ASSERT_THAT(second, IsOk());
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->data, std::vector<std::byte>{std::byte{2}});
  EXPECT_EQ((*second)->payload, 0U);
  std::vector<std::byte> into(64);
  auto late = comm->take_payload(**first, into);
  ASSERT_FALSE(late);
  EXPECT_THAT(late.error().message, HasSubstr("not the last one polled"));
  auto none = comm->take_payload(**second, into);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, Errc::kInvalidArgument);
}

TEST(SelfMessages, APayloadOfAnotherSizeIsRefusedAndDropped) {
  auto comm = self_communicator();
  ASSERT_THAT(comm->post_payload(0, 1, {}, payload_bytes(64, 0)), IsOk());
  auto m = comm->poll();
  ASSERT_THAT(m, IsOk());
  ASSERT_TRUE(m->has_value());
  std::vector<std::byte> small(63);
  auto wrong = comm->take_payload(**m, small);
  ASSERT_FALSE(wrong);
  EXPECT_THAT(wrong.error().message, HasSubstr("64 bytes from rank 0 into 63 bytes"));
  std::vector<std::byte> right(64);
  EXPECT_FALSE(comm->take_payload(**m, right));  // dropped with the refusal
  auto next = comm->poll();
  ASSERT_THAT(next, IsOk());
  EXPECT_FALSE(next->has_value());
}

TEST(SelfMessages, BadPeersAndTagsAreRefusedWithOrWithoutAPayload) {
  auto comm = self_communicator();
  auto peer = comm->post_payload(1, 0, {}, payload_bytes(8, 0));
  ASSERT_FALSE(peer);
  EXPECT_THAT(peer.error().message, HasSubstr("peer 1 of 1 rank"));
  auto tag = comm->post_payload(0, 40000, {}, payload_bytes(8, 0));
  ASSERT_FALSE(tag);
  EXPECT_THAT(tag.error().message, HasSubstr("tag 40000 outside 0..32767"));
  auto m = comm->poll();
  ASSERT_THAT(m, IsOk());
  EXPECT_FALSE(m->has_value());
}

}  // namespace
}  // namespace acco::cluster
