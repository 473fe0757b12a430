// The cluster probe's protocol over the job's communicator (cluster.hpp); the pieces it joins,
// node traits, outliers and the pair matrix, are in cluster.cpp.
#include <utility>

#include "acco/cluster/cluster.hpp"

namespace acco::cluster {

Result<std::optional<ClusterReport>> probe_cluster(Communicator& comm,
                                                   const ClusterProbeOptions& options) {
  std::string mine;
  if (comm.local_rank() == 0) {
    NodeSummary node;
    node.node = comm.node();
    node.rank = comm.rank();
    auto probed = topo::probe(options.node_request ? options.node_request() : topo::ProbeRequest{});
    if (probed) {
      node.host = probed->machine.hostname;
      node.traits = node_traits(probed->machine);
      for (auto& f : probed->findings) {
        node.findings.push_back(std::move(f));
      }
    } else {
      node.error = probed.error().message;
    }
    mine = encode(node);
  }
  ACCO_ASSIGN_OR_RETURN(const auto gathered, comm.gather(mine));
  ACCO_ASSIGN_OR_RETURN(auto pairs, measure_pairs(comm, options.pairs));
  if (comm.rank() != 0) {
    return std::optional<ClusterReport>();
  }
  ClusterReport report;
  report.ranks = comm.size();
  report.library = comm.capabilities().library;
  report.pair_options = options.pairs;
  for (const std::string& text : gathered) {
    if (text.empty()) {
      continue;  // not a node's first rank
    }
    ACCO_ASSIGN_OR_RETURN(auto node, decode_node_summary(text));
    report.nodes.push_back(std::move(node));
  }
  report.outliers = find_outliers(report.nodes);
  report.pairs = std::move(pairs);
  rank_pairs(report.pairs);
  return std::optional<ClusterReport>(std::move(report));
}

bool has_problems_at(const ClusterReport& report, topo::Severity severity) {
  bool hit = problem_count(report) > 0;
  for (const auto& node : report.nodes) {
    for (const auto& f : node.findings) {
      hit = hit || f.severity >= severity;
    }
  }
  return hit;
}

Result<std::optional<ClusterReport>> probe_cluster(const ClusterProbeOptions& options) {
  ACCO_ASSIGN_OR_RETURN(const auto comm, open_job_communicator());
  return probe_cluster(*comm, options);
}

}  // namespace acco::cluster
