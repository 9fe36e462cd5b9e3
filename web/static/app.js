// Lorebase web UI: the pages work without this script; it adds the
// interactive graph, live branch job and Domain deletion progress and
// confirmations.
"use strict";

// Main-thread blocks longer than 50 ms, for the performance test.
window.__longtasks = [];
window.__longtaskStarts = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) { window.__longtasks.push(e.duration); window.__longtaskStarts.push(Math.round(e.startTime), Math.round(e.duration)); }
  }).observe({ type: "longtask", buffered: true });
} catch (_) { /* browsers without longtask timing */ }
// Long animation frames (over 50 ms) with what filled them: script (by
// source and entry point), style and layout, rendering.
window.__loafs = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      window.__loafs.push({
        start: Math.round(e.startTime), duration: Math.round(e.duration), blocking: Math.round(e.blockingDuration),
        render: e.renderStart ? Math.round(e.startTime + e.duration - e.renderStart) : 0,
        style: e.styleAndLayoutStart ? Math.round(e.startTime + e.duration - e.styleAndLayoutStart) : 0,
        scripts: e.scripts.map((s) => ({ what: s.invoker || s.invokerType, src: (s.sourceURL || "").replace(/^.*\//, ""), ms: Math.round(s.duration), layout: Math.round(s.forcedStyleAndLayoutDuration) })),
      });
    }
  }).observe({ type: "long-animation-frame", buffered: true });
} catch (_) { /* browsers without long animation frame timing */ }

document.addEventListener("submit", (e) => {
  const msg = e.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) e.preventDefault();
});

document.addEventListener("DOMContentLoaded", () => {
  liveBranches();
  liveDomains();
  const g = document.getElementById("graph");
  if (g) window.__graph = new Graph(g);
});

// liveBranches refreshes the state and job columns while a branch job runs.
function liveBranches() {
  const table = document.querySelector("table[data-live]");
  if (!table) return;
  // Busy while a branch is not ready or one of its Kinds re-embeds.
  const busy = () => Array.from(table.querySelectorAll("td.state")).some((td) => td.textContent.trim() !== "ready") ||
    table.querySelector('.reembed[data-state="queued"], .reembed[data-state="running"]') !== null;
  if (!busy()) return;
  const timer = setInterval(async () => {
    let data;
    try {
      const r = await fetch(table.getAttribute("data-live"), { credentials: "same-origin" });
      if (!r.ok) { clearInterval(timer); return; }
      data = await r.json();
    } catch (_) { return; }
    for (const b of data.branches || []) {
      const row = table.querySelector('tr[data-branch="' + CSS.escape(b.name) + '"]');
      if (!row) continue;
      row.querySelector("td.state").textContent = b.state;
      const cell = row.querySelector("td.job");
      let job = "";
      if (b.job) job = b.job.kind + " " + b.job.state + (b.job.last_error ? " — " + b.job.last_error : "");
      const progress = Object.assign({}, b.progress || {});
      const embedding = progress.embedding || {};
      delete progress.embedding;
      if (Object.keys(progress).length > 0) job += " " + JSON.stringify(progress);
      cell.textContent = job;
      // One line per Kind being re-embedded, as the page renders it.
      for (const kind of Object.keys(embedding).sort()) {
        const e = embedding[kind];
        const span = document.createElement("span");
        span.className = "reembed";
        span.dataset.state = e.state;
        span.textContent = "re-embedding " + e.kind + " (" + e.model + "): " + e.state + ", " + e.embedded + " of about " + e.total_estimate;
        cell.append(" ", span);
      }
    }
    if (!busy()) clearInterval(timer);
  }, 1000);
}

// liveDomains refreshes the Domains page while a Domain is being deleted:
// its job and progress, as the page renders them, and the row removed once
// the Domain is gone.
function liveDomains() {
  const table = document.querySelector("table[data-live-domains]");
  if (!table) return;
  const busy = () => Array.from(table.querySelectorAll("td.state")).some((td) => td.textContent.trim() === "deleting");
  if (!busy()) return;
  const timer = setInterval(async () => {
    let data;
    try {
      const r = await fetch(table.getAttribute("data-live-domains"), { credentials: "same-origin" });
      if (!r.ok) { clearInterval(timer); return; }
      data = await r.json();
    } catch (_) { return; }
    const byName = new Map((data.domains || []).map((d) => [d.name, d]));
    for (const row of Array.from(table.querySelectorAll("tr[data-domain]"))) {
      const d = byName.get(row.dataset.domain);
      if (!d) { row.remove(); continue; }
      row.querySelector("td.state").textContent = d.state;
      if (d.state !== "deleting") continue;
      const cell = row.querySelector("td.job");
      let job = "";
      if (d.job) job = d.job.kind + " " + d.job.state + (d.job.attempt > 1 ? " (attempt " + d.job.attempt + ")" : "") + (d.job.last_error ? " — " + d.job.last_error : "");
      cell.textContent = job;
      if (d.progress) {
        const p = d.progress;
        const span = document.createElement("span");
        span.className = "progress";
        span.textContent = p.tables ? p.tables_done + " of " + p.tables + " tables emptied, " + p.rows + " rows deleted" + (p.phase ? ", now " + p.phase : "") : "starting";
        cell.append(" ", span);
      }
    }
    if (!busy()) clearInterval(timer);
  }, 1000);
}

const palette = ["#0b57d0", "#c5221f", "#188038", "#b06000", "#8430ce", "#007b83", "#c2185b", "#5f6368", "#795548", "#3f51b5"];

// Graph is the page's side of the neighborhood graph: it holds the
// Records and Links, handles the pointer and keyboard, and keeps the view
// (zoom, pan, selection). Layout and painting run in graph-worker.js, on
// the canvas handed over to it; this thread paints only the first frame
// once (paintFirst), while the worker starts.
class Graph {
  constructor(root) {
    this.root = root;
    root.hidden = false;
    this.canvas = root.querySelector("#graph-canvas");
    // The first frame is painted here, under the worker's canvas, while
    // the worker starts; it is hidden once the worker has painted.
    this.first = root.querySelector("#graph-first");
    this.status = root.querySelector("#graph-status");
    this.src = root.dataset.src;
    this.branch = root.dataset.branch;
    this.records = root.dataset.records;
    this.nodes = []; // {key, kind, title}
    this.index = new Map(); // key -> node index
    this.links = []; // {a, b, relation}
    this.linkSet = new Set();
    this.kinds = new Map();
    this.pos = new Float32Array(0);
    this.scale = 1; this.tx = 0; this.ty = 0;
    this.selected = -1; this.hover = -1;
    this.held = null; // {i, x, y}: the node being dragged, where the pointer holds it
    window.__graphStats = { nodes: 0, links: 0, firstDraw: 0, workerDraw: 0, settled: 0, expanded: 0, frames: 0, maxDraw: 0 };
    if (!this.canvas.transferControlToOffscreen || typeof Worker === "undefined") {
      this.status.textContent = "This browser cannot draw the graph; the list below holds the same Records.";
      return;
    }
    this.worker = new Worker("/static/graph-worker.js");
    this.worker.onmessage = (e) => this.message(e.data);
    this.measure();
    const off = this.canvas.transferControlToOffscreen();
    this.worker.postMessage({ type: "canvas", canvas: off, w: this.w, h: this.h, dpr: this.dpr }, [off]);
    this.bind();
    new ResizeObserver(() => { if (this.measure()) this.worker.postMessage({ type: "size", w: this.w, h: this.h, dpr: this.dpr }); }).observe(this.canvas.parentElement);
    const embedded = document.getElementById("graph-data");
    if (embedded) this.show(root.dataset.key, JSON.parse(embedded.textContent), true);
    else this.load(root.dataset.key, root.dataset.depth, root.dataset.limit, true);
  }

  message(m) {
    const st = window.__graphStats;
    if (m.type === "drawn") {
      st.frames++;
      if (m.took > st.maxDraw) st.maxDraw = m.took;
      // Only a paint of the graph counts (the worker also paints the empty
      // canvas it is handed).
      if (m.nodes === 0) return;
      if (!st.firstDraw) st.firstDraw = m.at - performance.timeOrigin;
      if (!st.workerDraw) st.workerDraw = m.at - performance.timeOrigin;
      if (this.first && st.workerDraw) { this.first.remove(); this.first = null; }
      return;
    }
    if (m.type !== "positions") return;
    this.pos = m.positions;
    // A node being dragged stays under the pointer: these positions may
    // predate the worker's reading of its latest pin.
    if (this.held) { this.pos[2 * this.held.i] = this.held.x; this.pos[2 * this.held.i + 1] = this.held.y; }
    if (m.done) {
      if (!st.settled) st.settled = performance.now();
      if (!this.touched) this.fitBounds();
    }
  }

  // measure reads the canvas's size; true when it changed.
  measure() {
    const r = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const changed = r.width !== this.w || r.height !== this.h || dpr !== this.dpr;
    this.w = r.width; this.h = r.height; this.dpr = dpr;
    return changed;
  }

  // view sends the zoom, pan and selection to the worker, which paints.
  view() {
    this.worker.postMessage({ type: "view", scale: this.scale, tx: this.tx, ty: this.ty, selected: this.selected, hover: this.hover });
  }

  url(key, depth, limit) {
    const q = new URLSearchParams({ key: key, depth: depth, limit: limit });
    if (this.branch && this.branch !== "main") q.set("b", this.branch);
    return this.src + "?" + q.toString();
  }

  recordURL(key) {
    let u = this.records + encodeURIComponent(key);
    if (this.branch && this.branch !== "main") u += "?b=" + encodeURIComponent(this.branch);
    return u;
  }

  async load(key, depth, limit, first) {
    this.status.textContent = "Loading " + key + "…";
    let data;
    try {
      const r = await fetch(this.url(key, depth, limit), { credentials: "same-origin" });
      data = await r.json();
      if (!r.ok) { this.status.textContent = "Could not load the neighborhood: " + (data.detail || r.status); return; }
    } catch (err) {
      this.status.textContent = "Could not load the neighborhood: " + err;
      return;
    }
    this.show(key, data, first);
  }

  show(key, data, first) {
    const around = first ? -1 : this.index.get(key);
    const cx = around >= 0 ? this.pos[2 * around] : 0, cy = around >= 0 ? this.pos[2 * around + 1] : 0;
    const start = this.nodes.length;
    for (const r of data.records || []) this.addNode(r);
    for (const l of data.links || []) this.addLink(l);
    const added = this.nodes.length - start;
    const nx = new Float32Array(added), ny = new Float32Array(added);
    for (let i = 0; i < added; i++) {
      // Phyllotaxis: a spread-out first layout, drawn at once.
      const r = 12 * Math.sqrt(0.5 + i + (first ? 0 : 3)), a = i * Math.PI * (3 - Math.sqrt(5));
      nx[i] = cx + r * Math.cos(a); ny[i] = cy + r * Math.sin(a);
    }
    const pos = new Float32Array(this.nodes.length * 2);
    pos.set(this.pos.subarray(0, start * 2));
    for (let i = 0; i < added; i++) { pos[2 * (start + i)] = nx[i]; pos[2 * (start + i) + 1] = ny[i]; }
    this.pos = pos;
    const src = new Int32Array(this.links.length), dst = new Int32Array(this.links.length);
    this.links.forEach((l, i) => { src[i] = l.a; dst[i] = l.b; });
    if (first) this.fit();
    if (this.selected < 0) this.select(this.index.get(key)); // sends the view before the graph
    const fresh = this.nodes.slice(start);
    const msg = {
      type: first ? "init" : "add", n: this.nodes.length, x: nx, y: ny, src: src, dst: dst,
      titles: fresh.map((d) => d.title), colours: fresh.map((d) => this.kinds.get(d.kind)),
      relations: this.links.map((l) => l.relation),
    };
    // The first paint runs in the next animation frame, a task of its own
    // (on copies: the worker is handed the arrays).
    if (first) {
      const copy = Object.assign({}, msg, { x: nx.slice(), y: ny.slice(), src: src.slice(), dst: dst.slice() });
      requestAnimationFrame(() => this.paintFirst(copy));
    }
    this.worker.postMessage(msg, [nx.buffer, ny.buffer, src.buffer, dst.buffer]);
    if (!first) window.__graphStats.expanded += added;
    window.__graphStats.nodes = this.nodes.length;
    window.__graphStats.links = this.links.length;
    this.status.textContent = this.nodes.length + " Records, " + this.links.length + " Links. Drag nodes, scroll to zoom, drag the background to pan; click a node to select it, double-click to expand it.";
    this.legend();
  }

  // paintFirst paints the first layout on the canvas under the worker's,
  // at once, with the worker's own paint code.
  paintFirst(msg) {
    if (!this.first || window.__graphStats.workerDraw || typeof paintGraph !== "function") return;
    const cw = Math.max(1, Math.round(this.w * this.dpr)), ch = Math.max(1, Math.round(this.h * this.dpr));
    this.first.width = cw; this.first.height = ch;
    const colourList = [...new Set(msg.colours)];
    paintGraph(this.first.getContext("2d"), { n: msg.n, x: msg.x, y: msg.y, src: msg.src, dst: msg.dst, titles: msg.titles,
      colours: msg.colours, colourList: colourList, relations: msg.relations, width: this.w, height: this.h, dpr: this.dpr,
      scale: this.scale, tx: this.tx, ty: this.ty, selected: this.selected, hover: -1 });
    // The first draw is when the frame holding this paint was rendered:
    // the task after this animation frame.
    if (msg.n > 0) setTimeout(() => { if (!window.__graphStats.firstDraw) window.__graphStats.firstDraw = performance.now(); }, 0);
  }

  addNode(r) {
    if (this.index.has(r.key)) return;
    if (!this.kinds.has(r.kind)) this.kinds.set(r.kind, palette[this.kinds.size % palette.length]);
    this.index.set(r.key, this.nodes.length);
    this.nodes.push({ key: r.key, kind: r.kind, title: r.title || r.key });
  }

  addLink(l) {
    const a = this.index.get(l.from), b = this.index.get(l.to);
    if (a === undefined || b === undefined) return;
    const id = l.relation + "\u0000" + l.from + "\u0000" + l.to;
    if (this.linkSet.has(id)) return;
    this.linkSet.add(id);
    this.links.push({ a: a, b: b, relation: l.relation });
  }

  legend() {
    const ul = this.root.querySelector("#graph-legend");
    ul.textContent = "";
    for (const [kind, colour] of this.kinds) {
      const li = document.createElement("li");
      const dot = document.createElement("i");
      dot.style.background = colour;
      li.append(dot, document.createTextNode(kind));
      ul.append(li);
    }
  }

  fit() {
    const n = this.nodes.length;
    const radius = 12 * Math.sqrt(n + 1) + 40;
    this.scale = Math.min(2, Math.max(0.15, Math.min(this.w, this.h) / (2 * radius)));
    this.tx = this.w / 2; this.ty = this.h / 2;
  }

  // fitBounds frames the settled layout, unless the person zoomed or
  // panned meanwhile.
  fitBounds() {
    const n = this.nodes.length, p = this.pos;
    if (!n || p.length < 2 * n) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < n; i++) {
      x0 = Math.min(x0, p[2 * i]); x1 = Math.max(x1, p[2 * i]);
      y0 = Math.min(y0, p[2 * i + 1]); y1 = Math.max(y1, p[2 * i + 1]);
    }
    const pad = 30;
    this.scale = Math.min(2, Math.max(0.05, Math.min((this.w - 2 * pad) / Math.max(1, x1 - x0), (this.h - 2 * pad) / Math.max(1, y1 - y0))));
    this.tx = this.w / 2 - (x0 + x1) / 2 * this.scale;
    this.ty = this.h / 2 - (y0 + y1) / 2 * this.scale;
    this.view();
  }

  toWorld(px, py) { return [(px - this.tx) / this.scale, (py - this.ty) / this.scale]; }

  nodeAt(px, py) {
    const [wx, wy] = this.toWorld(px, py);
    const r = Math.max(7, 9 / this.scale);
    let best = -1, bd = r * r;
    for (let i = 0; i < this.nodes.length; i++) {
      const dx = this.pos[2 * i] - wx, dy = this.pos[2 * i + 1] - wy, d = dx * dx + dy * dy;
      if (d < bd) { bd = d; best = i; }
    }
    return best;
  }

  select(i) {
    this.selected = i === undefined ? -1 : i;
    const box = this.root.querySelector("#graph-selected");
    if (this.selected < 0) { box.hidden = true; this.view(); return; }
    const node = this.nodes[this.selected];
    box.hidden = false;
    this.root.querySelector("#sel-title").textContent = node.title;
    this.root.querySelector("#sel-key").textContent = node.key;
    this.root.querySelector("#sel-kind").textContent = node.kind;
    this.root.querySelector("#sel-open").href = this.recordURL(node.key);
    this.view();
  }

  expand(i) {
    if (i < 0) return;
    this.load(this.nodes[i].key, 1, 200, false);
  }

  bind() {
    const cv = this.canvas;
    let drag = null; // {mode: "node"|"pan", i, x, y, moved}
    const pt = (e) => { const r = cv.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    cv.addEventListener("pointerdown", (e) => {
      const [px, py] = pt(e);
      const i = this.nodeAt(px, py);
      drag = { mode: i >= 0 ? "node" : "pan", i: i, x: px, y: py, moved: false };
      cv.setPointerCapture(e.pointerId);
    });
    cv.addEventListener("pointermove", (e) => {
      const [px, py] = pt(e);
      if (!drag) {
        const h = this.nodeAt(px, py);
        if (h !== this.hover) { this.hover = h; cv.style.cursor = h >= 0 ? "pointer" : "grab"; this.view(); }
        return;
      }
      if (Math.abs(px - drag.x) + Math.abs(py - drag.y) > 3) drag.moved = true;
      if (!drag.moved) return;
      this.touched = true;
      if (drag.mode === "pan") {
        this.tx += px - drag.x; this.ty += py - drag.y; drag.x = px; drag.y = py;
        this.view();
      } else {
        const [wx, wy] = this.toWorld(px, py);
        this.pos[2 * drag.i] = wx; this.pos[2 * drag.i + 1] = wy;
        this.held = { i: drag.i, x: wx, y: wy };
        this.worker.postMessage({ type: "pin", i: drag.i, x: wx, y: wy });
      }
    });
    cv.addEventListener("pointerup", () => {
      this.held = null;
      if (drag && drag.mode === "node") {
        if (drag.moved) this.worker.postMessage({ type: "release", i: drag.i });
        else this.select(drag.i);
      } else if (drag && !drag.moved) this.select(-1);
      drag = null;
    });
    cv.addEventListener("dblclick", (e) => {
      const [px, py] = pt(e);
      const i = this.nodeAt(px, py);
      if (i >= 0) this.expand(i);
    });
    cv.addEventListener("wheel", (e) => {
      e.preventDefault();
      const [px, py] = pt(e);
      this.zoom(Math.exp(-e.deltaY * 0.0015), px, py);
    }, { passive: false });
    cv.addEventListener("keydown", (e) => {
      const n = this.nodes.length;
      if (!n) return;
      switch (e.key) {
        case "ArrowRight": case "ArrowDown": this.select((this.selected + 1) % n); break;
        case "ArrowLeft": case "ArrowUp": this.select((this.selected - 1 + n) % n); break;
        case "Enter": if (this.selected >= 0) window.location.href = this.recordURL(this.nodes[this.selected].key); break;
        case "e": case "E": this.expand(this.selected); break;
        case "+": case "=": this.zoom(1.25, this.w / 2, this.h / 2); break;
        case "-": this.zoom(0.8, this.w / 2, this.h / 2); break;
        default: return;
      }
      e.preventDefault();
    });
    this.root.querySelector("#sel-expand").addEventListener("click", () => this.expand(this.selected));
  }

  zoom(f, px, py) {
    this.touched = true;
    const s = Math.min(8, Math.max(0.05, this.scale * f));
    f = s / this.scale;
    this.tx = px - (px - this.tx) * f; this.ty = py - (py - this.ty) * f;
    this.scale = s;
    this.view();
  }
}
