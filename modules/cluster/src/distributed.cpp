#include "acco/cluster/distributed.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/sched/workload_run.hpp"

namespace acco::cluster {
namespace {

constexpr int kTagControl = 1;  // coordinator -> worker
constexpr int kTagReport = 2;   // worker -> coordinator
constexpr int kTagData = 3;     // worker -> worker

enum class Kind : std::uint64_t {
  kAssign = 1,
  kSend = 2,
  kInit = 3,
  kFinish = 4,
  kDone = 5,
  kFailed = 6,
  kAlive = 7,
  kCancel = 8,
  kCancelled = 9,
  kAbort = 10,  // worker -> coordinator: this rank stopped on an error (the text)
};

// Messages are 64-bit words (and text at the end, for errors).
class Encoder {
 public:
  Encoder& word(std::uint64_t w) {
    const auto* p = reinterpret_cast<const std::byte*>(&w);
    bytes_.insert(bytes_.end(), p, p + sizeof w);
    return *this;
  }
  Encoder& real(double d) { return word(std::bit_cast<std::uint64_t>(d)); }
  Encoder& text(const std::string& s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    bytes_.insert(bytes_.end(), p, p + s.size());
    return *this;
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

class Decoder {
 public:
  explicit Decoder(const std::vector<std::byte>& bytes) : bytes_(bytes) {}
  // nullopt past the end: a malformed message.
  std::optional<std::uint64_t> word() {
    if (at_ + sizeof(std::uint64_t) > bytes_.size()) {
      return std::nullopt;
    }
    std::uint64_t w = 0;
    std::memcpy(&w, bytes_.data() + at_, sizeof w);
    at_ += sizeof w;
    return w;
  }
  std::optional<double> real() {
    auto w = word();
    return w ? std::optional<double>(std::bit_cast<double>(*w)) : std::nullopt;
  }
  std::string rest_text() const {
    return {reinterpret_cast<const char*>(bytes_.data() + at_), bytes_.size() - at_};
  }
  std::size_t offset() const { return at_; }

 private:
  const std::vector<std::byte>& bytes_;
  std::size_t at_ = 0;
};

Status malformed(const Message& m) {
  return fail(Errc::kInternal, fmt::format("distributed: malformed message (tag {}, {} bytes) "
                                           "from rank {}",
                                           m.tag, m.data.size(), m.source));
}

// Finish, with `error` (empty: success), to `rank`.
Status post_finish(Communicator& comm, int rank, const std::string& error) {
  Encoder e;
  e.word(static_cast<std::uint64_t>(Kind::kFinish)).text(error);
  return comm.post(rank, kTagControl, e.take());
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// This rank's devices' costs only: the local runtime numbers its devices from 0.
sched::Workload local_view(const sched::Workload& workload, std::size_t offset, std::size_t n,
                           double slowdown) {
  sched::Workload local = workload;
  for (sched::WorkTask& t : local.tasks) {
    t.seconds = std::vector<double>(t.seconds.begin() + static_cast<std::ptrdiff_t>(offset),
                                    t.seconds.begin() + static_cast<std::ptrdiff_t>(offset + n));
    for (double& s : t.seconds) {
      s *= slowdown;
    }
  }
  return local;
}

// This rank's host copy of every datum (pinned), for all runs. A copy is sent to other ranks
// from where it lies (Communicator::post_payload, no copy), so a new version that lands while
// the old one is still being sent goes to a fresh buffer, and the old one is kept until it has
// gone.
class HostData {
 public:
  HostData(Communicator& comm, device::Device& device) : comm_(comm), device_(device) {}
  HostData(const HostData&) = delete;
  HostData& operator=(const HostData&) = delete;
  // Buffers still being sent when the run ends (to a worker that stopped receiving; a second
  // to let the library see the others complete) are left allocated: it may still read them.
  ~HostData() {
    const auto sending = [this](const auto& b) { return b && comm_.sending_payload(b->data()); };
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < until &&
           (std::any_of(current_.begin(), current_.end(), sending) ||
            std::any_of(retired_.begin(), retired_.end(), sending))) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    keep_if_sending(current_);
    keep_if_sending(retired_);
  }

  // Zeroed by each run's Worker::start.
  Status allocate(const std::vector<std::size_t>& bytes) {
    for (std::size_t n : bytes) {
      ACCO_ASSIGN_OR_RETURN(auto buffer, make(n));
      current_.push_back(std::move(buffer));
    }
    return {};
  }
  [[nodiscard]] std::size_t size() const { return current_.size(); }
  [[nodiscard]] std::byte* data(std::size_t datum) const {
    return static_cast<std::byte*>(current_[datum]->data());
  }
  // The datum's memory for a new version: a fresh buffer when the old one is still being sent.
  Result<std::span<std::byte>> writable(std::size_t datum) {
    std::erase_if(retired_, [this](const auto& b) { return !comm_.sending_payload(b->data()); });
    const std::size_t n = current_[datum]->size();
    if (comm_.sending_payload(current_[datum]->data())) {
      ACCO_ASSIGN_OR_RETURN(auto fresh, make(n));
      retired_.push_back(std::exchange(current_[datum], std::move(fresh)));
    }
    return std::span<std::byte>(data(datum), n);
  }

 private:
  Result<std::unique_ptr<device::Buffer>> make(std::size_t bytes) {
    return device_.allocate_host(bytes, device::MemoryKind::kPinned).map_error([](Error e) {
      return std::move(e).with_context("workload data");
    });
  }
  // Never freed, not even at exit (the device that made them may be gone by then); reachable
  // from a static, so LeakSanitizer does not count them.
  void keep_if_sending(std::vector<std::unique_ptr<device::Buffer>>& buffers) {
    struct Kept {
      std::mutex mutex;  // ranks may be threads of one process (the tests)
      std::vector<std::unique_ptr<device::Buffer>> buffers;
    };
    // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): one list per process
    static auto* kept = new Kept;
    for (auto& b : buffers) {
      if (b && comm_.sending_payload(b->data())) {
        const std::lock_guard lock(kept->mutex);
        kept->buffers.push_back(std::move(b));
      }
    }
  }

  Communicator& comm_;
  device::Device& device_;
  std::vector<std::unique_ptr<device::Buffer>> current_;
  std::vector<std::unique_ptr<device::Buffer>> retired_;  // replaced while being sent
};

// One rank's worker: the data in host memory registered with the local runtime, the tasks it
// was given, what it waits for.
class Worker {
 public:
  Worker(Communicator& comm, sched::Runtime& runtime, const sched::EmulatedTasks& tasks,
         HostData& memory, const sched::Workload& workload, std::uint64_t run)
      : comm_(comm),
        runtime_(runtime),
        tasks_(tasks),
        memory_(memory),
        workload_(workload),
        run_(run) {}

  // Every datum at version 0, the initial value (zeros), as in the run before.
  Status start() {
    for (std::size_t d = 0; d < memory_.size(); ++d) {
      ACCO_ASSIGN_OR_RETURN(const std::span<std::byte> host, memory_.writable(d));
      std::memset(host.data(), 0, host.size());
      ACCO_ASSIGN_OR_RETURN(auto h, runtime_.register_data(host.data(), workload_.data_bytes[d]));
      handles_.push_back(h);
    }
    return {};
  }

  // Waits for the local tasks and lets go of the data.
  void stop() {
    (void)runtime_.wait_all();
    for (sched::DataHandle h : handles_) {
      (void)runtime_.unregister(h);
    }
    handles_.clear();
  }

  Status on_control(const Message& m, bool& finish, std::string& finish_error) {
    Decoder in(m.data);
    const auto kind = in.word();
    if (!kind) {
      return malformed(m);
    }
    switch (static_cast<Kind>(*kind)) {
      case Kind::kAssign:
        return on_assign(m, in);
      case Kind::kSend:
        return on_send(m, in);
      case Kind::kInit:
        return on_init(m, in);
      case Kind::kCancel:
        return on_cancel(m, in);
      case Kind::kFinish:
        finish = true;
        finish_error = in.rest_text();
        return {};
      default:
        return malformed(m);
    }
  }

  // The header says which copy; the bytes are the message's payload, taken straight into the
  // datum's memory when a task here waits for it (a payload not taken is dropped by the
  // communicator).
  Status on_data(const Message& m) {
    Decoder in(m.data);
    const auto run = in.word();
    const auto datum = in.word();
    const auto version = in.word();
    if (!run || !datum || !version || *datum >= handles_.size() || in.offset() != m.data.size() ||
        m.payload != workload_.data_bytes[*datum]) {
      return malformed(m);
    }
    if (*run != run_) {
      return {};  // an earlier run's copy, sent again after its first one arrived
    }
    auto it = expected_.find(*datum);
    if (it == expected_.end() || it->second != *version) {
      // Before the assignment that needs it (messages from different ranks are not ordered),
      // or a copy sent again after the first one arrived: kept until an assignment asks.
      std::vector<std::byte> bytes(m.payload);
      ACCO_RETURN_IF_ERROR(comm_.take_payload(m, bytes), fmt::format("datum {}", *datum));
      early_[*datum] = {*version, std::move(bytes)};
      return {};
    }
    expected_.erase(it);
    ACCO_RETURN_IF_ERROR(
        install(*datum, [&](std::span<std::byte> host) { return comm_.take_payload(m, host); }));
    return submit_ready();
  }

  // Reports of tasks that ended since the last call.
  std::vector<sched::TaskEnd> ended() {
    std::lock_guard lock(ended_mutex_);
    return std::exchange(ended_, {});
  }
  // Given and not yet reported: submitted, or waiting for its inputs.
  [[nodiscard]] std::size_t assigned() const { return outstanding_ + pending_.size(); }
  void finished_one() { --outstanding_; }

 private:
  Status on_assign(const Message& m, Decoder& in) {
    const auto task = in.word();
    const auto n = in.word();
    if (!task || !n || *task >= workload_.tasks.size()) {
      return malformed(m);
    }
    Pending p{*task, {}};
    for (std::uint64_t i = 0; i < *n; ++i) {
      const auto datum = in.word();
      const auto version = in.word();
      const auto from = in.word();
      if (!datum || !version || !from || *datum >= handles_.size()) {
        return malformed(m);
      }
      if (*from == 0) {
        ACCO_RETURN_IF_ERROR(install_initial(*datum));
        continue;
      }
      // The copy may have come before the assignment (from another rank).
      auto early = early_.find(*datum);
      if (early != early_.end() && early->second.first == *version) {
        const std::vector<std::byte> bytes = std::move(early->second.second);
        early_.erase(early);
        ACCO_RETURN_IF_ERROR(install(*datum, [&](std::span<std::byte> host) -> Status {
          std::memcpy(host.data(), bytes.data(), host.size());
          return {};
        }));
        continue;
      }
      if (early != early_.end()) {
        early_.erase(early);  // an older version nobody waits for
      }
      expected_[*datum] = *version;
      p.waiting.push_back(*datum);
    }
    pending_.push_back(std::move(p));
    return submit_ready();
  }

  Status on_send(const Message& m, Decoder& in) {
    const auto datum = in.word();
    const auto version = in.word();
    const auto to = in.word();
    if (!datum || !version || !to || *datum >= handles_.size()) {
      return malformed(m);
    }
    // The host copy made valid (the writer that made this version has ended), then sent from
    // where it lies. Nothing writes it before the peer has it: the next writer of the datum waits
    // for the peer's reader (write after read), and a version that lands here meanwhile goes to
    // a fresh buffer (HostData::writable).
    ACCO_RETURN_IF_ERROR(runtime_.write_back(handles_[*datum]), fmt::format("datum {}", *datum));
    Encoder out;
    out.word(run_).word(*datum).word(*version);
    return comm_.post_payload(static_cast<int>(*to), kTagData, out.take(),
                              {memory_.data(*datum), workload_.data_bytes[*datum]});
  }

  Status on_init(const Message& m, Decoder& in) {
    const auto datum = in.word();
    if (!datum || *datum >= handles_.size()) {
      return malformed(m);
    }
    expected_.erase(*datum);
    ACCO_RETURN_IF_ERROR(install_initial(*datum));
    return submit_ready();
  }

  Status on_cancel(const Message& m, Decoder& in) {
    const auto task = in.word();
    if (!task) {
      return malformed(m);
    }
    auto it = std::find_if(pending_.begin(), pending_.end(),
                           [&](const Pending& p) { return p.task == *task; });
    if (it == pending_.end()) {
      return {};  // it started: its result is on the way
    }
    pending_.erase(it);
    // What only it waited for is no longer on its way.
    for (auto e = expected_.begin(); e != expected_.end();) {
      const bool wanted = std::any_of(pending_.begin(), pending_.end(), [&](const Pending& p) {
        return std::find(p.waiting.begin(), p.waiting.end(), e->first) != p.waiting.end();
      });
      e = wanted ? std::next(e) : expected_.erase(e);
    }
    Encoder out;
    out.word(static_cast<std::uint64_t>(Kind::kCancelled)).word(*task);
    ACCO_RETURN_IF_ERROR(comm_.post(0, kTagReport, out.take()));
    return submit_ready();
  }

  struct Pending {
    std::size_t task = 0;
    std::vector<std::size_t> waiting;  // data still to arrive
  };

  // A new version of a datum into host memory: the old copies dropped first (no task here
  // touches the datum now: the coordinator sends a version only to a rank whose tasks on that
  // datum have ended), `fill` writes the bytes, then the datum is registered again.
  template <class Fill>
  Status install(std::size_t datum, Fill fill) {
    ACCO_RETURN_IF_ERROR(runtime_.unregister(handles_[datum]), fmt::format("datum {}", datum));
    ACCO_ASSIGN_OR_RETURN(const std::span<std::byte> host, memory_.writable(datum));
    ACCO_RETURN_IF_ERROR(fill(host), fmt::format("datum {}", datum));
    ACCO_ASSIGN_OR_RETURN(handles_[datum],
                          runtime_.register_data(host.data(), workload_.data_bytes[datum]));
    return {};
  }
  // A datum about to be written here whose host memory is still being sent (the library has
  // not let go of it yet) moves to a fresh buffer first, so nothing writes memory under a send.
  // Its host copy is valid (written back for the send), so this copy is all it costs, and only
  // then.
  Status rehome(std::size_t datum) {
    const std::byte* sent = memory_.data(datum);
    if (!comm_.sending_payload(sent)) {
      return {};
    }
    return install(datum, [&](std::span<std::byte> host) -> Status {
      if (host.data() != sent) {  // the same buffer when the send ended meanwhile
        std::memcpy(host.data(), sent, host.size());  // the old one is kept while being sent
      }
      return {};
    });
  }
  // The initial value: zeros.
  Status install_initial(std::size_t datum) {
    return install(datum, [](std::span<std::byte> host) -> Status {
      std::memset(host.data(), 0, host.size());
      return {};
    });
  }

  Status submit_ready() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      std::erase_if(it->waiting, [this](std::size_t d) { return !expected_.contains(d); });
      if (!it->waiting.empty()) {
        ++it;
        continue;
      }
      for (const auto& [datum, mode] : workload_.tasks[it->task].accesses) {
        if (mode != sched::Access::kRead) {
          ACCO_RETURN_IF_ERROR(rehome(datum));
        }
      }
      sched::Task task = tasks_.make(it->task, handles_);
      const std::size_t index = it->task;
      task.on_done = [this, index](const sched::TaskEnd& end) {
        sched::TaskEnd e = end;
        e.task = index;  // the workload's index, not the local runtime's id
        std::lock_guard lock(ended_mutex_);
        ended_.push_back(std::move(e));
      };
      ACCO_RETURN_IF_ERROR(runtime_.submit(std::move(task)).map([](sched::TaskId) {}),
                           fmt::format("task {}", index));
      ++outstanding_;
      it = pending_.erase(it);
    }
    return {};
  }

  Communicator& comm_;
  sched::Runtime& runtime_;
  const sched::EmulatedTasks& tasks_;
  HostData& memory_;
  const sched::Workload& workload_;
  std::uint64_t run_;
  std::vector<sched::DataHandle> handles_;
  std::map<std::size_t, std::uint64_t> expected_;  // datum -> version on its way here
  // datum -> (version, bytes) that came before an assignment asked for them
  std::map<std::size_t, std::pair<std::uint64_t, std::vector<std::byte>>> early_;
  std::vector<Pending> pending_;
  std::size_t outstanding_ = 0;  // submitted, not yet reported
  std::mutex ended_mutex_;
  std::vector<sched::TaskEnd> ended_;
};

Encoder assign_message(const Assignment& a) {
  Encoder e;
  e.word(static_cast<std::uint64_t>(Kind::kAssign)).word(a.task).word(a.fetches.size());
  for (const Fetch& f : a.fetches) {
    e.word(f.datum).word(f.version).word(f.from < 0 ? 0 : static_cast<std::uint64_t>(f.from) + 1);
  }
  return e;
}

// Rank 0's side: the coordinator, fed by reports, and when each worker was last heard of.
class Control {
 public:
  Control(Communicator& comm, Coordinator coordinator, const DistributedOptions& run)
      : comm_(comm), coordinator_(std::move(coordinator)), run_(run) {
    last_heard_.assign(static_cast<std::size_t>(comm.size()), Clock::now());
  }

  Status on_report(const Message& m) {
    last_heard_[static_cast<std::size_t>(m.source)] = Clock::now();
    Decoder in(m.data);
    const auto kind = in.word();
    if (!kind) {
      return malformed(m);
    }
    if (static_cast<Kind>(*kind) == Kind::kAlive) {
      return {};
    }
    changed_ = true;
    if (static_cast<Kind>(*kind) == Kind::kAbort) {
      if (error_.empty()) {
        error_ = fmt::format("rank {} stopped: {}", m.source, in.rest_text());
      }
      return {};
    }
    const auto task = in.word();
    if (!task) {
      return malformed(m);
    }
    if (static_cast<Kind>(*kind) == Kind::kCancelled) {
      (void)coordinator_.cancelled(m.source, *task);
      return {};
    }
    if (static_cast<Kind>(*kind) == Kind::kFailed) {
      error_ = fmt::format("rank {}: task {} failed: {}", m.source, *task, in.rest_text());
      return {};
    }
    const auto device = in.word();
    const auto seconds = in.real();
    if (static_cast<Kind>(*kind) != Kind::kDone || !device || !seconds) {
      return malformed(m);
    }
    (void)coordinator_.done(m.source, *task, *device, *seconds);  // a lost worker's late news
    last_done_ = comm_.seconds();
    return {};
  }

  // Lost workers, new assignments, the end. Returns true once finish has been sent.
  Result<bool> step() {
    if (finished_) {
      return true;
    }
    for (const int rank : coordinator_.ranks()) {
      if (coordinator_.in_flight(rank) > 0 &&
          since(last_heard_[static_cast<std::size_t>(rank)]) > run_.lost_after_seconds) {
        ACCO_RETURN_IF_ERROR(coordinator_.lost(rank));
        changed_ = true;
      }
    }
    if (started_ < 0) {
      started_ = comm_.seconds();
    }
    // Nothing to decide until a task ended, was cancelled or a worker was lost: the loop calls
    // this every turn, and a decision sorts the ready tasks and scans the running ones.
    if (!changed_) {
      return false;
    }
    changed_ = false;
    const std::size_t reruns = coordinator_.reruns();
    for (const Assignment& a : coordinator_.dispatch()) {
      ACCO_RETURN_IF_ERROR(post(a, true));
    }
    for (const Assignment& a : coordinator_.resend()) {
      ACCO_RETURN_IF_ERROR(post(a, false));
    }
    for (const auto& [rank, task] : coordinator_.cancels()) {
      Encoder e;
      e.word(static_cast<std::uint64_t>(Kind::kCancel)).word(task);
      ACCO_RETURN_IF_ERROR(comm_.post(rank, kTagControl, e.take()));
    }
    // Producers made ready again by a lost input become assignable at the next decision.
    changed_ = coordinator_.reruns() != reruns;
    if (coordinator_.stuck() && error_.empty()) {
      error_ = "every worker was lost with tasks left";
    }
    if (coordinator_.finished() || !error_.empty()) {
      for (int r = 0; r < comm_.size(); ++r) {
        ACCO_RETURN_IF_ERROR(post_finish(comm_, r, error_));
      }
      finished_ = true;
    }
    return finished_;
  }

  [[nodiscard]] double makespan() const {
    return last_done_ > started_ ? last_done_ - started_ : 0;
  }
  [[nodiscard]] const Coordinator& coordinator() const { return coordinator_; }

 private:
  Status post(const Assignment& a, bool assign) {
    for (const Fetch& f : a.fetches) {
      if (f.from >= 0) {
        Encoder e;
        e.word(static_cast<std::uint64_t>(Kind::kSend))
            .word(f.datum)
            .word(f.version)
            .word(static_cast<std::uint64_t>(a.rank));
        ACCO_RETURN_IF_ERROR(comm_.post(f.from, kTagControl, e.take()));
      } else if (!assign) {
        Encoder e;
        e.word(static_cast<std::uint64_t>(Kind::kInit)).word(f.datum);
        ACCO_RETURN_IF_ERROR(comm_.post(a.rank, kTagControl, e.take()));
      }
    }
    if (assign) {
      return comm_.post(a.rank, kTagControl, assign_message(a).take());
    }
    return {};
  }

  Communicator& comm_;
  Coordinator coordinator_;
  const DistributedOptions& run_;
  std::vector<Clock::time_point> last_heard_;
  std::string error_;
  double started_ = -1;
  double last_done_ = 0;
  bool finished_ = false;
  bool changed_ = true;  // something happened since the last decision (the first one too)
};

struct RunResult {
  std::size_t local_tasks = 0;
  std::optional<DistributedOutcome> outcome;  // rank 0
};

// One rank's loop state: its worker, rank 0's control, what the worker reported.
class Loop {
 public:
  Loop(Communicator& comm, Worker& worker, Control* control, const DistributedOptions& run,
       std::size_t device_offset, bool hangs)
      : comm_(comm),
        worker_(worker),
        control_(control),
        run_(run),
        device_offset_(device_offset),
        hangs_(hangs) {}

  // Until the coordinator says finish (or an error: then the other ranks are told, so that
  // none waits for a rank that has stopped).
  Status run() {
    Status status = turns();
    if (!status) {
      tell_others(status.error().message);
    }
    return status;
  }

  [[nodiscard]] std::size_t reported() const { return reported_; }
  [[nodiscard]] const std::string& finish_error() const { return finish_error_; }

 private:
  [[nodiscard]] bool hung() const { return hangs_ && reported_ >= run_.hang_after; }

  Status turns() {
    while (!finish_) {
      ACCO_ASSIGN_OR_RETURN(bool busy, receive());
      ACCO_ASSIGN_OR_RETURN(const bool reported, report());
      busy = busy || reported;
      if (control_ != nullptr) {
        ACCO_RETURN_IF_ERROR(control_->step().map([](bool) {}));
      }
      if (!busy) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return {};
  }

  // Best effort, the communicator may be what failed: rank 0 finishes every worker with the
  // error, a worker tells rank 0 (which finishes the others). The sends get a second to leave.
  void tell_others(const std::string& why) {
    if (control_ != nullptr) {
      for (int r = 1; r < comm_.size(); ++r) {
        (void)post_finish(comm_, r, fmt::format("rank 0 stopped: {}", why));
      }
    } else {
      Encoder e;
      e.word(static_cast<std::uint64_t>(Kind::kAbort)).text(why);
      (void)comm_.post(0, kTagReport, e.take());
    }
    const auto until = Clock::now() + std::chrono::seconds(1);
    while (comm_.pending_sends() > 0 && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Up to 64 messages; true when there was one.
  Result<bool> receive() {
    bool any = false;
    for (int i = 0; i < 64; ++i) {
      ACCO_ASSIGN_OR_RETURN(auto m, comm_.poll());
      if (!m) {
        break;
      }
      any = true;
      const Message& msg = *m;
      if (msg.tag == kTagReport && control_ != nullptr) {
        ACCO_RETURN_IF_ERROR(control_->on_report(msg));
      } else if (msg.tag == kTagControl) {
        // A hung worker hears only the end.
        if (!hung() || Decoder(msg.data).word() == static_cast<std::uint64_t>(Kind::kFinish)) {
          ACCO_RETURN_IF_ERROR(worker_.on_control(msg, finish_, finish_error_));
        }
      } else if (msg.tag == kTagData) {
        if (!hung()) {
          ACCO_RETURN_IF_ERROR(worker_.on_data(msg));
        }
      } else {
        return tl::unexpected(malformed(msg).error());
      }
    }
    return any;
  }

  // The tasks that ended since the last call to rank 0, or `alive` when it is time; true when
  // a task ended.
  Result<bool> report() {
    bool any = false;
    for (const sched::TaskEnd& end : worker_.ended()) {
      any = true;
      worker_.finished_one();
      if (hung()) {
        continue;
      }
      Encoder e;
      if (end.error.empty()) {
        e.word(static_cast<std::uint64_t>(Kind::kDone))
            .word(end.task)
            .word(device_offset_ + static_cast<std::size_t>(std::max(0, end.device)))
            .real(end.seconds);
      } else {
        e.word(static_cast<std::uint64_t>(Kind::kFailed)).word(end.task).text(end.error);
      }
      ACCO_RETURN_IF_ERROR(comm_.post(0, kTagReport, e.take()));
      ++reported_;
      last_report_ = Clock::now();
    }
    if (!hung() && worker_.assigned() > 0 && since(last_report_) > run_.heartbeat_seconds) {
      Encoder e;
      e.word(static_cast<std::uint64_t>(Kind::kAlive));
      ACCO_RETURN_IF_ERROR(comm_.post(0, kTagReport, e.take()));
      last_report_ = Clock::now();
    }
    return any;
  }

  Communicator& comm_;
  Worker& worker_;
  Control* control_;
  const DistributedOptions& run_;
  std::size_t device_offset_;
  bool hangs_;
  std::size_t reported_ = 0;
  bool finish_ = false;
  std::string finish_error_;
  Clock::time_point last_report_ = Clock::now();
};

// One run of the protocol on this rank, until the coordinator says finish.
Result<RunResult> run_once(Communicator& comm, const sched::Workload& workload,
                           const std::vector<WorkerInfo>& workers, sched::Runtime& runtime,
                           const sched::EmulatedTasks& tasks, HostData& memory,
                           std::size_t device_offset, const DistributedOptions& run,
                           std::uint64_t run_index, bool measured) {
  Worker worker(comm, runtime, tasks, memory, workload, run_index);
  ACCO_RETURN_IF_ERROR(worker.start());
  std::optional<Control> control;
  if (comm.rank() == 0) {
    ACCO_ASSIGN_OR_RETURN(Coordinator c, Coordinator::make(workload, workers, run.dispatch));
    control.emplace(comm, std::move(c), run);
  }
  const bool hangs = measured && run.hang_rank == comm.rank() && run.hang_rank != 0;
  Loop loop(comm, worker, control ? &*control : nullptr, run, device_offset, hangs);
  const Status status = loop.run();
  const std::size_t reported = loop.reported();
  const std::string finish_error = loop.finish_error();
  worker.stop();
  ACCO_RETURN_IF_ERROR(status, fmt::format("rank {}", comm.rank()));
  if (!finish_error.empty()) {
    return fail(Errc::kInternal, fmt::format("distributed run: {}", finish_error));
  }
  // Sends still on their way (copies a lost worker never took) are left to the communicator,
  // their buffers to HostData.
  RunResult result;
  result.local_tasks = reported;
  if (control) {
    DistributedOutcome out;
    out.coordinator = true;
    out.policy = to_string(run.dispatch.policy);
    out.ranks = comm.size();
    out.makespan_seconds = control->makespan();
    out.tasks = workload.tasks.size();
    out.reruns = control->coordinator().reruns();
    out.bytes_between_ranks = control->coordinator().bytes_moved();
    out.workers = control->coordinator().stats();
    result.outcome = std::move(out);
  }
  return result;
}

}  // namespace

Result<DistributedOutcome> run_distributed(Communicator& comm, const sched::Workload& workload,
                                           const std::vector<std::size_t>& devices_per_rank,
                                           std::vector<sched::DeviceSpec> local,
                                           sched::RuntimeOptions options,
                                           const DistributedOptions& run) {
  const auto rank = static_cast<std::size_t>(comm.rank());
  if (devices_per_rank.size() != static_cast<std::size_t>(comm.size())) {
    return fail(Errc::kInvalidArgument,
                fmt::format("distributed: devices given for {} ranks, the job has {}",
                            devices_per_rank.size(), comm.size()));
  }
  if (!(run.slowdown >= 1)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("distributed: slowdown {}, expected at least 1", run.slowdown));
  }
  if (local.size() != devices_per_rank[rank] || local.empty()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("distributed: rank {} has {} devices, expected {} (at least 1)", rank,
                            local.size(), devices_per_rank[rank]));
  }
  const std::size_t total =
      std::accumulate(devices_per_rank.begin(), devices_per_rank.end(), std::size_t{0});
  for (std::size_t i = 0; i < workload.tasks.size(); ++i) {
    if (workload.tasks[i].seconds.size() != total) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("distributed: task {} has costs for {} devices, the ranks have {}", i,
                              workload.tasks[i].seconds.size(), total));
    }
  }
  std::vector<WorkerInfo> workers;
  std::size_t offset = 0;
  std::size_t my_offset = 0;
  for (std::size_t r = 0; r < devices_per_rank.size(); ++r) {
    WorkerInfo w{static_cast<int>(r), {}};
    for (std::size_t d = 0; d < devices_per_rank[r]; ++d) {
      w.devices.push_back(offset + d);
    }
    if (r == rank) {
      my_offset = offset;
    }
    offset += devices_per_rank[r];
    workers.push_back(std::move(w));
  }
  ACCO_ASSIGN_OR_RETURN(const sched::Bounds bounds, sched::bounds(sched::workload_dag(workload)),
                        fmt::format("workload {}", workload.name));

  const sched::Workload mine = local_view(workload, my_offset, local.size(), run.slowdown);
  const sched::EmulatedTasks tasks(mine, sched::implementation_kinds(local), run.async_kernels, {});
  device::Device* pin_on = local.front().device;
  ACCO_ASSIGN_OR_RETURN(auto runtime, sched::Runtime::create(std::move(local), std::move(options)));
  HostData memory(comm, *pin_on);
  ACCO_RETURN_IF_ERROR(memory.allocate(workload.data_bytes));
  RunResult last;
  for (int i = 0; i <= run.calibration_runs; ++i) {
    const bool measured = i == run.calibration_runs;
    if (measured) {
      runtime->reset_records();
    }
    ACCO_ASSIGN_OR_RETURN(last,
                          run_once(comm, workload, workers, *runtime, tasks, memory, my_offset, run,
                                   static_cast<std::uint64_t>(i), measured),
                          measured ? "measured run" : fmt::format("calibration run {}", i + 1));
    ACCO_RETURN_IF_ERROR(comm.barrier());
  }
  DistributedOutcome out = last.outcome.value_or(DistributedOutcome{});
  out.ranks = comm.size();
  out.devices = total;
  out.bounds = bounds;
  out.efficiency = out.makespan_seconds > 0 ? bounds.best() / out.makespan_seconds : 0;
  out.tasks = workload.tasks.size();
  out.local_tasks = last.local_tasks;
  return out;
}

}  // namespace acco::cluster
