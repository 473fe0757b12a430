#include "acco/monitor/dashboard.hpp"

namespace acco::monitor {
namespace {

// The page's state for tests is in <body data-...>: data-updates counts completed refreshes,
// data-devices the devices shown, data-device-charts and data-host-charts the charts drawn in
// the latest refresh, data-error the last failure to reach the daemon ("" when none), and
// data-script-errors every uncaught script error and unhandled rejection ("" when none).
//
// What each number means (the scales: power limit, thermal thresholds, memory total, the PCIe
// link's peak; the host's rates and which interfaces and disks they sum) comes from
// /api/v1/summary; the page only draws. Charts are inline SVG, so a DOM dump shows every
// title, axis label and legend entry.
constexpr std::string_view kPage = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>acco serve</title>
<script>
"use strict";
// First, so that an error in the page's own script is caught too.
window.accoScriptErrors = [];
function accoRecordError(text) {
  window.accoScriptErrors.push(text);
  if (document.body) document.body.dataset.scriptErrors = window.accoScriptErrors.join(" | ");
}
window.addEventListener("error", e => accoRecordError(
    (e.message || "error") + " (line " + (e.lineno || "?") + ")"));
window.addEventListener("unhandledrejection", e => accoRecordError(
    "unhandled rejection: " + (e.reason && e.reason.message ? e.reason.message : e.reason)));
</script>
<style>
  body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; background: #f6f6f6; color: #222; }
  h1 { font-size: 18px; margin: 0 0 4px; }
  h2 { font-size: 14px; margin: 0 0 6px; }
  #status { color: #555; margin-bottom: 12px; }
  section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px;
            margin-bottom: 12px; }
  #no-device { border-color: #e0b84c; background: #fffaf0; }
  #no-device ul { margin: 4px 0; }
  code { background: #f0f0f0; padding: 0 3px; border-radius: 3px; }
  .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(225px, 1fr));
            gap: 8px; }
  .chart { border: 1px solid #eee; border-radius: 4px; padding: 4px 6px; }
  .chart-title { font-size: 12px; font-weight: 600; color: #333; }
  .chart-scale { font-size: 11px; color: #666; min-height: 15px; }
  svg.plot { width: 100%; height: auto; display: block; }
  svg.plot text { font: 10px sans-serif; fill: #666; }
  svg.plot text.axis-label { fill: #333; }
  svg.plot .grid { stroke: #eee; }
  svg.plot .axis { stroke: #bbb; }
  .nodata { font-size: 12px; color: #777; padding: 30px 8px; text-align: center; }
  ul.legend { list-style: none; margin: 2px 0 0; padding: 0; font-size: 11px; }
  ul.legend li { display: inline-block; margin-right: 10px; white-space: nowrap; }
  .swatch { display: inline-block; width: 14px; height: 0; border-top: 2px solid;
            vertical-align: middle; margin-right: 3px; }
  .swatch.ref { border-top-style: dashed; }
  .tiles { display: flex; flex-wrap: wrap; gap: 8px; margin-bottom: 8px; }
  .tile { border: 1px solid #eee; border-radius: 4px; padding: 4px 8px; min-width: 170px; }
  .tile .name { font-size: 11px; color: #666; }
  .tile .value { font-size: 15px; font-variant-numeric: tabular-nums; }
  .note { font-size: 11px; color: #666; margin: 6px 0 0; }
  .badge { display: inline-block; padding: 0 6px; border-radius: 8px; background: #fde2e2;
           color: #a33; margin-left: 4px; font-size: 11px; font-weight: normal; }
  table.events { border-collapse: collapse; width: 100%; font-size: 12px; }
  table.events th { text-align: left; color: #555; border-bottom: 1px solid #ddd; padding: 2px 6px; }
  table.events td { border-bottom: 1px solid #f0f0f0; padding: 2px 6px; vertical-align: top; }
  table.events td.time { white-space: nowrap; font-variant-numeric: tabular-nums; }
  #events-box { max-height: 320px; overflow: auto; }
  .sev { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 11px; }
  .sev-error, .sev-critical { background: #fbd5d5; color: #900; font-weight: bold; }
  .sev-warning { background: #fdebc8; color: #8a5300; }
  .sev-info { background: #e6eef8; color: #345; }
  .finding.sev-critical, .finding.sev-error, .finding.sev-warning, .finding.sev-info {
    background: none; display: block; font-weight: normal; }
</style>
</head>
<body data-updates="0" data-devices="0" data-device-charts="0" data-host-charts="0"
      data-jobs="0" data-error="" data-script-errors="">
<h1>acco serve</h1>
<div id="status">loading...</div>
<section id="no-device" hidden>
  <h2>No device to show</h2>
  <div id="no-device-text"></div>
</section>
<section id="host">
  <h2>Host</h2>
  <div class="tiles" id="host-tiles"></div>
  <div class="charts" id="host-charts"></div>
  <p class="note" id="host-note"></p>
</section>
<div id="devices"></div>
<section id="findings-panel">
  <h2>Findings of the probe</h2>
  <div id="findings">not checked yet</div>
</section>
<section id="jobs-panel" hidden>
  <h2>Jobs (acco serve --jobs)</h2>
  <table class="events" id="jobs">
    <thead><tr><th>id</th><th>name</th><th>state</th><th>devices</th><th>running for</th><th>why</th></tr></thead>
    <tbody></tbody>
  </table>
  <p class="note" id="jobs-empty">no queued or running job</p>
</section>
<section id="events-panel">
  <h2>Recent events (newest first)</h2>
  <div id="events-box">
    <table class="events" id="events">
      <thead><tr><th>time (UTC)</th><th>severity</th><th>device</th><th>event</th><th>what</th></tr></thead>
      <tbody></tbody>
    </table>
  </div>
  <p class="note" id="events-empty">none yet</p>
</section>
<script>
"use strict";
const WINDOW_NS = 5 * 60 * 1e9;  // the last five minutes
const EVENTS_WINDOW_NS = 60 * 60 * 1e9;
const MAX_EVENTS = 100;
const GiB = 1024 * 1024 * 1024;
const DEVICE_SERIES = [
  "temperature_gpu_celsius", "temperature_memory_celsius", "power_watts",
  "power_limit_enforced_watts", "utilization_ratio", "memory_utilization_ratio",
  "memory_used_bytes", "pcie_rx_link_utilization_ratio", "pcie_tx_link_utilization_ratio"];
const HOST_SERIES = [
  "host_cpu_busy_ratio", "host_memory_used_bytes", "host_network_receive_bytes_per_second",
  "host_network_transmit_bytes_per_second", "host_disk_read_bytes_per_second",
  "host_disk_written_bytes_per_second"];
const W = 260, H = 150, LEFT = 40, RIGHT = 10, TOP = 8, BOTTOM = 30;

function esc(text) {
  return String(text).replace(/[&<>"']/g, c => (
      {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"}[c]));
}

async function getJson(url) {
  const r = await fetch(url, {cache: "no-store"});
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r.json();
}

function niceStep(range, ticks) {
  const raw = range / ticks;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw - 1e-12) return m * power;
  return 10 * power;
}

// Decimal prefixes, as acco prints rates ("63.0 GB/s").
const RATE_UNITS = [["B/s", 1], ["kB/s", 1e3], ["MB/s", 1e6], ["GB/s", 1e9], ["TB/s", 1e12]];
function rateUnit(bytesPerSecond) {
  let unit = RATE_UNITS[0];
  for (const u of RATE_UNITS) if (bytesPerSecond >= u[1]) unit = u;
  return unit;
}
function formatRate(bytesPerSecond) {
  const [name, div] = rateUnit(bytesPerSecond);
  const v = bytesPerSecond / div;
  return v.toFixed(v >= 100 || div === 1 ? 0 : 1) + " " + name;
}
function formatGiB(bytes) { return (bytes / GiB).toFixed(1) + " GiB"; }

// Keeps at most `max` points, evenly spaced, the newest always.
function thin(points, max) {
  if (points.length <= max) return points;
  const step = points.length / max;
  const out = [];
  for (let i = 0; i < max - 1; ++i) out.push(points[Math.floor(i * step)]);
  out.push(points[points.length - 1]);
  return out;
}

function last(points) { return points && points.length ? points[points.length - 1][1] : null; }

// spec: {title, scale (text under the title), yLabel (with its unit), unit, decimals,
//        yMin, yMax, grow (extend past yMax when data does), lines: [{label, color, points}],
//        refs: [{label, value, color}], empty (why a chart without data has none)}
// Points are [time_unix_nanos, value] in the chart's unit.
function chartHtml(spec, now) {
  const lines = spec.lines.map(l => ({...l, points: thin(l.points || [], 400)}));
  const refs = spec.refs || [];
  const any = lines.some(l => l.points.length);
  let html = '<div class="chart-title">' + esc(spec.title) + "</div>" +
             '<div class="chart-scale">' + esc(spec.scale || "") + "</div>";
  // The scale is the data's meaning (0-100 %, 0 to the power limit, up to the thermal
  // thresholds, 0 to the memory's size): it grows only for readings beyond it, a grown edge
  // then rounded to a tick.
  let lo = spec.yMin, hi = spec.yMax, dataLo = Infinity, dataHi = -Infinity;
  for (const l of lines) for (const p of l.points) {
    dataLo = Math.min(dataLo, p[1]);
    dataHi = Math.max(dataHi, p[1]);
  }
  if (spec.grow && dataHi > hi * 1.01) hi = dataHi;
  for (const r of refs) hi = Math.max(hi, r.value);
  if (dataLo < lo) lo = dataLo;
  if (!(hi > lo)) hi = lo + 1;
  const step = niceStep(hi - lo, 4);
  if (lo < spec.yMin) lo = Math.floor(lo / step + 1e-9) * step;
  if (hi > spec.yMax) hi = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [lo];
  for (let v = Math.ceil(lo / step + 1e-9) * step; v < hi - 0.5 * step; v += step) {
    if (v > lo + 0.5 * step) ticks.push(v);
  }
  ticks.push(hi);
  // The window starts at the oldest point shown, at most five minutes back, so a daemon that
  // just started fills the chart instead of drawing a sliver at its right edge.
  let first = now;
  for (const l of lines) if (l.points.length) first = Math.min(first, l.points[0][0]);
  const span = Math.max(now - first, 10e9);
  const minutes = span >= 120e9;
  const x = t => LEFT + (t - (now - span)) / span * (W - LEFT - RIGHT);
  const y = v => TOP + (hi - Math.min(Math.max(v, lo), hi)) / (hi - lo) * (H - TOP - BOTTOM);
  let svg = '<svg class="plot" viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="' +
            esc(spec.title) + '">';
  for (const v of ticks) {
    svg += '<line class="grid" x1="' + LEFT + '" x2="' + (W - RIGHT) + '" y1="' + y(v) +
           '" y2="' + y(v) + '"/>' +
           '<text class="tick y' + (v === hi ? " top" : "") + '" x="' + (LEFT - 4) + '" y="' +
           (y(v) + 3) + '" text-anchor="end">' + String(Number(v.toPrecision(3))) + "</text>";
  }
  const xStep = minutes ? niceStep(span / 60e9, 4) * 60e9 : niceStep(span / 1e9, 4) * 1e9;
  for (let ago = 0; ago <= span + 1; ago += xStep) {
    const label = ago === 0 ? "now" : "-" + (minutes ? (ago / 60e9) : (ago / 1e9)).toFixed(0);
    svg += '<text class="tick x" x="' + x(now - ago) + '" y="' + (H - BOTTOM + 12) +
           '" text-anchor="middle">' + label + "</text>";
  }
  svg += '<line class="axis" x1="' + LEFT + '" x2="' + LEFT + '" y1="' + TOP + '" y2="' +
         (H - BOTTOM) + '"/><line class="axis" x1="' + LEFT + '" x2="' + (W - RIGHT) +
         '" y1="' + (H - BOTTOM) + '" y2="' + (H - BOTTOM) + '"/>';
  svg += '<text class="axis-label y" transform="translate(11 ' + ((TOP + H - BOTTOM) / 2) +
         ') rotate(-90)" text-anchor="middle">' + esc(spec.yLabel) + "</text>";
  svg += '<text class="axis-label x" x="' + ((LEFT + W - RIGHT) / 2) + '" y="' + (H - 4) +
         '" text-anchor="middle">time (' + (minutes ? "min" : "s") + " before now)</text>";
  for (const r of refs) {
    svg += '<line class="ref" stroke="' + r.color + '" stroke-dasharray="5 3" x1="' + LEFT +
           '" x2="' + (W - RIGHT) + '" y1="' + y(r.value) + '" y2="' + y(r.value) + '"/>';
  }
  for (const l of lines) {
    if (!l.points.length) continue;
    const pts = l.points.map(p => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" ");
    svg += '<polyline fill="none" stroke-width="1.5" stroke="' + l.color + '"' +
           (l.dashed ? ' stroke-dasharray="5 3"' : "") + ' points="' + pts + '"/>';
  }
  if (!any) {
    svg += '<text class="nodata-text" x="' + ((LEFT + W - RIGHT) / 2) + '" y="' +
           ((TOP + H - BOTTOM) / 2) + '" text-anchor="middle">' +
           esc(spec.empty || "no data yet") + "</text>";
  }
  svg += "</svg>";
  html += svg + '<ul class="legend">';
  for (const l of lines) {
    const v = last(l.points);
    html += '<li><span class="swatch' + (l.dashed ? " ref" : "") + '" style="border-color:' +
            l.color + '"></span>' + esc(l.label) +
            (v === null ? " (not reported)"
                        : " " + (l.format ? l.format(v) : v.toFixed(spec.decimals || 0) + " " +
                                                              spec.unit)) + "</li>";
  }
  for (const r of refs) {
    html += '<li><span class="swatch ref" style="border-color:' + r.color + '"></span>' +
            esc(r.label) + "</li>";
  }
  return html + "</ul>";
}

function scaled(points, factor) { return (points || []).map(p => [p[0], p[1] * factor]); }

// The charts of one device, from its series and its scales in the summary.
function deviceCharts(d, s) {
  const charts = [];
  const limits = d.temperature_limits || [];
  const top = limits.length ? limits[limits.length - 1].celsius + 5 : 100;
  const colors = {"max operating": "#e0a000", "slowdown": "#e06000", "shutdown": "#c00000",
                  "memory max": "#a0a0a0"};
  charts.push({key: "temp", title: "Temperature",
      scale: limits.length ? "thresholds as the device reports them"
                           : "no thresholds reported",
      yLabel: "temperature (\u00b0C)", unit: "\u00b0C", yMin: 20, yMax: top, grow: true,
      lines: [{label: "GPU", color: "#d9534f", points: s.temperature_gpu_celsius},
              {label: "memory", color: "#f0ad4e", points: s.temperature_memory_celsius}]
                 .filter(l => l.label === "GPU" || (l.points && l.points.length)),
      refs: limits.map(l => ({label: l.name + " " + l.celsius.toFixed(0) + " \u00b0C",
                              value: l.celsius, color: colors[l.name] || "#c00000"})),
      empty: "temperature not reported"});
  const limit = d.power_limit_watts;
  const maxLimit = d.power_limit_max_watts || limit;
  charts.push({key: "power", title: "Power",
      scale: maxLimit ? "0 to the highest limit allowed, " + maxLimit.toFixed(0) + " W"
                      : "no power limit reported",
      yLabel: "power (W)", unit: "W", yMin: 0, yMax: maxLimit || 100, grow: true,
      lines: [{label: "draw", color: "#5b6ee1", points: s.power_watts},
              {label: "enforced limit", color: "#c00000", dashed: true,
               points: s.power_limit_enforced_watts}],
      refs: [], empty: "power not reported"});
  charts.push({key: "util", title: "Utilisation", scale: "share of the sample period busy",
      yLabel: "busy (%)", unit: "%", yMin: 0, yMax: 100,
      lines: [{label: "GPU (a kernel ran)", color: "#2e8b57",
               points: scaled(s.utilization_ratio, 100)},
              {label: "memory interface", color: "#8fbc8f",
               points: scaled(s.memory_utilization_ratio, 100)}],
      empty: "utilisation not reported"});
  const total = d.memory_total_bytes;
  charts.push({key: "memory", title: "Memory",
      scale: total ? "0 to the device's " + formatGiB(total) : "total not reported",
      yLabel: "used (GiB)", unit: "GiB", decimals: 1, yMin: 0, yMax: total ? total / GiB : 1,
      grow: !total,
      lines: [{label: "used", color: "#17a2b8", points: scaled(s.memory_used_bytes, 1 / GiB)}],
      empty: "memory not reported"});
  charts.push({key: "link", title: "PCIe link utilisation",
      scale: d.pcie_link ? "of peak, " + d.pcie_link + " = " + d.pcie_peak
                         : "link generation and width not reported",
      yLabel: "of peak (%)", unit: "%", yMin: 0, yMax: 100,
      lines: [{label: "host to device (rx)", color: "#6f42c1",
               points: scaled(s.pcie_rx_link_utilization_ratio, 100)},
              {label: "device to host (tx)", color: "#c142a0",
               points: scaled(s.pcie_tx_link_utilization_ratio, 100)}],
      empty: d.pcie_link ? "PCIe throughput not reported" : "no link peak to compare with"});
  return charts;
}

function hostCharts(h, s) {
  const rx = s.host_network_receive_bytes_per_second || [];
  const tx = s.host_network_transmit_bytes_per_second || [];
  const rd = s.host_disk_read_bytes_per_second || [];
  const wr = s.host_disk_written_bytes_per_second || [];
  const rateChart = (key, title, scale, a, b, labels, empty) => {
    let peak = 0;
    for (const p of a.concat(b)) peak = Math.max(peak, p[1]);
    const [unit, div] = rateUnit(peak);
    return {key, title, scale, yLabel: "rate (" + unit + ")", unit, decimals: 1, yMin: 0,
            yMax: 1, grow: true,
            lines: [{label: labels[0], color: "#1f77b4", points: scaled(a, 1 / div),
                     format: v => formatRate(v * div)},
                    {label: labels[1], color: "#ff7f0e", points: scaled(b, 1 / div),
                     format: v => formatRate(v * div)}],
            empty};
  };
  const total = h && h.memory_total_bytes;
  return [
    {key: "cpu", title: "CPU busy",
     scale: h ? "all " + h.cpus + " CPUs, iowait as idle" : "",
     yLabel: "busy (%)", unit: "%", yMin: 0, yMax: 100,
     lines: [{label: "busy", color: "#2e8b57", points: scaled(s.host_cpu_busy_ratio, 100)}],
     empty: "needs two rounds"},
    {key: "memory", title: "Memory used",
     scale: total ? "MemTotal - MemAvailable, 0 to " + formatGiB(total) : "",
     yLabel: "used (GiB)", unit: "GiB", decimals: 1, yMin: 0, yMax: total ? total / GiB : 1,
     grow: !total,
     lines: [{label: "used", color: "#17a2b8", points: scaled(s.host_memory_used_bytes, 1 / GiB)}],
     empty: "/proc/meminfo not read"},
    rateChart("net", "Network",
              h && h.interfaces.length ? "summed over " + h.interfaces.join(", ") :
                                         "no interface but lo",
              rx, tx, ["received", "sent"],
              h && h.interfaces.length ? "needs two rounds" : "no network interface but lo"),
    rateChart("disk", "Disk",
              h && h.disks.length ? "summed over " + h.disks.join(", ") : "no disk",
              rd, wr, ["read", "written"],
              h && h.disks.length ? "needs two rounds" : "no block device"),
  ];
}

function tile(name, value) {
  return '<div class="tile"><div class="name">' + esc(name) + '</div><div class="value">' +
         esc(value) + "</div></div>";
}

function drawHost(summary, series, now) {
  const h = summary.host;
  const tiles = document.getElementById("host-tiles");
  const note = document.getElementById("host-note");
  if (!h) {
    tiles.innerHTML = tile("host", "not sampled by this daemon");
    note.textContent = "";
  } else {
    const pct = v => v === undefined ? "-" : (100 * v).toFixed(0) + " %";
    const rate = v => v === undefined ? "-" : formatRate(v);
    tiles.innerHTML =
        tile("CPU busy (" + h.cpus + " CPUs)", pct(h.cpu_busy_ratio)) +
        tile("memory used / total",
             h.memory_total_bytes === undefined ? "-" :
             formatGiB(h.memory_used_bytes || 0) + " / " + formatGiB(h.memory_total_bytes)) +
        tile("network received / sent",
             h.interfaces.length ? rate(h.network_receive_bytes_per_second) + " / " +
                                   rate(h.network_transmit_bytes_per_second)
                                 : "no interface but lo") +
        tile("disk read / written",
             h.disks.length ? rate(h.disk_read_bytes_per_second) + " / " +
                              rate(h.disk_written_bytes_per_second)
                            : "no disk");
    const out = h.interfaces_left_out.concat(h.disks_left_out);
    note.textContent = out.length ? "Not counted, so that no byte counts twice: " + out.join("; ") +
                                    "." : "";
  }
  const grid = document.getElementById("host-charts");
  let n = 0;
  for (const c of hostCharts(h, series)) {
    chartBox(grid, "host-" + c.key, c.key).innerHTML = chartHtml(c, now);
    ++n;
  }
  return n;
}

function chartBox(grid, id, key) {
  let cell = document.getElementById(id);
  if (!cell) {
    cell = document.createElement("div");
    cell.className = "chart";
    cell.id = id;
    cell.dataset.chart = key;
    grid.appendChild(cell);
  }
  return cell;
}

function deviceBox(id) {
  let box = document.getElementById("dev-" + id);
  if (box) return box;
  box = document.createElement("section");
  box.className = "device";
  box.id = "dev-" + id;
  box.innerHTML = '<h2></h2><div class="charts"></div>';
  document.getElementById("devices").appendChild(box);
  return box;
}

function explainNoDevice(summary) {
  const src = summary.sources;
  const panel = document.getElementById("no-device");
  const text = document.getElementById("no-device-text");
  if (!src) {
    text.innerHTML = "<p>This server samples no accelerator and did not say what it looked for.</p>";
  } else {
    let nvml;
    if (src.nvml === "off") {
      nvml = "not asked: NVML is off (<code>--nvml off</code>)";
    } else if (src.nvml === "on") {
      nvml = "loaded, but it lists no GPU";
    } else {
      nvml = esc(src.nvml);
    }
    text.innerHTML =
        "<p>acco serve found no accelerator to show. It looked for:</p><ul>" +
        "<li>NVIDIA GPUs through NVML (<code>" + esc(src.nvml_library) + "</code>): " + nvml +
        "</li><li>simulated devices: " +
        (src.simulated > 0 ? src.simulated : "none asked for (<code>--simulate 0</code>)") +
        "</li>" + (src.rapl ? "<li>CPU packages through RAPL (for the governor): none found</li>"
                            : "") +
        "</ul><p>To see devices here: install the NVIDIA driver, whose " +
        "<code>libnvidia-ml.so.1</code> is NVML (or name the library with " +
        "<code>--nvml-library PATH</code>), and restart acco serve; or try this page on " +
        "simulated devices with <code>acco serve --simulate 4</code>. " +
        (src.host ? "The host panel below is live either way." :
                    "The host is not sampled either.") + "</p>";
  }
  panel.hidden = false;
}

function shortNumber(v) {
  return typeof v === "number" && !Number.isInteger(v) ? String(Number(v.toPrecision(4))) : String(v);
}

function drawEvents(text) {
  const rows = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      rows.push(JSON.parse(line));
    } catch (e) {
      rows.push({time: "", level: "error", event: "unreadable", message: line.slice(0, 200)});
    }
  }
  rows.reverse();
  const body = document.querySelector("#events tbody");
  body.innerHTML = "";
  for (const e of rows.slice(0, MAX_EVENTS)) {
    const tr = document.createElement("tr");
    tr.className = "event sev-row-" + (e.level || "info");
    const numbers = Object.keys(e).filter(
        k => !["time", "level", "event", "device", "message"].includes(k));
    const time = String(e.time || "").replace("T", " ").replace("Z", "");
    tr.innerHTML = '<td class="time"></td><td><span class="sev"></span></td><td></td><td></td>' +
                   "<td></td>";
    const cells = tr.querySelectorAll("td");
    cells[0].textContent = time;
    const sev = cells[1].firstChild;
    sev.className = "sev sev-" + (e.level || "info");
    sev.textContent = e.level || "info";
    cells[2].textContent = e.device === undefined ? "-" : e.device;
    cells[3].textContent = e.event || "";
    cells[4].textContent = (e.message || "") +
        (numbers.length ? " (" + numbers.map(k => k + " " + shortNumber(e[k])).join(", ") + ")"
                        : "");
    body.appendChild(tr);
  }
  document.getElementById("events-empty").hidden = rows.length > 0;
  document.getElementById("events").hidden = rows.length === 0;
}

async function refresh() {
  const body = document.body;
  try {
    const [snap, summary] = await Promise.all(
        [getJson("/api/v1/snapshot"), getJson("/api/v1/summary")]);
    const now = snap.time_unix_nanos;
    const since = now - WINDOW_NS;
    const series = {};
    const names = summary.devices.length ? DEVICE_SERIES.concat(HOST_SERIES) : HOST_SERIES;
    await Promise.all(names.map(async n => {
      const r = await getJson("/api/v1/series?name=" + n + "&since=" + since);
      for (const s of r.series) (series[s.device] = series[s.device] || {})[n] = s.points;
    }));
    let deviceCount = 0;
    const shown = new Set();
    for (const d of summary.devices) {
      const box = deviceBox(d.device);
      shown.add(box.id);
      const h = box.querySelector("h2");
      h.textContent =
          "device " + d.device + ": " + d.model + (d.pci_bus_id ? " (" + d.pci_bus_id + ")" : "");
      if (d.state !== "ok") {
        h.insertAdjacentHTML("beforeend", '<span class="badge">' + esc(d.state) + "</span>");
      }
      const sample = snap.devices.find(x => x.device === d.device) || {};
      for (const e of (sample.clock_events || []).filter(e => e !== "gpu_idle")) {
        h.insertAdjacentHTML("beforeend", '<span class="badge">' + esc(e) + "</span>");
      }
      const grid = box.querySelector(".charts");
      for (const c of deviceCharts(d, series[d.device] || {})) {
        chartBox(grid, box.id + "-" + c.key, c.key).innerHTML = chartHtml(c, now);
        ++deviceCount;
      }
    }
    for (const box of [...document.querySelectorAll("section.device")]) {
      if (!shown.has(box.id)) box.remove();
    }
    if (summary.devices.length === 0) {
      explainNoDevice(summary);
    } else {
      document.getElementById("no-device").hidden = true;
    }
    const hostCount = drawHost(summary, series.host || {}, now);
    const s = snap.sampler;
    const src = summary.sources;
    document.getElementById("status").textContent =
        summary.devices.length + " device(s)" +
        (src ? " (NVML " + src.nvml.split(" ")[0] + ", " + src.simulated + " simulated)" : "") +
        ", sampled every " + s.interval_seconds + " s, round " + s.rounds + " at " + snap.time;
    const ev = await fetch("/api/v1/events?since=" + (now - EVENTS_WINDOW_NS), {cache: "no-store"});
    drawEvents(ev.ok ? await ev.text() : "");
    drawJobs(await getJson("/api/v1/placements"), now);
    if (Number(body.dataset.updates) % 10 === 0) {
      const f = await getJson("/api/v1/findings");
      const panel = document.getElementById("findings");
      if (f.findings === null) {
        panel.textContent = f.note || "not checked";
      } else if (f.findings.length === 0) {
        panel.textContent = "no finding (checked " + f.time + ")";
      } else {
        panel.innerHTML = "";
        for (const x of f.findings) {
          const line = document.createElement("div");
          line.className = "finding sev-" + x.severity;
          line.textContent = "[" + x.severity + "] " + x.rule + ": " + x.message;
          panel.appendChild(line);
        }
      }
    }
    body.dataset.devices = String(summary.devices.length);
    body.dataset.deviceCharts = String(deviceCount);
    body.dataset.hostCharts = String(hostCount);
    body.dataset.error = "";
  } catch (e) {
    body.dataset.error = String(e);
    document.getElementById("status").textContent = "cannot reach acco serve: " + e;
  }
  body.dataset.updates = String(Number(body.dataset.updates) + 1);
}

// The queue's queued and running jobs (what /metrics shows, without commands or environments).
function drawJobs(p, now) {
  document.getElementById("jobs-panel").hidden = !p.queue;
  const body = document.querySelector("#jobs tbody");
  body.innerHTML = "";
  for (const j of p.jobs) {
    const since = j.started_unix_nanos > 0 ? ((now - j.started_unix_nanos) / 1e9).toFixed(0) + " s" : "-";
    const row = document.createElement("tr");
    row.innerHTML = "<td>" + esc(j.id) + "</td><td>" + esc(j.name) + "</td><td>" + esc(j.state) +
        "</td><td>" + esc(j.devices.join(", ") || "-") + "</td><td class=\"time\">" + esc(since) +
        "</td><td>" + esc(j.state === "running" ? j.placement : j.reason) + "</td>";
    body.appendChild(row);
  }
  document.getElementById("jobs-empty").hidden = p.jobs.length > 0;
  document.body.dataset.jobs = String(p.jobs.length);
}

if (window.accoScriptErrors.length) {
  document.body.dataset.scriptErrors = window.accoScriptErrors.join(" | ");
}
refresh();
setInterval(refresh, 1000);
</script>
</body>
</html>
)html";

}  // namespace

std::string_view dashboard_html() {
  return kPage;
}

}  // namespace acco::monitor
