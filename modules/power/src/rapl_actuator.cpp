// Sets a RAPL package's long-term limit through powercap's constraint_0_power_limit_uw. sysfs
// attributes are written in place with one write(2), as `echo N > file` does (O_TRUNC is a no-op
// on sysfs and keeps a sysroot's plain file exact): the kernel parses each write as a whole, and
// a temporary file renamed over an attribute is refused.
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "acco/core/sysfs_reader.hpp"
#include "acco/core/units.hpp"
#include "acco/power/rapl.hpp"

#include "rapl_zone.hpp"

namespace acco::power {
namespace {

constexpr double kMicrowattsPerWatt = 1e6;

// open(2) is variadic in POSIX; without O_CREAT it takes no mode. No O_CREAT: a missing
// attribute is ENOENT, never a new file.
int open_attribute(const std::string& path, int flags) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  return ::open(path.c_str(), flags | O_CLOEXEC);
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

class RaplActuator final : public Actuator {
 public:
  explicit RaplActuator(std::string root) : root_(std::move(root)) {}

  [[nodiscard]] std::string name() const override { return "rapl"; }

  Status set_power_limit(const std::string& uuid, double watts) override {
    const std::string where = fmt::format("rapl {}", uuid);
    const std::filesystem::path dir =
        std::filesystem::path(root_) / std::string(detail::kPowercapDir).substr(1) / uuid;
    const auto file = [&](const char* name) { return (dir / name).string(); };
    // The uuid is checked before it is joined to a path: "intel-rapl:0/../.." names no zone.
    const auto zone_name = detail::is_top_level_zone(uuid) ? read_line(file("name")) : std::nullopt;
    if (!zone_name || !detail::is_package_name(*zone_name)) {
      return fail(Errc::kNotFound,
                  fmt::format("{}: {}: no RAPL package zone", where, dir.string()));
    }
    if (const auto constraint = read_line(file("constraint_0_name"));
        constraint && *constraint != detail::kLongTermName) {
      return fail(Errc::kUnsupported,
                  fmt::format("{}: {}: constraint 0 is '{}', not the long-term limit", where,
                              file("constraint_0_name"), *constraint));
    }
    const auto max_text = read_line(file("constraint_0_max_power_uw"));
    const auto max_uw = max_text ? core::parse_u64(*max_text) : std::nullopt;
    if (!max_uw || *max_uw == 0) {
      return fail(Errc::kUnsupported, fmt::format("{}: {}: no maximum to bound the limit", where,
                                                  file("constraint_0_max_power_uw")));
    }
    const double max_watts = static_cast<double>(*max_uw) * detail::kMicro;
    const double floor = detail::floor_watts(max_watts);
    if (!(watts >= floor && watts <= max_watts)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: {}: power limit {} W is outside [{}, {}] W", where,
                              file("constraint_0_power_limit_uw"), watts, floor, max_watts));
    }
    const auto microwatts = static_cast<std::uint64_t>(std::llround(watts * kMicrowattsPerWatt));
    return write_attribute(where, file("constraint_0_power_limit_uw"),
                           std::to_string(microwatts) + "\n", file("enabled"));
  }

  Status lock_sm_clocks(const std::string& uuid, double /*min_hertz*/,
                        double /*max_hertz*/) override {
    return no_clocks(uuid);
  }

  Status unlock_sm_clocks(const std::string& uuid) override { return no_clocks(uuid); }

 private:
  static Status no_clocks(const std::string& uuid) {
    return fail(Errc::kUnsupported, fmt::format("rapl {}: RAPL zones have no SM clocks", uuid));
  }

  // The attribute's first line; nullopt when it cannot be opened or read.
  static std::optional<std::string> read_line(const std::string& path) {
    const int fd = open_attribute(path, O_RDONLY);
    if (fd < 0) {
      return std::nullopt;
    }
    constexpr std::size_t kAttributeBytes = 4096;  // a sysfs attribute is at most one page
    std::string text(kAttributeBytes, '\0');
    ssize_t n = -1;
    do {
      n = ::read(fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    if (n < 0) {
      return std::nullopt;
    }
    text.resize(static_cast<std::size_t>(n));
    return detail::first_line(text);
  }

  static Status write_attribute(const std::string& where, const std::string& path,
                                const std::string& value, const std::string& enabled_path) {
    int err = 0;
    const int fd = open_attribute(path, O_WRONLY | O_TRUNC);
    if (fd < 0) {
      err = errno;
    } else {
      ssize_t n = -1;
      do {
        n = ::write(fd, value.data(), value.size());
      } while (n < 0 && errno == EINTR);
      if (n < 0) {
        err = errno;
      } else if (static_cast<std::size_t>(n) != value.size()) {
        err = EIO;  // sysfs takes a write whole or not at all
      }
      if (::close(fd) != 0 && err == 0) {
        err = errno;
      }
    }
    if (err == 0) {
      return {};
    }
    if (err == ENOENT) {
      return fail(Errc::kUnsupported,
                  fmt::format("{}: {}: the zone has no long-term limit", where, path));
    }
    if (err == EACCES || err == EPERM || err == EROFS) {
      return fail(Errc::kUnavailable,
                  fmt::format("{}: {}: {} (not root, or the limit is locked by the firmware)",
                              where, path, errno_text(err)));
    }
    if (read_line(enabled_path) == std::optional<std::string>("0")) {
      return fail(Errc::kUnavailable, fmt::format("{}: {}: {} (the zone is disabled, enabled = 0)",
                                                  where, path, errno_text(err)));
    }
    return fail(Errc::kDeviceError, fmt::format("{}: {}: cannot write {}: {}", where, path,
                                                units::trim(value), errno_text(err)));
  }

  std::string root_;
};

}  // namespace

std::unique_ptr<Actuator> make_rapl_actuator(std::string root) {
  return std::make_unique<RaplActuator>(std::move(root));
}

}  // namespace acco::power
