#include "copies.hpp"

#include <functional>
#include <string>
#include <utility>

namespace acco::sim {

namespace sg4 = simgrid::s4u;

namespace {

// The copy actors (anchors and senders) run a get or a put and a few stores: a small
// stack each, from the heap rather than a mapping of its own (with tens of thousands of them,
// mappings would pass vm.max_map_count). The sanitizers' thread contexts keep their default.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr unsigned kCopyStackKib = 0;
#else
constexpr unsigned kCopyStackKib = 16;
#endif

sg4::ActorPtr spawn(const std::string& name, sg4::Host* host, const std::function<void()>& code) {
  auto actor = sg4::Actor::init(name, host);
  if (kCopyStackKib > 0) {
    actor->set_stacksize(kCopyStackKib);
  }
  return actor->start(code);
}

}  // namespace

Copies::Copies(std::vector<sg4::Host*> destinations, bool mailboxes)
    : mailboxes_(mailboxes),
      destinations_(std::move(destinations)),
      boxes_(destinations_.size(), nullptr) {
  arrived_.reserve(destinations_.size());
  for (std::size_t w = 0; w < destinations_.size(); ++w) {
    arrived_.push_back(sg4::Semaphore::create(0));
  }
}

sg4::Mailbox* Copies::box(std::size_t to) {
  if (boxes_[to] == nullptr) {
    auto* mailbox = sg4::Mailbox::by_name("copies to " + destinations_[to]->get_name());
    auto anchor = spawn("anchor", destinations_[to], [mailbox] {
      for (;;) {
        mailbox->get<char>();
      }
    });
    anchor->daemonize();
    mailbox->set_receiver(anchor);
    boxes_[to] = mailbox;
  }
  return boxes_[to];
}

std::size_t Copies::start(sg4::Host* from, std::size_t to, std::uint64_t bytes, bool caller_waits) {
  const std::size_t id = copies_.size();
  copies_.emplace_back();
  if (!mailboxes_) {
    copies_[id].comm = sg4::Comm::sendto_async(from, destinations_[to], bytes);
    return id;
  }
  auto* mailbox = box(to);
  if (caller_waits) {
    auto* home = sg4::this_actor::get_host();
    sg4::this_actor::set_host(from);
    copies_[id].comm = mailbox->put_async(&payload_, bytes);
    sg4::this_actor::set_host(home);
  } else {
    copies_[id].pooled = true;
    send(from, id, mailbox, bytes);
  }
  return id;
}

// An idle sender on `from` (a new one when all are busy) puts copy `id` once it runs, at this
// same virtual time, waits for it and goes back to the pool.
void Copies::send(sg4::Host* from, std::size_t id, sg4::Mailbox* to, std::uint64_t bytes) {
  // Each SimGrid call may let other actors run (and send): no reference into the pools is held
  // across one.
  if (idle_[from].empty()) {
    Sender* sender = senders_.emplace_back(std::make_unique<Sender>()).get();
    sender->go = sg4::Semaphore::create(0);
    spawn("sender", from, [this, s = sender, from] {
      for (;;) {
        s->go->acquire();
        auto comm = s->to->put_async(&payload_, s->bytes);
        copies_[s->copy].comm = comm;
        comm->wait();
        over(s->copy);
        idle_[from].push_back(s);
      }
    })->daemonize();
    idle_[from].push_back(sender);
  }
  Sender* s = idle_[from].back();
  idle_[from].pop_back();
  s->copy = id;
  s->to = to;
  s->bytes = bytes;
  s->go->release();
}

void Copies::over(std::size_t id) {
  auto& copy = copies_[id];
  if (copy.comm) {
    copy.start = copy.comm->get_start_time();
    copy.end = copy.comm->get_finish_time();
    copy.comm = nullptr;
  }
  for (const auto w : copy.waiters) {
    arrived_[w]->release();
  }
  copy.waiters = {};
}

void Copies::settle() {
  for (std::size_t id = 0; id < copies_.size(); ++id) {
    over(id);
  }
}

// A comm takes at most its two ends' waits (SimGrid keeps one timeout per end, and a third
// waiter's would replace and leak one): a sender's copy is waited for by its sender, and the
// waiters are told when it arrives.
void Copies::wait(std::span<const std::size_t> ids, std::size_t waiter) {
  std::vector<sg4::CommPtr> comms;
  std::size_t told = 0;
  for (const auto id : ids) {
    auto& copy = copies_[id];
    if (copy.end >= 0) {
      continue;
    }
    if (copy.pooled) {
      copy.waiters.push_back(waiter);
      ++told;
    } else if (copy.comm) {
      comms.push_back(copy.comm);
    }
  }
  sg4::Comm::wait_all(comms);
  for (const auto id : ids) {
    if (!copies_[id].pooled) {
      over(id);
    }
  }
  for (std::size_t i = 0; i < told; ++i) {
    arrived_[waiter]->acquire();
  }
}

}  // namespace acco::sim
