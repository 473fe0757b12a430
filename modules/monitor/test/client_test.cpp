#include "acco/monitor/client.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::monitor {
namespace {

TEST(ClientTest, UrlsWithHostAndPortParse) {
  const auto url = parse_server_url("http://127.0.0.1:9477/");
  ASSERT_TRUE(url) << url.error().message;
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 9477);
  EXPECT_EQ(url->text(), "http://127.0.0.1:9477");
  const auto v6 = parse_server_url("http://[::1]:80");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->text(), "http://[::1]:80");
  EXPECT_EQ(parse_server_url("http://node-1")->port, 80);
  // As acco serve --listen takes it: HOST:PORT, or HOST on serve's port.
  const auto bare = parse_server_url("127.0.0.1:9000");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_EQ(bare->text(), "http://127.0.0.1:9000");
  EXPECT_EQ(parse_server_url("node-1")->port, kDefaultServePort);
  EXPECT_EQ(parse_server_url("[::1]:9477")->host, "::1");
}

TEST(ClientTest, MalformedUrlsAreInvalidArguments) {
  for (const char* bad : {"", ":9477", "https://node:1", "node:", "node:0", "http://",
                          "http://node:", "http://node:0", "http://node:70000", "http://node:1/api",
                          "http://[::1", "http://node:port"}) {
    const auto url = parse_server_url(bad);
    ASSERT_FALSE(url) << bad;
    EXPECT_EQ(url.error().code, Errc::kInvalidArgument) << bad;
    EXPECT_THAT(url.error().message, ::testing::HasSubstr("expected HOST:PORT or http://HOST:PORT"))
        << bad;
  }
}

TEST(ClientTest, UnreachableDaemonIsUnavailableNamingTheUrl) {
  // Port 1 (tcpmux) is not served on a test machine.
  const auto snapshot =
      fetch_snapshot({.host = "127.0.0.1", .port = 1}, std::chrono::milliseconds(500));
  ASSERT_FALSE(snapshot);
  EXPECT_EQ(snapshot.error().code, Errc::kUnavailable);
  EXPECT_THAT(snapshot.error().message,
              ::testing::HasSubstr("cannot reach http://127.0.0.1:1/api/v1/snapshot: connection "
                                   "failed (nothing listening there"));
}

}  // namespace
}  // namespace acco::monitor
