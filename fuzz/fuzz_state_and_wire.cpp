// What acco reads back that it wrote itself, which a crash, another version or another rank may
// have cut short or changed: the governor's state file (power run, serve --governor), the config
// file (--config, ACCO_CONFIG), and the cluster's messages between ranks (node summaries, node
// links, collective op lists and plane settings, a rank's slow-down spec) and the netlink qdisc
// dump the link probe parses. Files are handed over as /proc/self/fd/N of a memfd, so the
// readers run their own open-and-parse path without touching a disk.
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include "acco/cluster/cluster.hpp"
#include "acco/cluster/collective.hpp"
#include "acco/cluster/collective_plane.hpp"
#include "acco/cluster/distributed_schedule.hpp"
#include "acco/cluster/expected_peak.hpp"
#include "acco/cluster/qdisc.hpp"
#include "acco/core/settings.hpp"
#include "acco/power/controller.hpp"

#include "fuzz_input.hpp"

namespace {

// The input as a file: a memfd's /proc path, closed when it goes.
class MemFile {
 public:
  explicit MemFile(std::string_view text) : fd_(::memfd_create("fuzz", 0)) {
    if (fd_ >= 0) {
      std::size_t done = 0;
      while (done < text.size()) {
        const auto n = ::write(fd_, text.data() + done, text.size() - done);
        if (n <= 0) {
          break;
        }
        done += static_cast<std::size_t>(n);
      }
    }
  }
  ~MemFile() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  [[nodiscard]] bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = acco::fuzz::text(data, size);
  const std::string owned(text);
  if (const MemFile file(text); file.ok()) {
    (void)acco::power::read_state_file(file.path());
    acco::core::Settings settings;
    settings.define("sysroot", "/", "a directory");
    settings.define("listen", "127.0.0.1:9477", "an address");
    settings.define("interval", "1s", "a duration");
    (void)settings.load_file(file.path());
  }
  (void)acco::cluster::decode_node_summary(owned);
  (void)acco::cluster::decode_node_link(owned);
  (void)acco::cluster::parse_ops(owned);
  (void)acco::cluster::parse_buffers(owned);
  (void)acco::cluster::parse_via(owned);
  acco::cluster::DistributedScheduleOptions options;
  (void)acco::cluster::parse_slow_rank(text, options);
  (void)acco::cluster::parse_qdisc_dump(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size),  // NOLINT
      [](int index) { return "eth" + std::to_string(index); });
  return 0;
}
