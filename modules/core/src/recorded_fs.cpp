#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/fs.hpp"
#include "acco/core/json.hpp"
#include "acco/core/json_reader.hpp"

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

// Every record's fields are optional (an absent map is empty) and read through one JsonReader
// wording: "'files' /e.error: expected a string, got 5".
JsonReaderOptions record_wording() {
  JsonReaderOptions options;
  options.absent_means_null = true;
  return options;
}

Result<std::string> entry_name(const nlohmann::json& item, const std::string& path) {
  if (!item.is_string()) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: expected a string", path));
  }
  return item.get<std::string>();
}

Result<Answer> answer_from_json(const nlohmann::json& j, const std::string& path) {
  JsonReaderOptions options = record_wording();
  options.not_object = "expected an object with a boolean 'ok'";
  JsonReader in(j, path, options);
  Answer a;
  a.ok = in.boolean("ok");
  if (!in.ok()) {
    return in.finish(std::move(a));
  }
  if (!a.ok) {
    a.error = Errc::kNotFound;
    if (const auto code = in.optional_string("error")) {
      if (auto parsed = errc_from_string(*code)) {
        a.error = *parsed;
      } else {
        in.problem("error", parsed.error().message);
      }
    }
    a.error_message = in.optional_string("message").value_or("");
  } else if (in.optional_array("entries") != nullptr) {
    a.entries = in.optional_list<std::string>("entries", entry_name);
  } else if (const auto hex = in.optional_string("hex")) {
    if (auto bytes = from_hex(*hex)) {
      a.value = std::move(*bytes);
    } else {
      in.problem("hex", bytes.error().message);
    }
  } else {
    a.value = in.optional_string("value").value_or("");
  }
  return in.finish(std::move(a));
}

// The answers of one map ("files", "dirs", ...) into `out`; problems go to `in`.
void read_answers(JsonReader& in, const char* key, std::map<std::string, Answer>& out) {
  const nlohmann::json* m = in.optional_object(key);
  if (m == nullptr) {
    return;
  }
  for (const auto& [path, value] : m->items()) {
    auto a = answer_from_json(value, fmt::format("{} {}", in.path(key), path));
    if (!a) {
      in.add(std::move(a).error());
      return;
    }
    out.emplace(path, std::move(*a));
  }
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
  JsonReaderOptions options = record_wording();
  options.quote_keys = true;
  JsonReader in(j, "", options);
  FsRecord r;
  read_answers(in, "files", r.files);
  read_answers(in, "dirs", r.dirs);
  read_answers(in, "links", r.links);
  read_answers(in, "real_paths", r.real_paths);
  if (const nlohmann::json* exists = in.optional_object("exists")) {
    for (const auto& [path, value] : exists->items()) {
      if (!value.is_boolean()) {
        in.add(
            Error{Errc::kInvalidArgument, fmt::format("{} {}: expected true or false, got {}",
                                                      in.path("exists"), path, in.shown(value))});
        break;
      }
      r.exists[path] = value.get<bool>();
    }
  }
  ACCO_RETURN_IF_ERROR(in.status(), "file system record");
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
