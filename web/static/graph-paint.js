// paintGraph paints the neighborhood graph on a 2D context: Links (one
// path), their Relations as labels when zoomed in or few, nodes (one path
// per Kind's colour), the selection and titles. Used by the page for its
// first frame and by graph-worker.js for every frame after.
"use strict";

// g: {n, x, y (Float32Arrays), src, dst (Int32Arrays, one entry a Link),
// titles, colours (a node's), colourList (the distinct colours), relations
// (a Link's), width, height, dpr, scale, tx, ty, selected, hover}.
function paintGraph(c, g) {
  const n = g.n, x = g.x, y = g.y, src = g.src, dst = g.dst, scale = g.scale, selected = g.selected;
  c.setTransform(g.dpr, 0, 0, g.dpr, 0, 0);
  c.clearRect(0, 0, g.width, g.height);
  if (n === 0) return;
  c.translate(g.tx, g.ty);
  c.scale(scale, scale);
  c.lineWidth = 1 / scale;
  c.strokeStyle = "#b4bcc4";
  c.beginPath();
  for (let k = 0; k < src.length; k++) {
    const a = src[k], b = dst[k];
    c.moveTo(x[a], y[a]); c.lineTo(x[b], y[b]);
  }
  c.stroke();
  const showLabels = n <= 60 || scale >= 1.6;
  if (showLabels) {
    c.fillStyle = "#4a5361";
    c.font = (10 / scale) + "px system-ui, sans-serif";
    c.textAlign = "center";
    for (let k = 0; k < src.length; k++) {
      const a = src[k], b = dst[k];
      c.fillText(g.relations[k], (x[a] + x[b]) / 2, (y[a] + y[b]) / 2);
    }
  }
  // One path per colour (Kind): a few fill calls, not one per node.
  const r = 6;
  for (const colour of g.colourList) {
    c.fillStyle = colour;
    c.beginPath();
    for (let i = 0; i < n; i++) {
      if (g.colours[i] !== colour) continue;
      c.moveTo(x[i] + r, y[i]);
      c.arc(x[i], y[i], r, 0, 2 * Math.PI);
    }
    c.fill();
  }
  if (selected >= 0 && selected < n) {
    c.fillStyle = g.colours[selected];
    c.beginPath(); c.arc(x[selected], y[selected], r * 1.6, 0, 2 * Math.PI); c.fill();
    c.lineWidth = 2.5 / scale; c.strokeStyle = "#f6b300";
    c.beginPath(); c.arc(x[selected], y[selected], r * 1.6 + 2, 0, 2 * Math.PI); c.stroke();
  }
  c.fillStyle = "#1b1f24";
  c.font = (12 / scale) + "px system-ui, sans-serif";
  c.textAlign = "left";
  const label = (i) => { if (i >= 0 && i < n) c.fillText(g.titles[i], x[i] + r + 3, y[i] + 4); };
  if (showLabels) for (let i = 0; i < n; i++) label(i);
  else { label(selected); label(g.hover); }
}


