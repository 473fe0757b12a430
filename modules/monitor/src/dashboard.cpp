#include "acco/monitor/dashboard.hpp"

namespace acco::monitor {
namespace {

// The page's state for tests is in <body data-...>: data-updates counts completed refreshes,
// data-charts the charts drawn in the latest one, data-error the last failure ("" when none).
constexpr std::string_view kPage = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>acco serve</title>
<style>
  body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; background: #fafafa; color: #222; }
  h1 { font-size: 18px; margin: 0 0 4px; }
  #status { color: #666; margin-bottom: 12px; }
  .device { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px;
            margin-bottom: 12px; }
  .device h2 { font-size: 14px; margin: 0 0 6px; }
  .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr));
            gap: 8px; }
  .chart { border: 1px solid #eee; border-radius: 4px; padding: 4px; }
  .chart .title { font-size: 12px; color: #444; }
  .chart .now { float: right; font-variant-numeric: tabular-nums; }
  canvas { width: 100%; height: 110px; display: block; }
  .badge { display: inline-block; padding: 0 6px; border-radius: 8px; background: #fde2e2;
           color: #a33; margin-left: 4px; font-size: 11px; }
  .panel { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px;
           font-size: 12px; }
  .sev-critical { color: #a00; font-weight: bold; } .sev-warning { color: #b60; }
  .sev-info { color: #555; }
  #events { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px;
            font-family: ui-monospace, monospace; font-size: 12px; max-height: 240px;
            overflow: auto; white-space: pre; }
</style>
</head>
<body data-updates="0" data-charts="0" data-error="">
<h1>acco serve</h1>
<div id="status">loading...</div>
<div id="devices"></div>
<h2 style="font-size:14px">Findings of the probe</h2>
<div id="findings" class="panel">not checked yet</div>
<h2 style="font-size:14px">Recent events</h2>
<div id="events">none yet</div>
<script>
"use strict";
const WINDOW_NS = 5 * 60 * 1e9;  // the last five minutes
const CHARTS = [
  {key: "temp", title: "Temperature", unit: "\u00b0C",
   series: [{name: "temperature_gpu_celsius", color: "#d9534f", label: "gpu"},
            {name: "temperature_memory_celsius", color: "#f0ad4e", label: "memory"}],
   limits: ["threshold_gpu_max_celsius", "threshold_slowdown_celsius"]},
  {key: "power", title: "Power against the enforced limit", unit: "W",
   series: [{name: "power_watts", color: "#5b6ee1", label: "power"}],
   limits: ["power_limit_enforced_watts"]},
  {key: "util", title: "Utilization", unit: "%", scale: 100, max: 100,
   series: [{name: "utilization_ratio", color: "#2e8b57", label: "gpu"},
            {name: "memory_utilization_ratio", color: "#8fbc8f", label: "memory"}]},
  {key: "link", title: "PCIe link utilization against peak", unit: "%", scale: 100, max: 100,
   series: [{name: "pcie_rx_link_utilization_ratio", color: "#6f42c1", label: "rx"},
            {name: "pcie_tx_link_utilization_ratio", color: "#c142a0", label: "tx"}]},
];
const names = new Set();
for (const c of CHARTS) {
  for (const s of c.series) names.add(s.name);
  for (const l of (c.limits || [])) names.add(l);
}

async function getJson(url) {
  const r = await fetch(url, {cache: "no-store"});
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r.json();
}

function deviceBox(id, title) {
  let box = document.getElementById("dev-" + id);
  if (box) return box;
  box = document.createElement("div");
  box.className = "device";
  box.id = "dev-" + id;
  const h = document.createElement("h2");
  box.appendChild(h);
  const grid = document.createElement("div");
  grid.className = "charts";
  for (const c of CHARTS) {
    const cell = document.createElement("div");
    cell.className = "chart";
    cell.innerHTML = '<span class="title"></span><span class="now"></span>';
    cell.querySelector(".title").textContent = c.title;
    const canvas = document.createElement("canvas");
    canvas.dataset.chart = c.key;
    cell.appendChild(canvas);
    grid.appendChild(cell);
  }
  box.appendChild(grid);
  document.getElementById("devices").appendChild(box);
  return box;
}

function draw(canvas, chart, data, now) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 260, h = canvas.clientHeight || 110;
  canvas.width = w * ratio;
  canvas.height = h * ratio;
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  g.clearRect(0, 0, w, h);
  const scale = chart.scale || 1;
  let lo = 0, hi = chart.max || 0;
  const lines = [];
  for (const s of chart.series) {
    const pts = (data[s.name] || []).map(p => [p[0], p[1] * scale]);
    for (const p of pts) hi = Math.max(hi, p[1]);
    lines.push({pts, color: s.color, label: s.label});
  }
  const limits = [];
  for (const l of (chart.limits || [])) {
    const pts = data[l] || [];
    if (pts.length) {
      const v = pts[pts.length - 1][1] * scale;
      limits.push(v);
      hi = Math.max(hi, v);
    }
  }
  if (hi <= lo) hi = lo + 1;
  hi *= 1.05;
  // The window starts at the oldest point shown, at most five minutes back, so a daemon that
  // just started fills the chart instead of drawing a sliver at its right edge.
  let first = now;
  for (const line of lines) if (line.pts.length) first = Math.min(first, line.pts[0][0]);
  const span = Math.max(now - first, 10e9);
  const x = t => (t - (now - span)) / span * (w - 30) + 28;
  const y = v => h - 14 - (v - lo) / (hi - lo) * (h - 20);
  g.strokeStyle = "#ccc";
  g.beginPath(); g.moveTo(28, 4); g.lineTo(28, h - 14); g.lineTo(w - 2, h - 14); g.stroke();
  g.fillStyle = "#888";
  g.font = "10px sans-serif";
  g.fillText(Math.round(hi) + "", 0, 12);
  g.fillText("0", 16, h - 14);
  g.fillText(span >= 60e9 ? "-" + Math.round(span / 60e9) + " min" : "-" + Math.round(span / 1e9) + " s",
             28, h - 2);
  for (const v of limits) {
    g.strokeStyle = "#d33";
    g.setLineDash([4, 3]);
    g.beginPath(); g.moveTo(28, y(v)); g.lineTo(w - 2, y(v)); g.stroke();
    g.setLineDash([]);
  }
  for (const line of lines) {
    if (!line.pts.length) continue;
    g.strokeStyle = line.color;
    g.lineWidth = 1.5;
    g.beginPath();
    line.pts.forEach((p, i) => (i ? g.lineTo(x(p[0]), y(p[1])) : g.moveTo(x(p[0]), y(p[1]))));
    g.stroke();
  }
  const last = lines.filter(l => l.pts.length).map(
      l => l.label + " " + l.pts[l.pts.length - 1][1].toFixed(chart.scale ? 0 : 1) + " " + chart.unit);
  return last.join(", ");
}

async function refresh() {
  const body = document.body;
  try {
    const snap = await getJson("/api/v1/snapshot");
    const now = snap.time_unix_nanos;
    const since = now - WINDOW_NS;
    const series = {};
    await Promise.all([...names].map(async n => {
      const r = await getJson("/api/v1/series?name=" + n + "&since=" + since);
      for (const s of r.series) (series[s.device] = series[s.device] || {})[n] = s.points;
    }));
    let charts = 0;
    for (const d of snap.devices) {
      const box = deviceBox(d.device, d.model);
      const events = (d.clock_events || []).filter(e => e !== "gpu_idle");
      box.querySelector("h2").innerHTML = "";
      box.querySelector("h2").textContent =
          "device " + d.device + ": " + d.model + (d.pci_bus_id ? " (" + d.pci_bus_id + ")" : "");
      if (d.lost) box.querySelector("h2").insertAdjacentHTML("beforeend", '<span class="badge">lost</span>');
      for (const e of events) {
        const b = document.createElement("span");
        b.className = "badge";
        b.textContent = e;
        box.querySelector("h2").appendChild(b);
      }
      for (const c of CHARTS) {
        const canvas = box.querySelector('canvas[data-chart="' + c.key + '"]');
        const text = draw(canvas, c, series[d.device] || {}, now);
        canvas.parentElement.querySelector(".now").textContent = text;
        charts++;
      }
    }
    const s = snap.sampler;
    document.getElementById("status").textContent =
        snap.devices.length + " device(s), sampled every " + s.interval_seconds + " s, round " +
        s.rounds + " at " + snap.time;
    const ev = await fetch("/api/v1/events?since=" + since, {cache: "no-store"});
    const text = ev.ok ? (await ev.text()).trim() : "";
    document.getElementById("events").textContent =
        text ? text.split("\n").slice(-50).reverse().join("\n") : "none yet";
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
          line.className = "sev-" + x.severity;
          line.textContent = "[" + x.severity + "] " + x.rule + ": " + x.message;
          panel.appendChild(line);
        }
      }
    }
    body.dataset.charts = String(charts);
    body.dataset.error = "";
  } catch (e) {
    body.dataset.error = String(e);
    document.getElementById("status").textContent = "cannot reach acco serve: " + e;
  }
  body.dataset.updates = String(Number(body.dataset.updates) + 1);
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
