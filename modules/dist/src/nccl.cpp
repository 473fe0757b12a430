// The one file that loads NCCL (nccl_api.hpp holds the declarations). Every step is collective:
// each rank reports its outcome, the first rank that failed is named to all, and no rank goes on
// to a step that needs the others when one of them has stopped.
#include "acco/dist/nccl.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

#include <dlfcn.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "nccl_api.hpp"

namespace acco::dist {
namespace {

// The loaded library and its entry points; closing it is left to process exit (RTLD_NODELETE):
// NCCL starts threads that must not outlive its code.
class NcclLibrary {
 public:
  static Result<NcclLibrary> open(const std::string& library) {
    if (library.empty()) {
      return fail(Errc::kInvalidArgument, "no NCCL library named");
    }
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const char* why = dlerror();
      return fail(Errc::kUnavailable, why != nullptr ? why : library + ": dlopen failed");
    }
    NcclLibrary lib;
    std::string missing;
    auto need = [&](const char* name, auto& fn) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
      if (fn == nullptr && missing.empty()) {
        missing = name;
      }
    };
    need("ncclGetVersion", lib.get_version_);
    need("ncclGetUniqueId", lib.get_unique_id_);
    need("ncclCommInitRank", lib.init_rank_);
    need("ncclCommCount", lib.count_);
    need("ncclCommDestroy", lib.destroy_);
    need("ncclGetErrorString", lib.error_string_);
    lib.last_error_ =
        reinterpret_cast<decltype(&ncclGetLastError)>(dlsym(handle, "ncclGetLastError"));
    if (!missing.empty()) {
      return fail(Errc::kUnavailable, fmt::format("{}: missing symbol {}", library, missing));
    }
    return lib;
  }

  [[nodiscard]] Result<int> version() const {
    int code = 0;
    ACCO_RETURN_IF_ERROR(check(get_version_(&code), "ncclGetVersion", nullptr));
    return code;
  }
  [[nodiscard]] Result<ncclUniqueId> unique_id() const {
    ncclUniqueId id{};
    ACCO_RETURN_IF_ERROR(check(get_unique_id_(&id), "ncclGetUniqueId", nullptr));
    return id;
  }
  // ncclCommInitRank, its size checked against `ranks`, then destroyed.
  [[nodiscard]] Result<int> init_and_count(int ranks, const ncclUniqueId& id, int rank) const {
    ncclComm_t comm = nullptr;
    ACCO_RETURN_IF_ERROR(check(init_rank_(&comm, ranks, id, rank), "ncclCommInitRank", nullptr));
    int count = 0;
    const auto counted = check(count_(comm, &count), "ncclCommCount", comm);
    const auto destroyed = check(destroy_(comm), "ncclCommDestroy", nullptr);
    ACCO_RETURN_IF_ERROR(counted);
    ACCO_RETURN_IF_ERROR(destroyed);
    return count;
  }

 private:
  NcclLibrary() = default;

  [[nodiscard]] Status check(ncclResult_t code, const char* what, ncclComm_t comm) const {
    if (code == ncclSuccess) {
      return {};
    }
    std::string message =
        fmt::format("{}: {} (NCCL error {})", what, error_string_(code), static_cast<int>(code));
    const char* detail = last_error_ != nullptr ? last_error_(comm) : nullptr;
    if (detail != nullptr && *detail != '\0') {
      message += fmt::format(": {}", detail);
    }
    return fail(Errc::kDeviceError, message);
  }

  decltype(&ncclGetVersion) get_version_ = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id_ = nullptr;
  decltype(&ncclCommInitRank) init_rank_ = nullptr;
  decltype(&ncclCommCount) count_ = nullptr;
  decltype(&ncclCommDestroy) destroy_ = nullptr;
  decltype(&ncclGetErrorString) error_string_ = nullptr;
  decltype(&ncclGetLastError) last_error_ = nullptr;  // optional (NCCL 2.13)
};

template <typename T>
Status status_of(const Result<T>& result) {
  if (result) {
    return {};
  }
  return tl::unexpected<Error>(result.error());
}

// `root`'s text on every rank: its length, then its bytes.
Result<std::string> broadcast_text(Communicator& comm, std::string text, int root) {
  std::uint64_t length = text.size();
  ACCO_RETURN_IF_ERROR(
      comm.broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&length, 1)), root));
  text.resize(length);
  ACCO_RETURN_IF_ERROR(comm.broadcast(std::as_writable_bytes(std::span<char>(text)), root));
  return text;
}

// Every rank's outcome of one step; the first rank that failed and its message, on every rank.
Result<std::optional<std::string>> first_failure(Communicator& comm, const Status& mine) {
  ACCO_ASSIGN_OR_RETURN(const auto failed, comm.allgather(mine ? 0.0 : 1.0));
  for (int r = 0; r < comm.size(); ++r) {
    if (failed[static_cast<std::size_t>(r)] != 0.0) {
      ACCO_ASSIGN_OR_RETURN(const auto text,
                            broadcast_text(comm, mine ? std::string() : mine.error().message, r));
      return std::optional<std::string>(fmt::format("rank {}: {}", r, text));
    }
  }
  return std::optional<std::string>();
}

}  // namespace

const char* to_string(NcclStage stage) {
  switch (stage) {
    case NcclStage::kLoad:
      return "load";
    case NcclStage::kUniqueId:
      return "unique id";
    case NcclStage::kInit:
      return "init";
    case NcclStage::kBootstrapped:
      return "bootstrapped";
  }
  return "load";
}

std::string nccl_version_text(int code) {
  if (code <= 0) {
    return fmt::format("unknown ({})", code);
  }
  if (code >= 10000) {
    return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  }
  return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
}

Result<NcclReport> probe_nccl(Communicator& comm, const std::string& library) {
  NcclReport report;
  report.library = library;

  auto lib = NcclLibrary::open(library);
  const Result<int> version =
      lib ? lib->version() : Result<int>(tl::unexpected<Error>(lib.error()));
  ACCO_ASSIGN_OR_RETURN(auto failure, first_failure(comm, status_of(version)));
  if (failure) {
    report.error = std::move(*failure);
    return report;
  }
  report.loaded = true;
  int code = *version;
  ACCO_RETURN_IF_ERROR(comm.broadcast(std::as_writable_bytes(std::span<int>(&code, 1)), 0));
  report.version = nccl_version_text(code);

  report.stage = NcclStage::kUniqueId;
  ncclUniqueId id{};
  Status made;
  if (comm.rank() == 0) {
    auto got = lib->unique_id();
    made = status_of(got);
    if (got) {
      id = *got;
    }
  }
  ACCO_ASSIGN_OR_RETURN(failure, first_failure(comm, made));
  if (failure) {
    report.error = std::move(*failure);
    return report;
  }
  ACCO_RETURN_IF_ERROR(comm.broadcast(std::as_writable_bytes(std::span(id.internal)), 0));

  report.stage = NcclStage::kInit;
  auto count = lib->init_and_count(comm.size(), id, comm.rank());
  Status joined = status_of(count);
  if (count && *count != comm.size()) {
    joined = fail(Errc::kDeviceError,
                  fmt::format("ncclCommCount: {} ranks, expected {}", *count, comm.size()));
  }
  ACCO_ASSIGN_OR_RETURN(failure, first_failure(comm, joined));
  if (failure) {
    report.error = std::move(*failure);
    return report;
  }
  report.stage = NcclStage::kBootstrapped;
  report.ranks = *count;
  return report;
}

nlohmann::ordered_json to_json(const NcclReport& report) {
  nlohmann::ordered_json j;
  j["library"] = report.library;
  j["loaded"] = report.loaded;
  j["version"] = report.version;
  j["stage"] = to_string(report.stage);
  j["bootstrapped"] = report.bootstrapped();
  j["ranks"] = report.ranks;
  j["error"] = report.error;
  return j;
}

std::string to_text(const NcclReport& report) {
  if (report.bootstrapped()) {
    return fmt::format("NCCL {} ({}): bootstrapped over {} rank{}", report.version, report.library,
                       report.ranks, report.ranks == 1 ? "" : "s");
  }
  const std::string version = report.version.empty() ? "" : " " + report.version;
  return fmt::format("NCCL{} ({}) not used: stopped at {}: {}", version, report.library,
                     to_string(report.stage), report.error);
}

}  // namespace acco::dist
