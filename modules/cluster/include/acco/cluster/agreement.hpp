// Steps every rank must pass together: each rank's outcome shared, so that a failure on one rank
// stops all of them at the same point instead of leaving the others waiting in a collective.
#pragma once

#include <optional>
#include <string>

#include "acco/cluster/communicator.hpp"
#include "acco/core/result.hpp"

namespace acco::cluster {

// Collective. The first rank that failed and its message ("rank 1: ..."), the same on every rank;
// nullopt when every rank succeeded. Fails only when `comm` does.
[[nodiscard]] Result<std::optional<std::string>> first_failure(Communicator& comm,
                                                               const Status& mine);

// Collective. Success when every rank succeeded; else this rank's own error, or, on a rank that
// succeeded, kUnavailable naming the first rank that failed.
[[nodiscard]] Status agree(Communicator& comm, Status mine);

// A result's outcome alone.
template <typename T>
[[nodiscard]] Status status_of(const Result<T>& result) {
  return result ? Status{} : Status(tl::unexpected(result.error()));
}

// agree() on a result's outcome; the value stays with the caller.
template <typename T>
[[nodiscard]] Status agree(Communicator& comm, const Result<T>& mine) {
  return agree(comm, status_of(mine));
}

}  // namespace acco::cluster
