// The one file that loads NCCL (nccl_api.hpp holds the declarations). Every step is collective:
// each rank reports its outcome, the first rank that failed is named to all, and no rank goes on
// to a step that needs the others when one of them has stopped.
#include "acco/dist/nccl.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

#include <dlfcn.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/dist/agreement.hpp"

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
    // The collectives are looked up only: an older NCCL still bootstraps (the probe), and the
    // call that needs a missing one says so.
    auto optional = [&](const char* name, auto& fn) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    };
    optional("ncclGetLastError", lib.last_error_);
    optional("ncclAllReduce", lib.all_reduce_);
    optional("ncclAllGather", lib.all_gather_);
    optional("ncclReduceScatter", lib.reduce_scatter_);
    optional("ncclBroadcast", lib.broadcast_);
    optional("ncclSend", lib.send_);
    optional("ncclRecv", lib.recv_);
    optional("ncclGroupStart", lib.group_start_);
    optional("ncclGroupEnd", lib.group_end_);
    optional("ncclCommGetAsyncError", lib.async_error_);
    optional("ncclCommAbort", lib.abort_);
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
  // ncclCommInitRank and ncclCommCount: the communicator and its size (destroyed when the count
  // fails).
  [[nodiscard]] Result<std::pair<ncclComm_t, int>> init_and_count(int ranks, const ncclUniqueId& id,
                                                                  int rank) const {
    ncclComm_t comm = nullptr;
    ACCO_RETURN_IF_ERROR(check(init_rank_(&comm, ranks, id, rank), "ncclCommInitRank", nullptr));
    int count = 0;
    if (auto counted = check(count_(comm, &count), "ncclCommCount", comm); !counted) {
      destroy(comm);
      return tl::unexpected(std::move(counted.error()));
    }
    return std::pair{comm, count};
  }
  void destroy(ncclComm_t comm) const { static_cast<void>(destroy_(comm)); }

  // True while ncclInProgress.
  [[nodiscard]] Result<bool> in_progress(ncclComm_t comm) const {
    if (async_error_ == nullptr) {
      return false;
    }
    ncclResult_t state = ncclSuccess;
    ACCO_RETURN_IF_ERROR(check(async_error_(comm, &state), "ncclCommGetAsyncError", comm));
    if (state == ncclSuccess || state == ncclInProgress) {
      return state == ncclInProgress;
    }
    ACCO_RETURN_IF_ERROR(check(state, "NCCL communicator (asynchronous error)", comm));
    return false;
  }
  // True when the communicator was aborted (it must not be destroyed after).
  [[nodiscard]] bool abort(ncclComm_t comm) const {
    return abort_ != nullptr && abort_(comm) == ncclSuccess;
  }

  // One collective (layouts of Communicator::run) enqueued on `stream`.
  [[nodiscard]] Status enqueue(ncclComm_t comm, int rank, int ranks, Op op, const float* send,
                               float* recv, std::size_t count, cudaStream_t stream) const {
    if (const char* missing = missing_for(op); missing != nullptr) {
      return fail(Errc::kUnsupported,
                  fmt::format("{}: this NCCL lacks {} (NCCL 2.7 or later has every call acco "
                              "uses)",
                              to_string(op), missing));
    }
    switch (op) {
      case Op::kAllReduce:
        return check(all_reduce_(send, recv, count, ncclFloat32, ncclSum, comm, stream),
                     "ncclAllReduce", comm);
      case Op::kAllGather:
        return check(all_gather_(send, recv, count, ncclFloat32, comm, stream), "ncclAllGather",
                     comm);
      case Op::kReduceScatter:
        return check(reduce_scatter_(send, recv, count, ncclFloat32, ncclSum, comm, stream),
                     "ncclReduceScatter", comm);
      case Op::kBroadcast:
        return check(broadcast_(send, recv, count, ncclFloat32, 0, comm, stream), "ncclBroadcast",
                     comm);
      case Op::kAllToAll:
      case Op::kSendRecv:
        return group(comm, [&]() -> Status {
          const auto n = static_cast<std::size_t>(ranks);
          if (op == Op::kSendRecv) {
            ACCO_RETURN_IF_ERROR(
                check(send_(send, count, ncclFloat32, (rank + 1) % ranks, comm, stream), "ncclSend",
                      comm));
            return check(recv_(recv, count, ncclFloat32, (rank + ranks - 1) % ranks, comm, stream),
                         "ncclRecv", comm);
          }
          for (std::size_t peer = 0; peer < n; ++peer) {
            ACCO_RETURN_IF_ERROR(check(send_(send + peer * count, count, ncclFloat32,
                                             static_cast<int>(peer), comm, stream),
                                       "ncclSend", comm));
            ACCO_RETURN_IF_ERROR(check(recv_(recv + peer * count, count, ncclFloat32,
                                             static_cast<int>(peer), comm, stream),
                                       "ncclRecv", comm));
          }
          return {};
        });
    }
    return fail(Errc::kInvalidArgument, "NCCL: unknown collective");
  }

 private:
  NcclLibrary() = default;

  // The first entry point `op` needs that the library lacks, or null.
  [[nodiscard]] const char* missing_for(Op op) const {
    switch (op) {
      case Op::kAllReduce:
        return all_reduce_ == nullptr ? "ncclAllReduce" : nullptr;
      case Op::kAllGather:
        return all_gather_ == nullptr ? "ncclAllGather" : nullptr;
      case Op::kReduceScatter:
        return reduce_scatter_ == nullptr ? "ncclReduceScatter" : nullptr;
      case Op::kBroadcast:
        return broadcast_ == nullptr ? "ncclBroadcast" : nullptr;
      case Op::kAllToAll:
      case Op::kSendRecv:
        return send_ == nullptr          ? "ncclSend"
               : recv_ == nullptr        ? "ncclRecv"
               : group_start_ == nullptr ? "ncclGroupStart"
               : group_end_ == nullptr   ? "ncclGroupEnd"
                                         : nullptr;
    }
    return nullptr;
  }

  // ncclGroupStart, `body`, ncclGroupEnd (also when `body` failed, so the group is closed).
  template <typename Body>
  Status group(ncclComm_t comm, Body&& body) const {
    ACCO_RETURN_IF_ERROR(check(group_start_(), "ncclGroupStart", comm));
    const Status inside = std::forward<Body>(body)();
    Status ended = check(group_end_(), "ncclGroupEnd", comm);
    ACCO_RETURN_IF_ERROR(inside);
    return ended;
  }

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
  decltype(&ncclGetLastError) last_error_ = nullptr;  // optional (NCCL 2.13), as the rest below
  decltype(&ncclAllReduce) all_reduce_ = nullptr;
  decltype(&ncclAllGather) all_gather_ = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter_ = nullptr;
  decltype(&ncclBroadcast) broadcast_ = nullptr;
  decltype(&ncclSend) send_ = nullptr;
  decltype(&ncclRecv) recv_ = nullptr;
  decltype(&ncclGroupStart) group_start_ = nullptr;
  decltype(&ncclGroupEnd) group_end_ = nullptr;
  decltype(&ncclCommGetAsyncError) async_error_ = nullptr;
  decltype(&ncclCommAbort) abort_ = nullptr;
};

class LoadedNcclCommunicator final : public NcclCommunicator {
 public:
  LoadedNcclCommunicator(NcclLibrary lib, ncclComm_t comm, int rank, int ranks)
      : lib_(lib), comm_(comm), rank_(rank), ranks_(ranks) {}
  ~LoadedNcclCommunicator() override {
    if (!aborted_) {
      lib_.destroy(comm_);
    }
  }
  LoadedNcclCommunicator(const LoadedNcclCommunicator&) = delete;
  LoadedNcclCommunicator& operator=(const LoadedNcclCommunicator&) = delete;

  [[nodiscard]] Status enqueue(Op op, const float* send, float* recv, std::size_t count,
                               void* stream) override {
    if (count > 0 && (send == nullptr || recv == nullptr)) {
      return fail(Errc::kInvalidArgument, "NCCL collective: null buffer");
    }
    if (aborted_) {
      return fail(Errc::kUnavailable, "NCCL communicator: aborted");
    }
    return lib_.enqueue(comm_, rank_, ranks_, op, send, recv, count,
                        static_cast<cudaStream_t>(stream));
  }
  [[nodiscard]] Result<bool> in_progress() override {
    return aborted_ ? Result<bool>(false) : lib_.in_progress(comm_);
  }
  void abort() override {
    if (!aborted_) {
      aborted_ = lib_.abort(comm_);
    }
  }

 private:
  NcclLibrary lib_;
  ncclComm_t comm_;
  int rank_;
  int ranks_;
  bool aborted_ = false;
};

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
  ACCO_ASSIGN_OR_RETURN(auto session, open_nccl(comm, library));
  return std::move(session.report);
}

Result<NcclSession> open_nccl(Communicator& comm, const std::string& library) {
  NcclSession session;
  NcclReport& report = session.report;
  report.library = library;

  auto lib = NcclLibrary::open(library);
  const Result<int> version =
      lib ? lib->version() : Result<int>(tl::unexpected<Error>(lib.error()));
  ACCO_ASSIGN_OR_RETURN(auto failure, first_failure(comm, status_of(version)));
  if (failure) {
    report.error = std::move(*failure);
    return session;
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
    return session;
  }
  ACCO_RETURN_IF_ERROR(comm.broadcast(std::as_writable_bytes(std::span(id.internal)), 0));

  report.stage = NcclStage::kInit;
  auto joined = lib->init_and_count(comm.size(), id, comm.rank());
  std::unique_ptr<NcclCommunicator> nccl;
  Status mine = status_of(joined);
  if (joined) {
    nccl = std::make_unique<LoadedNcclCommunicator>(*lib, joined->first, comm.rank(), comm.size());
    if (joined->second != comm.size()) {
      mine = fail(Errc::kDeviceError,
                  fmt::format("ncclCommCount: {} ranks, expected {}", joined->second, comm.size()));
    }
  }
  ACCO_ASSIGN_OR_RETURN(failure, first_failure(comm, mine));
  if (failure) {
    report.error = std::move(*failure);
    return session;  // `nccl` destroyed: a communicator only some ranks hold is no use
  }
  report.stage = NcclStage::kBootstrapped;
  report.ranks = joined->second;
  session.comm = std::move(nccl);
  return session;
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
