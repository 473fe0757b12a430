#include "acco/transfer/profile.hpp"

#include <array>
#include <cstdint>
#include <variant>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/json.hpp"
#include "acco/core/json_reader.hpp"

namespace acco::transfer {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// One row per field: JSON name, member and accepted range. validate, to_json and
// profile_from_json all walk this table, so a new field is one line here.
struct SizeField {
  const char* name;
  std::size_t Profile::*member;
  std::uint64_t min;
  std::uint64_t max;
};
struct IntField {
  const char* name;
  int Profile::*member;
  int min;
  int max;
};
struct BoolField {
  const char* name;
  bool Profile::*member;
};
using Field = std::variant<SizeField, IntField, BoolField>;

// A staging buffer stays at or below 1 GiB (transfer.md idea 11: larger pinned buffers fail on
// some drivers and hold RLIMIT_MEMLOCK for little gain).
constexpr std::array<Field, 9> kFields = {
    Field{SizeField{"chunk_bytes", &Profile::chunk_bytes, 4096, kGiB}},
    Field{IntField{"slots", &Profile::slots, 1, 64}},
    Field{IntField{"queues", &Profile::queues, 1, 16}},
    Field{IntField{"host_copy_threads", &Profile::host_copy_threads, 0, 64}},
    Field{SizeField{"batch_below_bytes", &Profile::batch_below_bytes, 0, kGiB}},
    Field{SizeField{"split_above_bytes", &Profile::split_above_bytes, 0, std::uint64_t{1} << 50}},
    Field{SizeField{"zero_copy_below_bytes", &Profile::zero_copy_below_bytes, 0, kGiB}},
    Field{IntField{"register_after_uses", &Profile::register_after_uses, 0, 1'000'000}},
    Field{BoolField{"stage_pageable", &Profile::stage_pageable}},
};

const char* name_of(const Field& field) {
  return std::visit([](const auto& f) { return f.name; }, field);
}

// Profile messages show the whole value and word a range as validate() does.
constexpr core::JsonReaderOptions kProfileWording{.max_value_chars = 0,
                                                  .range = core::RangeWording::kMustBeBetween};

tl::unexpected<Error> out_of_range(const char* name, auto min, auto max, auto got) {
  return fail(Errc::kInvalidArgument,
              fmt::format("profile: {}: must be between {} and {}, got {}", name, min, max, got));
}

}  // namespace

Profile default_profile(const device::DeviceInfo& device) {
  Profile p;
  // The host backend's copy engines are threads that memcpy (dev/host_backend.hpp).
  p.stage_pageable = device.backend != "host";
  return p;
}

Status validate(const Profile& profile) {
  for (const Field& field : kFields) {
    if (const auto* f = std::get_if<SizeField>(&field)) {
      const std::uint64_t value = profile.*(f->member);
      if (value < f->min || value > f->max) {
        return out_of_range(f->name, f->min, f->max, value);
      }
    } else if (const auto* i = std::get_if<IntField>(&field)) {
      const int value = profile.*(i->member);
      if (value < i->min || value > i->max) {
        return out_of_range(i->name, i->min, i->max, value);
      }
    }
  }
  return {};
}

nlohmann::json to_json(const Profile& profile) {
  nlohmann::json j = {{"schema", kProfileSchema}};
  for (const Field& field : kFields) {
    std::visit([&](const auto& f) { j[f.name] = profile.*(f.member); }, field);
  }
  return j;
}

Result<Profile> profile_from_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("profile: expected a JSON object, got {}", j.type_name()));
  }
  Profile profile;
  core::JsonReader in(j, "", kProfileWording);
  for (const auto& [key, value] : j.items()) {
    if (key == "schema") {
      if (!value.is_string() || value.get<std::string>() != kProfileSchema) {
        return fail(Errc::kInvalidArgument, fmt::format("profile: schema: expected \"{}\", got {}",
                                                        kProfileSchema, value.dump()));
      }
      continue;
    }
    const Field* field = nullptr;
    for (const Field& candidate : kFields) {
      if (key == name_of(candidate)) {
        field = &candidate;
      }
    }
    if (field == nullptr) {
      return fail(Errc::kInvalidArgument, fmt::format("profile: unknown field '{}'", key));
    }
    if (const auto* f = std::get_if<SizeField>(field)) {
      profile.*(f->member) = static_cast<std::size_t>(
          in.integer(key, {static_cast<std::int64_t>(f->min), static_cast<std::int64_t>(f->max)}));
    } else if (const auto* b = std::get_if<BoolField>(field)) {
      profile.*(b->member) = in.boolean(key);
    } else {
      const auto& i = std::get<IntField>(*field);
      // An integer beyond int64 has always been shown as its int64 bit pattern ("got -1"); the
      // message is kept as it was.
      if (value.is_number_unsigned() && !core::JsonReader::int64_of(value)) {
        return out_of_range(i.name, i.min, i.max, value.get<std::int64_t>());
      }
      profile.*(i.member) = static_cast<int>(in.integer(key, {i.min, i.max}));
    }
    // Fields are checked in the document's order and the first problem is the answer.
    ACCO_RETURN_IF_ERROR(in.status(), "profile");
  }
  return profile;
}

Result<Profile> load_profile(const std::string& path) {
  ACCO_ASSIGN_OR_RETURN(const auto j, core::read_json_file(path));
  ACCO_ASSIGN_OR_RETURN(auto profile, profile_from_json(j), path);
  return profile;
}

Status save_profile(const std::string& path, const Profile& profile) {
  ACCO_RETURN_IF_ERROR(validate(profile), path);
  return core::write_file_atomic(path, to_json(profile).dump(2) + "\n");
}

}  // namespace acco::transfer
