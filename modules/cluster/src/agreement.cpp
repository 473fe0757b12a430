#include "acco/cluster/agreement.hpp"

#include <cstdint>
#include <span>
#include <utility>

#include <fmt/format.h>

namespace acco::cluster {
namespace {

// `root`'s text on every rank: its length, then its bytes.
Result<std::string> broadcast_text(Communicator& comm, std::string text, int root) {
  std::uint64_t length = text.size();
  ACCO_RETURN_IF_ERROR(
      comm.broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&length, 1)), root));
  text.resize(length);
  ACCO_RETURN_IF_ERROR(comm.broadcast(std::as_writable_bytes(std::span<char>(text)), root));
  return text;
}

}  // namespace

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

Status agree(Communicator& comm, Status mine) {
  ACCO_ASSIGN_OR_RETURN(const auto failure, first_failure(comm, mine));
  if (!mine) {
    return mine;
  }
  if (failure) {
    return fail(Errc::kUnavailable, *failure);
  }
  return {};
}

}  // namespace acco::cluster
