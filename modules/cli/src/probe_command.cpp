// `acco probe`: discover the machine's links (live, a sysroot or a snapshot) and report what is
// wrong; optionally record everything read into a snapshot for --from, or (--nccl-env) print
// the NCCL, UCX and Open MPI environment acco recommends for the node.
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/cluster.hpp"
#include "acco/core/units.hpp"
#include "acco/doctor/live_machine.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/nccl_env.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"

namespace acco::cli {
namespace {

struct ProbeFlags {
  MachineFlags machine;
  bool nccl_env = false;
  std::string nccl_topo_file;  // --nccl-topo-file FILE
  bool cluster = false;
  std::string pair_bytes = "4MiB";
};

struct ProbeOptions {
  MachineOptions machine;
  bool nccl_env = false;
  std::string nccl_topo_file;
  bool cluster = false;
  cluster::PairOptions pairs;
};

class ProbeCommand final : public Command {
 public:
  explicit ProbeCommand(ProbeOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    if (options_.cluster) {
      return run_cluster(inv);
    }
    const MachineOptions& machine = options_.machine;
    const auto request = probe_request(machine, inv.settings);  // it writes --snapshot
    Output out;
    std::vector<topo::Finding> findings;
    if (options_.nccl_env) {
      ACCO_ASSIGN_OR_RETURN(const auto result, topo::probe(request));
      const auto env = topo::nccl_env(result.machine);
      if (!options_.nccl_topo_file.empty()) {
        ACCO_RETURN_IF_ERROR(
            for_flag("--nccl-topo-file",
                     topo::write_nccl_topo_file(result.machine, env, options_.nccl_topo_file)));
        out.err = fmt::format("acco: NCCL topology written to {}\n", options_.nccl_topo_file);
      }
      out.out = inv.format == Format::kJson
                    ? topo::to_json(env, options_.nccl_topo_file).dump(2) + "\n"
                    : topo::nccl_env_text(result.machine, env, options_.nccl_topo_file);
      findings = result.findings;
    } else {
      ACCO_ASSIGN_OR_RETURN(const auto report, doctor::probe_with_driver(request));
      out.out = render(inv, report, doctor::probe_report);
      findings = report.probe.findings;
    }
    if (!machine.snapshot.empty()) {
      out.err += fmt::format("acco: snapshot written to {}\n", machine.snapshot);
    }
    out.exit_code = findings_exit(machine, findings);
    return out;
  }

 private:
  // Every rank of the job runs this (cluster::probe_cluster); rank 0 prints.
  Result<Output> run_cluster(const Invocation& inv) const {
    cluster::ClusterProbeOptions options;
    options.node_request = [&] { return probe_request(options_.machine, inv.settings); };
    options.pairs = options_.pairs;
    ACCO_ASSIGN_OR_RETURN(const auto report, cluster::probe_cluster(options));
    Output out;
    if (!report) {
      return out;  // not rank 0
    }
    out.out = render(inv, *report, [](const auto& r) { return cluster::to_text(r); });
    if (options_.machine.fail_on) {
      out.exit_code =
          cluster::has_problems_at(*report, *options_.machine.fail_on) ? kExitFindings : kExitOk;
    }
    return out;
  }

  ProbeOptions options_;
};

Result<ProbeOptions> probe_options(const ProbeFlags& flags, const core::Settings& settings) {
  ProbeOptions o;
  ACCO_ASSIGN_OR_RETURN(o.machine, machine_options(flags.machine, settings));
  o.nccl_topo_file = flags.nccl_topo_file;
  // Writing the topology file is part of the recommendation, so it implies --nccl-env.
  o.nccl_env = flags.nccl_env || !flags.nccl_topo_file.empty();
  o.cluster = flags.cluster;
  if (o.cluster && (o.nccl_env || !o.machine.snapshot.empty())) {
    return usage(
        "--cluster reports on the job's nodes; it does not take --nccl-env, "
        "--nccl-topo-file or --snapshot");
  }
  const auto bytes = units::parse_bytes(flags.pair_bytes);
  if (!bytes || *bytes < 8 || *bytes > (std::uint64_t{1} << 30)) {
    return bad_value("--pair-bytes", flags.pair_bytes, "a size from 8B to 1GiB");
  }
  o.pairs.bytes = *bytes;
  return o;
}

}  // namespace

CommandSpec probe_command() {
  return command_with_flags<ProbeFlags>(
      "probe", "discover the machine's links and report what is wrong",
      [](CLI::App& sub, SharedFlags& shared, ProbeFlags& flags) {
        add_machine_flags(sub, shared, flags.machine, true);
        sub.add_flag("--nccl-env", flags.nccl_env,
                     "print the NCCL_IB_HCA, NCCL_SOCKET_IFNAME, UCX_NET_DEVICES and "
                     "OMPI_MCA_btl_tcp_if_include settings acco recommends (as export lines, or "
                     "acco.nccl-env/1 with --json) instead of the report");
        sub.add_option("--nccl-topo-file", flags.nccl_topo_file,
                       "in a virtual machine, write an NCCL_TOPO_FILE pairing each GPU with a NIC "
                       "to FILE (implies --nccl-env)")
            ->type_name("FILE");
        sub.add_flag("--cluster", flags.cluster,
                     "under mpirun/srun: every node probed, outliers among them, and a "
                     "reachability and bandwidth matrix of every pair of ranks (rank 0 prints; "
                     "acco.cluster/1 with --json)");
        sub.add_option("--pair-bytes", flags.pair_bytes,
                       "--cluster: size of the bandwidth exchange per pair (default 4MiB)")
            ->type_name("SIZE");
      },
      [](const ProbeFlags& flags, const core::Settings& settings) {
        return command_from<ProbeCommand>(probe_options(flags, settings));
      });
}

}  // namespace acco::cli
