// The one file that loads NCCL (nccl_api.hpp holds the declarations). Every step is collective:
// each rank reports its outcome, the first rank that failed is named to all, and no rank goes on
// to a step that needs the others when one of them has stopped.
#include "acco/cluster/nccl.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include <dlfcn.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/agreement.hpp"

#include "nccl_api.hpp"

namespace acco::cluster {
namespace {

// The loaded library and its entry points; closing it is left to process exit (RTLD_NODELETE):
// NCCL starts threads that must not outlive its code.
// A config in NCCL 2.14's layout whose `size` ends at `blocking`: the struct's tail padding is
// not handed to NCCL as a field (it would land on a later version's cgaClusterSize).
ncclConfig_t config_of(bool blocking) {
  return {offsetof(ncclConfig_t, blocking) + sizeof(int), kNcclConfigMagic, kNcclConfigVersion,
          blocking ? 1 : 0};
}

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
    optional("ncclCommInitRankConfig", lib.init_rank_config_);
    optional("ncclCommSplit", lib.split_);
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
  // The init can be watched when the library has a nonblocking init (NCCL 2.14) and the calls
  // that poll and abort it.
  [[nodiscard]] bool nonblocking_init() const {
    return init_rank_config_ != nullptr && async_error_ != nullptr && abort_ != nullptr;
  }

  struct Joined {
    ncclComm_t comm = nullptr;
    int count = 0;  // ncclCommCount
  };
  // The communicator and its size. Where nonblocking_init(), a nonblocking
  // ncclCommInitRankConfig polled until it completes and aborted when it has not after
  // `timeout_seconds` (NCCL's bootstrap waits for every rank for ever: one that cannot reach
  // rank 0, or stopped, leaves the others in it); ncclCommInitRank otherwise. Nothing is left
  // allocated when it fails.
  [[nodiscard]] Result<Joined> init_and_count(int ranks, const ncclUniqueId& id, int rank,
                                              double timeout_seconds) const {
    ncclComm_t comm = nullptr;
    Status joined;
    if (nonblocking_init()) {
      ncclConfig_t config = config_of(false);
      const ncclResult_t code = init_rank_config_(&comm, ranks, id, rank, &config);
      joined = code == ncclInProgress ? Status{} : check(code, "ncclCommInitRankConfig", comm);
      if (joined && comm != nullptr) {
        joined = wait_ready(comm, timeout_seconds, "ncclCommInitRankConfig",
                            "a rank did not join: every rank must reach rank 0's bootstrap "
                            "address (NCCL_SOCKET_IFNAME, acco probe --nccl-env)");
      }
    } else {
      joined = check(init_rank_(&comm, ranks, id, rank), "ncclCommInitRank", nullptr);
    }
    int count = 0;
    if (joined && comm != nullptr) {
      joined = check(count_(comm, &count), "ncclCommCount", comm);
    }
    if (!joined) {
      discard(comm);
      return tl::unexpected(std::move(joined.error()));
    }
    return Joined{comm, count};
  }
  void destroy(ncclComm_t comm) const { static_cast<void>(destroy_(comm)); }
  // A communicator whose call failed, or that its peers may not hold, is aborted (it may still
  // be working, or wait for them); nothing when null.
  void discard(ncclComm_t comm) const {
    if (comm != nullptr && !abort(comm)) {
      destroy(comm);
    }
  }

  // After a call answered ncclInProgress (a nonblocking communicator still working on it):
  // polls ncclCommGetAsyncError until ncclSuccess, as NCCL requires before the next call. Its
  // error, or kDeviceError after `timeout_seconds` (`why` says what keeps it); the caller
  // aborts the communicator then.
  [[nodiscard]] Status wait_ready(ncclComm_t comm, double timeout_seconds, const char* what,
                                  std::string_view why) const {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    // Yield for the first millisecond (an enqueue that answered ncclInProgress is usually done
    // in microseconds), then sleep, doubling up to 10 ms.
    constexpr auto kSpin = std::chrono::milliseconds(1);
    auto pause = std::chrono::microseconds(50);
    for (;;) {
      ncclResult_t state = ncclSuccess;
      ACCO_RETURN_IF_ERROR(check(async_error_(comm, &state), "ncclCommGetAsyncError", comm));
      if (state == ncclSuccess) {
        return {};
      }
      if (state != ncclInProgress) {
        return check(state, what, comm);
      }
      if (std::chrono::duration<double>(Clock::now() - start).count() > timeout_seconds) {
        return fail(Errc::kDeviceError,
                    fmt::format("{} not complete after {:g} s ({}): aborted by the watchdog "
                                "(--nccl-timeout)",
                                what, timeout_seconds, why));
      }
      if (Clock::now() - start < kSpin) {
        std::this_thread::yield();
        continue;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(10'000));
    }
  }

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
  // True when ncclCommAbort was called: the communicator is gone whatever it answered (2.28
  // answers its reclaim's error after taking the communicator), never to be destroyed after.
  [[nodiscard]] bool abort(ncclComm_t comm) const {
    if (abort_ == nullptr) {
      return false;
    }
    static_cast<void>(abort_(comm));
    return true;
  }

  // A blocking communicator of the same ranks (ncclCommSplit, NCCL 2.18), for the data plane:
  // on a nonblocking one NCCL runs every group end on a thread of its own and answers
  // ncclInProgress, a cost per collective that nccl-tests' blocking communicators do not pay.
  // Null when the library lacks the call.
  //
  // NCCL runs the split as a job of the parent, in the parent's mode: from a nonblocking parent
  // it answers ncclInProgress and both communicators are in progress until
  // ncclCommGetAsyncError answers ncclSuccess on them (a call before that answers
  // ncclInvalidArgument, "Attempt to use communicator before the previous operation returned
  // ncclSuccess": seen on an H200 with the driver's NCCL, issue 34). Both are polled, also
  // when the split failed, so the parent is usable again whatever became of its copy.
  [[nodiscard]] Result<ncclComm_t> blocking_copy(ncclComm_t comm, int rank,
                                                 double timeout_seconds) const {
    if (split_ == nullptr) {
      return nullptr;
    }
    ncclConfig_t config = config_of(true);
    ncclComm_t child = nullptr;
    const ncclResult_t code = split_(comm, 0, rank, &child, &config);
    Status made = code == ncclInProgress ? Status{} : check(code, "ncclCommSplit", comm);
    constexpr std::string_view kWhy = "the split waits for every rank";
    if (made && child != nullptr) {
      made = wait_ready(child, timeout_seconds, "ncclCommSplit", kWhy);
    }
    Status parent = wait_ready(comm, timeout_seconds, "ncclCommSplit (parent)", kWhy);
    if (made && !parent) {
      made = std::move(parent);
    }
    if (!made) {
      discard(child);
      return tl::unexpected(std::move(made.error()));
    }
    return child;
  }

  // One collective (layouts of Communicator::run) enqueued on `stream`. `pending` is set when a
  // call answered ncclInProgress (a nonblocking communicator): wait_ready before the next call.
  [[nodiscard]] Status enqueue(ncclComm_t comm, int rank, int ranks, Op op, const float* send,
                               float* recv, std::size_t count, cudaStream_t stream,
                               bool& pending) const {
    const auto queued = [&](ncclResult_t code, const char* what) {
      if (code == ncclInProgress) {
        pending = true;
        return Status{};
      }
      return check(code, what, comm);
    };
    if (const char* missing = missing_for(op); missing != nullptr) {
      return fail(Errc::kUnsupported,
                  fmt::format("{}: this NCCL lacks {} (NCCL 2.7 or later has every call acco "
                              "uses)",
                              to_string(op), missing));
    }
    switch (op) {
      case Op::kAllReduce:
        return queued(all_reduce_(send, recv, count, ncclFloat32, ncclSum, comm, stream),
                      "ncclAllReduce");
      case Op::kAllGather:
        return queued(all_gather_(send, recv, count, ncclFloat32, comm, stream), "ncclAllGather");
      case Op::kReduceScatter:
        return queued(reduce_scatter_(send, recv, count, ncclFloat32, ncclSum, comm, stream),
                      "ncclReduceScatter");
      case Op::kBroadcast:
        return queued(broadcast_(send, recv, count, ncclFloat32, 0, comm, stream), "ncclBroadcast");
      case Op::kAllToAll:
      case Op::kSendRecv:
        return group(comm, queued, [&]() -> Status {
          const auto n = static_cast<std::size_t>(ranks);
          if (op == Op::kSendRecv) {
            ACCO_RETURN_IF_ERROR(queued(
                send_(send, count, ncclFloat32, (rank + 1) % ranks, comm, stream), "ncclSend"));
            return queued(recv_(recv, count, ncclFloat32, (rank + ranks - 1) % ranks, comm, stream),
                          "ncclRecv");
          }
          for (std::size_t peer = 0; peer < n; ++peer) {
            ACCO_RETURN_IF_ERROR(queued(send_(send + peer * count, count, ncclFloat32,
                                              static_cast<int>(peer), comm, stream),
                                        "ncclSend"));
            ACCO_RETURN_IF_ERROR(queued(recv_(recv + peer * count, count, ncclFloat32,
                                              static_cast<int>(peer), comm, stream),
                                        "ncclRecv"));
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

  // ncclGroupStart, `body`, ncclGroupEnd (also when `body` failed, so the group is closed);
  // the group's end may answer ncclInProgress (`queued` takes it).
  template <typename Queued, typename Body>
  Status group(ncclComm_t comm, const Queued& queued, Body&& body) const {
    ACCO_RETURN_IF_ERROR(check(group_start_(), "ncclGroupStart", comm));
    const Status inside = std::forward<Body>(body)();
    Status ended = queued(group_end_(), "ncclGroupEnd");
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
  decltype(&ncclCommInitRankConfig) init_rank_config_ = nullptr;  // NCCL 2.14
  decltype(&ncclCommSplit) split_ = nullptr;                      // NCCL 2.18
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
  LoadedNcclCommunicator(NcclLibrary lib, ncclComm_t comm, int rank, int ranks,
                         double timeout_seconds)
      : lib_(lib), comm_(comm), rank_(rank), ranks_(ranks), timeout_seconds_(timeout_seconds) {}
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
    bool pending = false;
    Status queued = lib_.enqueue(comm_, rank_, ranks_, op, send, recv, count,
                                 static_cast<cudaStream_t>(stream), pending);
    if (!queued) {
      if (pending) {
        abort();  // a group whose end is still in progress after a call in it failed
      }
      return queued;
    }
    if (!pending) {
      return {};
    }
    Status ready =
        lib_.wait_ready(comm_, timeout_seconds_, to_string(op), "its enqueue waits for a peer");
    if (!ready) {
      abort();
    }
    return ready;
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
  double timeout_seconds_;
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

Result<NcclReport> probe_nccl(Communicator& comm, const std::string& library,
                              double timeout_seconds) {
  ACCO_ASSIGN_OR_RETURN(auto session, open_nccl(comm, library, timeout_seconds));
  return std::move(session.report);
}

Result<NcclSession> open_nccl(Communicator& comm, const std::string& library,
                              double timeout_seconds) {
  if (!(timeout_seconds > 0)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("NCCL timeout {} s: expected more than 0", timeout_seconds));
  }
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
  // NCCL refuses peers of another version at init, if its bootstrap gets that far (the two
  // may not speak the same protocol), and acco's config layout follows the version: stop here.
  const Status same = *version == code
                          ? Status{}
                          : fail(Errc::kUnsupported,
                                 fmt::format("NCCL {} here, {} on rank 0 (every rank must load the "
                                             "same NCCL version: --nccl-library)",
                                             nccl_version_text(*version), report.version));
  ACCO_ASSIGN_OR_RETURN(failure, first_failure(comm, same));
  if (failure) {
    report.error = std::move(*failure);
    return session;
  }

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
  // NCCL_COMM_BLOCKING=1 makes NCCL block the init whatever the config says: not watched then.
  const char* forced = std::getenv("NCCL_COMM_BLOCKING");
  report.nonblocking =
      lib->nonblocking_init() && !(forced != nullptr && std::string_view(forced) == "1");
  auto joined = lib->init_and_count(comm.size(), id, comm.rank(), timeout_seconds);
  std::unique_ptr<NcclCommunicator> nccl;
  Status mine = status_of(joined);
  if (joined) {
    nccl = std::make_unique<LoadedNcclCommunicator>(*lib, joined->comm, comm.rank(), comm.size(),
                                                    timeout_seconds);
    if (joined->count != comm.size()) {
      mine = fail(Errc::kDeviceError,
                  fmt::format("ncclCommCount: {} ranks, expected {}", joined->count, comm.size()));
    }
  }
  ACCO_ASSIGN_OR_RETURN(failure, first_failure(comm, mine));
  if (failure) {
    report.error = std::move(*failure);
    if (nccl) {
      nccl->abort();  // its peers may have aborted theirs: a destroy could wait for them
    }
    return session;  // a communicator only some ranks hold is no use
  }
  if (report.nonblocking) {
    // The data plane on a blocking copy where the library can make one; every rank keeps the
    // watched communicator unless every rank made its copy.
    auto copy = lib->blocking_copy(joined->comm, comm.rank(), timeout_seconds);
    ACCO_ASSIGN_OR_RETURN(auto copy_failed, first_failure(comm, status_of(copy)));
    if (!copy_failed && copy && *copy != nullptr) {
      nccl = std::make_unique<LoadedNcclCommunicator>(*lib, *copy, comm.rank(), comm.size(),
                                                      timeout_seconds);
      report.blocking_data_plane = true;
    } else if (copy) {
      lib->discard(*copy);  // made here, not on every rank
    }
  }
  report.stage = NcclStage::kBootstrapped;
  report.ranks = joined->count;
  session.comm = std::move(nccl);
  return session;
}

nlohmann::ordered_json to_json(const NcclReport& report) {
  nlohmann::ordered_json j;
  j["library"] = report.library;
  j["loaded"] = report.loaded;
  j["version"] = report.version;
  j["stage"] = to_string(report.stage);
  j["nonblocking"] = report.nonblocking;
  j["blocking_data_plane"] = report.blocking_data_plane;
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

}  // namespace acco::cluster
