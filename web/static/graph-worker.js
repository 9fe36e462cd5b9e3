// Force layout of the neighborhood graph, off the main thread. The page
// posts the graph; this worker posts node positions (x, y pairs in a
// Float32Array) after each batch of ticks until the layout settles.
"use strict";

let n = 0;
let x = new Float32Array(0), y = new Float32Array(0);
let vx = new Float32Array(0), vy = new Float32Array(0);
let pinned = new Uint8Array(0);
let src = new Int32Array(0), dst = new Int32Array(0);
let degree = new Float32Array(0);
let alpha = 1;
let running = false;

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

function post(done) {
  const out = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) { out[2 * i] = x[i]; out[2 * i + 1] = y[i]; }
  self.postMessage({ type: "positions", positions: out, alpha: alpha, done: done }, [out.buffer]);
}

// run does ticks for at most ~8 ms, posts, and rests as long again: drag
// messages are seen between batches, and on a machine with few cores the
// page's own thread keeps its share.
function run() {
  if (!running) return;
  const start = performance.now();
  do { tick(); } while (alpha > alphaMin && performance.now() - start < 8);
  const done = alpha <= alphaMin;
  post(done);
  if (done) { running = false; return; }
  setTimeout(run, 8);
}

function start(a) {
  alpha = Math.max(alpha, a);
  if (!running) { running = true; setTimeout(run, 0); }
}

self.onmessage = (e) => {
  const m = e.data;
  switch (m.type) {
    case "init": // {n, x, y, src, dst}
      n = 0; grow(m.n); n = m.n;
      x.set(m.x); y.set(m.y);
      setLinks(m.src, m.dst);
      alpha = 1; start(1);
      break;
    case "add": // {n (new total), x, y (of the new nodes), src, dst (all Links)}
      { const old = n; grow(m.n); n = m.n;
        x.set(m.x, old); y.set(m.y, old);
        setLinks(m.src, m.dst);
        start(0.5); }
      break;
    case "pin": // {i, x, y}: a node dragged by the person
      pinned[m.i] = 1; x[m.i] = m.x; y[m.i] = m.y;
      start(0.3);
      break;
    case "release":
      pinned[m.i] = 0;
      start(0.1);
      break;
  }
};
