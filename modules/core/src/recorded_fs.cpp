#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/fs.hpp"
#include "acco/core/json.hpp"

namespace acco::core {
namespace {

using Answer = FsRecord::Answer;

template <typename T>
Answer answer_of(const Result<T>& r) {
  Answer a;
  a.ok = r.has_value();
  if (!r) {
    a.error = r.error().code;
    a.error_message = r.error().message;
  }
  return a;
}

Answer record_value(const Result<std::string>& r) {
  Answer a = answer_of(r);
  if (r) {
    a.value = *r;
  }
  return a;
}

Result<std::string> replay_value(const std::map<std::string, Answer>& m, const std::string& path,
                                 std::string_view what) {
  const auto it = m.find(path);
  if (it == m.end()) {
    return fail(Errc::kNotFound, fmt::format("{}: not in the snapshot ({})", path, what));
  }
  if (!it->second.ok) {
    return fail(it->second.error, it->second.error_message);
  }
  return it->second.value;
}

bool is_text(const std::string& s) {
  for (const unsigned char c : s) {
    if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c >= 0x7f) {
      return false;
    }
  }
  return true;
}

std::string to_hex(const std::string& s) {
  std::string out;
  out.reserve(s.size() * 2);
  for (const unsigned char c : s) {
    out += fmt::format("{:02x}", c);
  }
  return out;
}

Result<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) {
    return fail(Errc::kInvalidArgument, "odd number of hex digits");
  }
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    unsigned value = 0;
    for (std::size_t k = 0; k < 2; ++k) {
      const char c = hex[i + k];
      const int digit = (c >= '0' && c <= '9')   ? c - '0'
                        : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                 : -1;
      if (digit < 0) {
        return fail(Errc::kInvalidArgument, fmt::format("bad hex digit '{}'", c));
      }
      value = value * 16 + static_cast<unsigned>(digit);
    }
    out += static_cast<char>(value);
  }
  return out;
}

nlohmann::json answer_json(const Answer& a, bool listing) {
  nlohmann::json j;
  j["ok"] = a.ok;
  if (!a.ok) {
    j["error"] = std::string(to_string(a.error));
    j["message"] = a.error_message;
  } else if (listing) {
    j["entries"] = a.entries;
  } else if (is_text(a.value)) {
    j["value"] = a.value;
  } else {
    j["hex"] = to_hex(a.value);
  }
  return j;
}

Result<Answer> answer_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) {
    return fail(Errc::kInvalidArgument, "expected an object with a boolean 'ok'");
  }
  Answer a;
  a.ok = j["ok"].get<bool>();
  try {
    if (!a.ok) {
      ACCO_ASSIGN_OR_RETURN(a.error, errc_from_string(j.value("error", "not found")));
      a.error_message = j.value("message", "");
    } else if (j.contains("entries")) {
      a.entries = j["entries"].get<std::vector<std::string>>();
    } else if (j.contains("hex")) {
      ACCO_ASSIGN_OR_RETURN(a.value, from_hex(j["hex"].get<std::string>()));
    } else {
      a.value = j.value("value", "");
    }
  } catch (const nlohmann::json::exception& e) {
    // e.what() opens with "[json.exception.type_error.302] "; keep what follows, as parse_json
    // does.
    std::string message = e.what();
    if (const auto pos = message.find("] "); pos != std::string::npos) {
      message.erase(0, pos + 2);
    }
    return fail(Errc::kInvalidArgument, message);
  }
  return a;
}

Result<std::map<std::string, Answer>> map_from_json(const nlohmann::json& j, const char* key) {
  std::map<std::string, Answer> m;
  if (!j.contains(key)) {
    return m;
  }
  if (!j[key].is_object()) {
    return fail(Errc::kInvalidArgument, fmt::format("'{}': expected an object", key));
  }
  for (const auto& [path, value] : j[key].items()) {
    ACCO_ASSIGN_OR_RETURN(auto a, answer_from_json(value), fmt::format("'{}' {}", key, path));
    m.emplace(path, std::move(a));
  }
  return m;
}

}  // namespace

nlohmann::json to_json(const FsRecord& record) {
  nlohmann::json j = nlohmann::json::object();
  const auto put = [&](const char* key, const std::map<std::string, Answer>& m, bool listing) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [path, a] : m) {
      o[path] = answer_json(a, listing);
    }
    j[key] = std::move(o);
  };
  put("files", record.files, false);
  put("dirs", record.dirs, true);
  put("links", record.links, false);
  put("real_paths", record.real_paths, false);
  j["exists"] = record.exists;
  return j;
}

Result<FsRecord> fs_record_from_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    return fail(Errc::kInvalidArgument, "file system record: expected an object");
  }
  FsRecord r;
  for (const auto& [key, target] :
       {std::pair{"files", &r.files}, std::pair{"dirs", &r.dirs}, std::pair{"links", &r.links},
        std::pair{"real_paths", &r.real_paths}}) {
    ACCO_ASSIGN_OR_RETURN(*target, map_from_json(j, key), "file system record");
  }
  if (j.contains("exists")) {
    if (!j["exists"].is_object()) {
      return fail(Errc::kInvalidArgument, "file system record: 'exists': expected an object");
    }
    for (const auto& [path, value] : j["exists"].items()) {
      if (!value.is_boolean()) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("file system record: 'exists' {}: expected a boolean", path));
      }
      r.exists[path] = value.get<bool>();
    }
  }
  return r;
}

Result<std::string> RecordingFs::read_file(const std::string& path) const {
  auto r = inner_.read_file(path);
  const std::lock_guard lock(mutex_);
  record_.files[path] = record_value(r);
  return r;
}

Result<std::vector<std::string>> RecordingFs::list_dir(const std::string& path) const {
  auto r = inner_.list_dir(path);
  Answer a = answer_of(r);
  if (r) {
    a.entries = *r;
  }
  const std::lock_guard lock(mutex_);
  record_.dirs[path] = std::move(a);
  return r;
}

Result<std::string> RecordingFs::read_link(const std::string& path) const {
  auto r = inner_.read_link(path);
  const std::lock_guard lock(mutex_);
  record_.links[path] = record_value(r);
  return r;
}

Result<std::string> RecordingFs::real_path(const std::string& path) const {
  auto r = inner_.real_path(path);
  const std::lock_guard lock(mutex_);
  record_.real_paths[path] = record_value(r);
  return r;
}

bool RecordingFs::exists(const std::string& path) const {
  const bool e = inner_.exists(path);
  const std::lock_guard lock(mutex_);
  record_.exists[path] = e;
  return e;
}

FsRecord RecordingFs::record() const {
  const std::lock_guard lock(mutex_);
  return record_;
}

Result<std::string> ReplayFs::read_file(const std::string& path) const {
  return replay_value(record_.files, path, "file");
}

Result<std::vector<std::string>> ReplayFs::list_dir(const std::string& path) const {
  const auto it = record_.dirs.find(path);
  if (it == record_.dirs.end()) {
    return fail(Errc::kNotFound, fmt::format("{}: not in the snapshot (directory)", path));
  }
  if (!it->second.ok) {
    return fail(it->second.error, it->second.error_message);
  }
  return it->second.entries;
}

Result<std::string> ReplayFs::read_link(const std::string& path) const {
  return replay_value(record_.links, path, "link");
}

Result<std::string> ReplayFs::real_path(const std::string& path) const {
  return replay_value(record_.real_paths, path, "real path");
}

bool ReplayFs::exists(const std::string& path) const {
  const auto it = record_.exists.find(path);
  return it != record_.exists.end() && it->second;
}

}  // namespace acco::core
