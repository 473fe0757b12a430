// The cluster probe, run by every rank of an MPI job (`mpirun ... acco probe --cluster`): each
// node's first rank probes its node, rank 0 gathers one summary per node and finds the outliers
// among nodes that should be alike (the node whose NIC trained slower, whose GPU sits at x8,
// whose driver differs); then every pair of ranks exchanges a short message and a larger one in
// turn, one pair at a time, which gives a reachability, latency and bandwidth matrix and finds
// the slow link. Launch one rank per node for a node matrix; several ranks per node add pairs
// within a node, ranked among themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/cluster/communicator.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"
#include "acco/topo/probe.hpp"

namespace acco::cluster {

inline constexpr const char* kClusterSchema = "acco.cluster/1";

// One property that nodes of one kind share: "gpu driver" = "580.95.05", "gpu 0000:18:00.0
// pcie" = "32 GT/s x16", "ib mlx5_0/1 rate" = "400 Gb/s".
struct Trait {
  std::string key;
  std::string value;
  bool operator==(const Trait&) const = default;
};
// The traits of `machine`, in a stable order: kernel, CPU packages and cores, online CPUs, GPU
// driver and count, each GPU's model and PCIe link, each NIC's PCIe link, each InfiniBand or
// RoCE port's state and rate, each network interface's MTU.
[[nodiscard]] std::vector<Trait> node_traits(const topo::Machine& machine);

struct NodeSummary {
  int node = 0;      // Communicator::node()
  int rank = 0;      // the node's first rank, which probed it
  std::string host;  // for people; never used to tell nodes apart
  std::vector<Trait> traits;
  std::vector<topo::Finding> findings;  // rule, severity and message kept
  std::string error;                    // why the node could not be probed; empty when it was
  bool operator==(const NodeSummary&) const = default;
};
[[nodiscard]] std::string encode(const NodeSummary& node);
[[nodiscard]] Result<NodeSummary> decode_node_summary(const std::string& text);

// A node whose value of a trait differs from what most nodes have.
struct Outlier {
  std::string key;
  int node = 0;
  std::string value;   // "(absent)" when the node lacks the trait
  std::string others;  // the majority's value; "(no majority)" when there is none
  bool operator==(const Outlier&) const = default;
};
// Traits compared over every node (two or more); a trait where no value has a strict majority
// lists every node.
[[nodiscard]] std::vector<Outlier> find_outliers(const std::vector<NodeSummary>& nodes);

struct PairOptions {
  std::uint64_t bytes = std::uint64_t{4} << 20;  // the bandwidth exchange
  int iters = 5;                                 // exchanges per size (median kept)
};

struct PairResult {
  int a = 0;  // ranks, a < b
  int b = 0;
  int node_a = 0;
  int node_b = 0;
  bool reached = false;
  double latency_seconds = 0;   // one 8-byte exchange
  double bytes_per_second = 0;  // each direction, both at once
  std::string error;            // why it was not reached
  bool slow = false;            // set by rank_pairs
  double ratio = 0;             // its bandwidth over the median of its class
  bool operator==(const PairResult&) const = default;
};
inline constexpr double kSlowPairRatio = 0.7;
// Every pair of ranks, one pair at a time; every rank calls it and rank 0 gets the list (the
// others an empty one). A pair that cannot exchange is reported unreached, not an error.
[[nodiscard]] Result<std::vector<PairResult>> measure_pairs(Communicator& comm,
                                                            const PairOptions& options);
// Marks the pairs whose bandwidth is below kSlowPairRatio of the median of their class (pairs
// within one node, pairs across nodes; a class needs three pairs to have a median worth the
// name), and sets each pair's ratio.
void rank_pairs(std::vector<PairResult>& pairs);

// The node that is in every slow pair across nodes, when there are two such pairs or more and
// one node alone is in all of them (its link is the slow one).
[[nodiscard]] std::optional<int> slow_node(const std::vector<PairResult>& pairs);

struct ClusterReport {
  int ranks = 1;
  std::string library;  // the MPI library
  std::vector<NodeSummary> nodes;
  std::vector<Outlier> outliers;
  PairOptions pair_options;
  std::vector<PairResult> pairs;
};
// Problems: outliers, unreached and slow pairs, and error-severity findings.
[[nodiscard]] int problem_count(const ClusterReport& report);

// Problems (problem_count), or a node's finding at or above `severity`.
[[nodiscard]] bool has_problems_at(const ClusterReport& report, topo::Severity severity);

struct ClusterProbeOptions {
  // The probe of a node, built on each node's first rank only (a live request may try I/O in a
  // data directory first, as topo::ProbeRequest::direct_io says). Unset: the live machine.
  std::function<topo::ProbeRequest()> node_request;
  PairOptions pairs;
};
// The whole protocol; every rank of the job calls it. Each node's first rank probes its node (a
// node that cannot be probed is reported with why, not an error), rank 0 gathers the summaries
// and finds the outliers, then every pair of ranks is measured (measure_pairs) and ranked. Rank 0
// gets the report, the others nullopt. Errors: the communicator's, and kInvalidArgument for a
// node summary that cannot be decoded.
[[nodiscard]] Result<std::optional<ClusterReport>> probe_cluster(
    Communicator& comm, const ClusterProbeOptions& options);
// The same over the job that started this process (open_job_communicator: one rank without a
// launcher); its errors too.
[[nodiscard]] Result<std::optional<ClusterReport>> probe_cluster(
    const ClusterProbeOptions& options);

[[nodiscard]] std::string to_text(const ClusterReport& report);
[[nodiscard]] nlohmann::ordered_json to_json(const ClusterReport& report);

}  // namespace acco::cluster
