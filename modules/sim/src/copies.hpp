// Copies between the simulated hosts on SimGrid's flow model. Engine-side only.
//
// With `mailboxes`, each copy is a put on its destination's mailbox, whose permanent receiver is an
// anchor actor that never leaves the destination: a put to a mailbox with a permanent receiver
// starts at once, from the putting actor's host to the receiver's, and the anchor takes the
// finished copies off its mailbox as they come. The actor that will wait for a copy puts it itself,
// moved to the source for the put and back; a copy nobody waits for yet (a prefetch) is put by a
// sender actor on the source, from a pool per source that grows to the most copies it sent at once.
//
// Without, each is s4u::Comm::sendto_async, SimGrid's host-to-host comm. SimGrid 3.32 detaches
// every one of those and keeps the detached comms in a single list (the maestro's activities)
// that each finishing comm searches with std::list::remove: a copy costs O(copies in flight),
// 48 % of a run of 10,000 devices and 65,000 copies. A mailbox comm sits in its own actors'
// lists, but costs its actors' wake-ups: slower with fewer copies in flight (SimOptions::
// mailbox_copies_devices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

namespace acco::sim {

class Copies {
 public:
  // The hosts copies go to, by index (the devices).
  // `mailboxes`: puts on mailboxes, else SimGrid's host-to-host comms (see above).
  Copies(std::vector<simgrid::s4u::Host*> destinations, bool mailboxes);

  // From an actor: starts moving `bytes` from `from` to destination `to` at the current virtual
  // time; its id (0, 1, ...). `caller_waits`: the calling actor will wait for it itself.
  std::size_t start(simgrid::s4u::Host* from, std::size_t to, std::uint64_t bytes,
                    bool caller_waits);
  // Blocks the calling actor, waiter `waiter` (below the destinations' count: the workers),
  // until each of `ids` has arrived.
  void wait(std::span<const std::size_t> ids, std::size_t waiter);
  // Once the run is over: every copy nobody waited for takes its times from its comm.
  void settle();
  // A copy's start and end on the virtual clock; -1 until it is over (or if it never was).
  [[nodiscard]] double start_time(std::size_t id) const { return copies_[id].start; }
  [[nodiscard]] double end_time(std::size_t id) const { return copies_[id].end; }

 private:
  struct Copy {
    simgrid::s4u::CommPtr comm;  // from its put until it is over
    double start = -1;
    double end = -1;
    bool pooled = false;               // put by a sender
    std::vector<std::size_t> waiters;  // of a sender's copy: told when it is over
  };
  struct Sender {
    simgrid::s4u::SemaphorePtr go;
    std::size_t copy = 0;  // what it sends next
    simgrid::s4u::Mailbox* to = nullptr;
    std::uint64_t bytes = 0;
  };
  void over(std::size_t id);
  simgrid::s4u::Mailbox* box(std::size_t to);
  void send(simgrid::s4u::Host* from, std::size_t id, simgrid::s4u::Mailbox* to,
            std::uint64_t bytes);

  bool mailboxes_;
  char payload_ = 0;  // what a put carries: SimGrid refuses a null pointer
  std::vector<simgrid::s4u::Host*> destinations_;
  std::vector<simgrid::s4u::Mailbox*> boxes_;  // per destination, with its anchor once used
  std::vector<Copy> copies_;
  std::vector<std::unique_ptr<Sender>> senders_;
  std::vector<simgrid::s4u::SemaphorePtr> arrived_;                           // per waiter
  std::unordered_map<const simgrid::s4u::Host*, std::vector<Sender*>> idle_;  // per source
};

}  // namespace acco::sim
