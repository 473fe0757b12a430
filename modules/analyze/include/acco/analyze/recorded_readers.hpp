// Readers for what people already record, turned into the Snapshots `acco analyze` takes:
// `nvidia-smi --query-gpu=... --format=csv -l 1` logs, `nvidia-smi dmon` and `nvidia-smi -q`
// output, and saved Prometheus scrapes (dcgm-exporter's DCGM_FI_* series and acco's own
// acco_gpu_* / acco_pcie_* series). Readings come out in acco's
// base units; a cell or series that says "not available" is nullopt, never a number.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/analyze/recording.hpp"
#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"

namespace acco::analyze {

// An nvidia-smi CSV log (--format=csv with or without nounits; noheader is rejected because
// the columns cannot be known). Columns are found by their header names in any order and subset;
// units come from the header ("power.draw [W]") or the cell ("85.32 W"). "[N/A]", "N/A",
// "[Not Supported]", "[Unknown Error]" and any other bracketed cell are nullopt; "[GPU is lost]"
// marks the device lost. GPUs are told apart by the index column, else uuid, else pci.bus_id
// (numbered in order of first appearance), else by name, serial and memory.total when those
// differ between rows, else by timestamps: rows sharing one timestamp are one round's GPUs in
// the order printed, and a log whose timestamps mostly hold one row each is one GPU. With an id,
// rows within 0.5 s of a round's first row and no GPU repeated form one Snapshot. Without a
// timestamp column rounds are numbered 1 s apart from 0; with one, every Snapshot's
// stats.interval_seconds is the median gap between rounds. nvidia-smi prints local time without
// a zone; it is read as if it were UTC. How GPUs were told apart is said once in `warnings`, as
// are unknown columns (ignored). kInvalidArgument naming `name_for_errors` and the line
// ("run.csv:17: expected 8 cells, got 5") for a header that is not nvidia-smi's, a row with the
// wrong number of cells or a cell that cannot be read. Pure; thread-safe.
[[nodiscard]] Result<std::vector<Snapshot>> read_nvidia_smi_csv(std::string_view text,
                                                                const std::string& name_for_errors);
[[nodiscard]] Result<std::vector<Snapshot>> read_nvidia_smi_csv(std::string_view text,
                                                                const std::string& name_for_errors,
                                                                std::vector<std::string>& warnings);

// Prometheus text-format scrapes (0.0.4), one or many concatenated. A new scrape starts at a
// `# acco-scrape <unix-ms>` comment, at a sample timestamp different from the current scrape's,
// or when a series already seen in the current scrape repeats. A scrape's time is the comment's,
// else its sample timestamp, else acco_snapshot_timestamp_seconds, else the previous scrape's
// plus 1 s (the first at 0). DCGM's blank/not-supported sentinels (0x7ffffffffffffff0..3,
// 0x7ffffff0..3, 4294967295, 2^47..2^47+3) and readings outside their physical range are
// dropped and counted in DeviceSample::dropped_readings. Where a device has both acco's and
// DCGM's series (acco serve --compat=dcgm), acco's win. Host series are not read. DCGM_FI_*
// names not read are named once in `warnings`. kInvalidArgument naming `name_for_errors` and
// the line for a line that is not the exposition format. Pure; thread-safe.
[[nodiscard]] Result<std::vector<Snapshot>> read_prometheus_scrapes(
    std::string_view text, const std::string& name_for_errors);
[[nodiscard]] Result<std::vector<Snapshot>> read_prometheus_scrapes(
    std::string_view text, const std::string& name_for_errors, std::vector<std::string>& warnings);
// The same, with the MIG instances seen (series with a GPU_I_ID label) by physical GPU (the `gpu`
// label): "1 (1g.10gb): graphics engine active 87% (mean of 12 reading(s)), 4096 of 9984 MiB
// used (last)". An instance's DCGM_FI_PROF_* and FB_* series are its own; its other series are
// the physical GPU's and are read into that GPU's DeviceSample.
[[nodiscard]] Result<std::vector<Snapshot>> read_prometheus_scrapes(
    std::string_view text, const std::string& name_for_errors, std::vector<std::string>& warnings,
    std::map<std::string, std::vector<std::string>>& instances);

// `nvidia-smi dmon` output (-s pucvmet, -o DT): the '# gpu pwr ...' names line and the '# Idx W
// ...' units line (repeated headers skipped), rows of whitespace-separated cells with '-' for no
// reading, and optionally the command line echoed above them ("$ nvidia-smi dmon -d 5"), whose
// -d gives the interval (dmon's default 1 s when the line has none). Without such a line the
// interval is `interval_seconds` (acco analyze --interval), else 1 s with a note. Columns read:
// gpu (device), pwr (W), gtemp/mtemp (C), sm/mem (% -> utilization ratios), pclk (graphics clock,
// read as the SM clock) and mclk (MHz), fb (MiB used), rxpci/txpci (MB/s), pviol (% of the
// interval held by the power cap: 50 % or more sets sw_power_cap) and tviol (non-zero sets
// sw_thermal_slowdown); others are named once in the notes. Date (YYYYMMDD) and Time (HH:MM:SS)
// are local time (TimeBase::kLocalUnknownZone); a Time without a Date gives offsets only
// (TimeBase::kNone). kInvalidArgument naming `name` and the line for rows before the header, a
// row whose cells do not match the header, or a cell that is not a number. Pure; thread-safe.
[[nodiscard]] Result<Recording> read_nvidia_smi_dmon(std::string_view text, const std::string& name,
                                                     std::optional<double> interval_seconds);
// True when the first lines look like dmon's (a '# gpu' / '#Date' header or a dmon command line).
[[nodiscard]] bool looks_like_nvidia_smi_dmon(std::string_view text);

// `nvidia-smi -q` reports, whole or by -d (PERFORMANCE, POWER, CLOCK, TEMPERATURE, UTILIZATION,
// MEMORY, PCI), one or many (-l N); a fragment pasted without its "GPU ..." line is one GPU "0".
// Each "Timestamp : Fri Dec  4 09:06:33 2026" starts a round (local time); GPUs are numbered in
// the order listed (nvidia-smi's index order), their "GPU 00000000:18:00.0" line is the bus id.
// The "Clocks Event Reasons" / "Clocks Throttle Reasons" section sets clock_event_reasons (the
// state now); its "... Counters" section ("SW Power Capping : 2147483 us") is time summed since
// the driver loaded and goes to throttle_seconds, never to the current state. kInvalidArgument
// for a Timestamp that cannot be read or a report with no GPU readings. Pure; thread-safe.
[[nodiscard]] Result<Recording> read_nvidia_smi_query(std::string_view text,
                                                      const std::string& name);
// True when the first lines look like -q output ("NVSMI LOG", "GPU 0000...", "Key   : value").
[[nodiscard]] bool looks_like_nvidia_smi_query(std::string_view text);

}  // namespace acco::analyze
