// The neighborhood graph's layout and drawing, off the main thread. The
// page hands this worker its canvas (an OffscreenCanvas) and posts the
// graph, the view (zoom, pan, selection) and drags; the worker runs a
// force layout in short batches, paints at most once an animation frame
// and posts node positions (x, y pairs in a Float32Array) back for hit
// testing. The page's own thread paints only the first frame, once, while
// this worker starts.
"use strict";

importScripts("graph-paint.js");

let n = 0;
let x = new Float32Array(0), y = new Float32Array(0);
let vx = new Float32Array(0), vy = new Float32Array(0);
let pinned = new Uint8Array(0);
let src = new Int32Array(0), dst = new Int32Array(0);
let degree = new Float32Array(0);
let alpha = 1;
let running = false;

// Drawing state: node titles and colours, Link relations, the view.
let canvas = null, ctx = null;
let width = 1, height = 1, dpr = 1;
let scale = 1, tx = 0, ty = 0, selected = -1, hover = -1;
let titles = [], colours = [], relations = [];
let colourList = []; // the distinct colours
let dirty = false, framePending = false;

const alphaMin = 0.004, alphaDecay = 0.0228, velocityDecay = 0.6;
const linkDistance = 42, charge = -60, gravity = 0.02;

function grow(size) {
  const nx = new Float32Array(size), ny = new Float32Array(size);
  const nvx = new Float32Array(size), nvy = new Float32Array(size);
  const np = new Uint8Array(size);
  nx.set(x.subarray(0, n)); ny.set(y.subarray(0, n));
  nvx.set(vx.subarray(0, n)); nvy.set(vy.subarray(0, n)); np.set(pinned.subarray(0, n));
  x = nx; y = ny; vx = nvx; vy = nvy; pinned = np;
}

function setLinks(s, d) {
  src = s; dst = d;
  degree = new Float32Array(n);
  for (let i = 0; i < src.length; i++) { degree[src[i]]++; degree[dst[i]]++; }
}

function tick() {
  // Repulsion between every pair (n is at most a few thousand).
  for (let i = 0; i < n; i++) {
    const xi = x[i], yi = y[i];
    let fx = 0, fy = 0;
    for (let j = i + 1; j < n; j++) {
      let dx = xi - x[j], dy = yi - y[j];
      let d2 = dx * dx + dy * dy;
      if (d2 < 1) { dx = (i - j) * 0.01 + 0.5; dy = 0.5; d2 = 1; }
      if (d2 > 90000) continue;
      const f = -charge * alpha / d2;
      fx += dx * f; fy += dy * f;
      vx[j] -= dx * f; vy[j] -= dy * f;
    }
    vx[i] += fx; vy[i] += fy;
  }
  // Springs along the Links.
  for (let k = 0; k < src.length; k++) {
    const a = src[k], b = dst[k];
    if (a === b) continue;
    let dx = x[b] + vx[b] - x[a] - vx[a], dy = y[b] + vy[b] - y[a] - vy[a];
    let l = Math.sqrt(dx * dx + dy * dy) || 1;
    const s = 1 / Math.min(degree[a], degree[b]);
    l = (l - linkDistance) / l * alpha * s;
    dx *= l; dy *= l;
    const wb = degree[a] / (degree[a] + degree[b]);
    vx[b] -= dx * wb; vy[b] -= dy * wb;
    vx[a] += dx * (1 - wb); vy[a] += dy * (1 - wb);
  }
  for (let i = 0; i < n; i++) {
    if (pinned[i]) { vx[i] = 0; vy[i] = 0; continue; }
    vx[i] -= x[i] * gravity * alpha; vy[i] -= y[i] * gravity * alpha;
    vx[i] *= velocityDecay; vy[i] *= velocityDecay;
    x[i] += vx[i]; y[i] += vy[i];
  }
  alpha += (0 - alpha) * alphaDecay;
}

// post sends the positions to the page (transferred, not copied).
function post(done) {
  const out = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) { out[2 * i] = x[i]; out[2 * i + 1] = y[i]; }
  self.postMessage({ type: "positions", positions: out, alpha: alpha, done: done }, [out.buffer]);
}

// run does ticks for at most ~8 ms, posts, asks for a paint and rests as
// long again: drag messages are seen between batches, and on a machine
// with few cores the page's own thread keeps its share.
function run() {
  if (!running) return;
  const start = performance.now();
  do { tick(); } while (alpha > alphaMin && performance.now() - start < 8);
  const done = alpha <= alphaMin;
  post(done);
  invalidate();
  if (done) { running = false; return; }
  setTimeout(run, 8);
}

function start(a) {
  alpha = Math.max(alpha, a);
  if (!running) { running = true; setTimeout(run, 0); }
}

// invalidate asks for one paint at the next animation frame: any number
// of changes between two frames cost one paint.
function invalidate() {
  dirty = true;
  if (framePending || !ctx) return;
  framePending = true;
  if (self.requestAnimationFrame) self.requestAnimationFrame(frame);
  else setTimeout(frame, 16);
}

function frame() {
  framePending = false;
  if (!dirty) return;
  dirty = false;
  const t0 = performance.now();
  paint();
  const t1 = performance.now();
  // Times in the page's clock: the page subtracts its own time origin.
  self.postMessage({ type: "drawn", at: performance.timeOrigin + t1, took: t1 - t0, nodes: n });
}

function paint() {
  paintGraph(ctx, { n: n, x: x, y: y, src: src, dst: dst, titles: titles, colours: colours, colourList: colourList,
    relations: relations, width: width, height: height, dpr: dpr, scale: scale, tx: tx, ty: ty, selected: selected, hover: hover });
}

// meta appends titles and colours of new nodes, and the relations of all
// Links.
function meta(m) {
  for (let i = 0; i < m.titles.length; i++) {
    titles.push(m.titles[i]); colours.push(m.colours[i]);
    if (!colourList.includes(m.colours[i])) colourList.push(m.colours[i]);
  }
  relations = m.relations;
}

function resize(m) {
  width = m.w; height = m.h; dpr = m.dpr;
  const cw = Math.max(1, Math.round(width * dpr)), ch = Math.max(1, Math.round(height * dpr));
  // Setting the size clears the canvas: only when it changed.
  if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch; }
}

self.onmessage = (e) => {
  const m = e.data;
  switch (m.type) {
    case "canvas": // {canvas, w, h, dpr}: the page's canvas, handed over once
      canvas = m.canvas; ctx = canvas.getContext("2d");
      resize(m);
      invalidate();
      break;
    case "size": // {w, h, dpr}
      resize(m);
      invalidate();
      break;
    case "view": // {scale, tx, ty, selected, hover}
      scale = m.scale; tx = m.tx; ty = m.ty; selected = m.selected; hover = m.hover;
      invalidate();
      break;
    case "init": // {n, x, y, src, dst, titles, colours, relations}
      n = 0; grow(m.n); n = m.n;
      x.set(m.x); y.set(m.y);
      titles = []; colours = []; colourList = [];
      meta(m);
      setLinks(m.src, m.dst);
      invalidate();
      alpha = 1; start(1);
      break;
    case "add": // {n (new total), x, y (of the new nodes), src, dst (all Links), titles, colours (new nodes), relations (all Links)}
      { const old = n; grow(m.n); n = m.n;
        x.set(m.x, old); y.set(m.y, old);
        meta(m);
        setLinks(m.src, m.dst);
        invalidate();
        start(0.5); }
      break;
    case "pin": // {i, x, y}: a node dragged by the person
      pinned[m.i] = 1; x[m.i] = m.x; y[m.i] = m.y;
      invalidate();
      start(0.3);
      break;
    case "release":
      pinned[m.i] = 0;
      start(0.1);
      break;
  }
};
