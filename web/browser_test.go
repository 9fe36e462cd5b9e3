package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromiumPath finds Debian's chromium (LOREBASE_CHROMIUM overrides).
func chromiumPath() string {
	if p := os.Getenv("LOREBASE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newChrome starts a headless Chromium for one test with a fresh profile.
// Without Chromium the test fails in CI (CI=true) and skips elsewhere.
func newChrome(t *testing.T, width, height int) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found: install Debian's chromium (.ci/run does) or set LOREBASE_CHROMIUM")
		}
		t.Skip("chromium not found (set LOREBASE_CHROMIUM or install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
		// A headless page is never "occluded": frames and timers run at
		// full rate, as in a window a person looks at.
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-background-timer-throttling", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))), "start chromium at %s", path)
	return ctx
}

// outDir is where screenshots go: $LOREBASE_TEST_OUT/web, or a temporary
// folder of the test.
func outDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if base := os.Getenv("LOREBASE_TEST_OUT"); base != "" {
		dir = filepath.Join(base, "web")
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	shoot(t, ctx, dir, name, chromedp.FullScreenshot(100))
}

// viewportShot captures the viewport only: a full-page capture resizes
// the page, which clears a canvas until its next frame.
func viewportShot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	shoot(t, ctx, dir, name, chromedp.CaptureScreenshot())
}

func shoot(t *testing.T, ctx context.Context, dir, name string, a chromedp.Action[[]byte]) {
	t.Helper()
	png, err := chromedp.Run(ctx, a)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// visit navigates and requires an HTTP status.
func visit(t *testing.T, ctx context.Context, u string, status int) {
	t.Helper()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	require.NoError(t, err, u)
	require.EqualValues(t, status, resp.Status, u)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	require.NoError(t, err, sel)
	return s
}

func eval[T any](t *testing.T, ctx context.Context, js string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, opts...))
	require.NoError(t, err, js)
	return v
}

func signInBrowser(t *testing.T, ctx context.Context, base, token, next string) {
	t.Helper()
	visit(t, ctx, base+next, http.StatusOK) // redirected to the sign-in form
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	require.Contains(t, loc, "/signin?next=")
	_, err = chromedp.RunResponse(ctx, chromedp.SendKeys("#token", token), chromedp.Submit("#token"))
	require.NoError(t, err)
	loc, err = chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, base+next, loc)
}

func TestBrowserReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	ctx := newChrome(t, 1440, 900)
	dir := outDir(t)

	// The sign-in form, then the page asked for.
	visit(t, ctx, e.URL+"/", http.StatusOK)
	screenshot(t, ctx, dir, "signin")
	signInBrowser(t, ctx, e.URL, f.Reader, "/d/supply/")
	require.Contains(t, text(t, ctx, "h1"), "supply")
	screenshot(t, ctx, dir, "domain")
	// The token is in no script-readable place.
	require.Equal(t, "", eval[string](t, ctx, "document.cookie"))
	require.Equal(t, 0, eval[int](t, ctx, "localStorage.length"))

	// Browse to a Record: Kinds → Supplier → S-1.
	_, err := chromedp.RunResponse(ctx, chromedp.Click(`//a[text()="Supplier"]`))
	require.NoError(t, err)
	_, err = chromedp.RunResponse(ctx, chromedp.Click(`//a[text()="S-1"]`))
	require.NoError(t, err)
	require.Equal(t, "Acme Fastening Works", text(t, ctx, "h1"))
	require.Contains(t, text(t, ctx, "table.values"), "DE123")
	screenshot(t, ctx, dir, "record-1440")

	// The Record titled <script> renders as text, and runs nothing.
	visit(t, ctx, e.URL+"/d/supply/records/S-2", http.StatusOK)
	require.Equal(t, hostileTitle, text(t, ctx, "h1"))
	require.False(t, eval[bool](t, ctx, "window.__pwned === true"))

	// Switch branch with the switcher: the scout's Record appears.
	visit(t, ctx, e.URL+"/d/supply/records?kind=Part", http.StatusOK)
	require.NotContains(t, text(t, ctx, "main"), "P-2")
	_, err = chromedp.RunResponse(ctx, chromedp.SetValue(`select[name="b"]`, "agent/scout/7"), chromedp.Submit(`select[name="b"]`))
	require.NoError(t, err)
	require.Contains(t, text(t, ctx, "main"), "Spring washer")

	// Search with a typo.
	visit(t, ctx, e.URL+"/d/supply/search", http.StatusOK)
	_, err = chromedp.RunResponse(ctx, chromedp.SendKeys(`input[name="q"]`, "fastenning"), chromedp.Submit(`input[name="q"]`))
	require.NoError(t, err)
	results := text(t, ctx, "table.results")
	require.Contains(t, results, "Acme Fastening Works")
	require.Contains(t, text(t, ctx, ".corrections"), "fastening")
	screenshot(t, ctx, dir, "search")

	// The graph: drawn, a node selected by a click, then expanded.
	visit(t, ctx, e.URL+"/d/supply/graph?b=agent%2Fscout%2F7&key=P-1", http.StatusOK)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool]("window.__graphStats && window.__graphStats.settled > 0", chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	require.Equal(t, 3, eval[int](t, ctx, "window.__graphStats.nodes"))
	xy := eval[[]float64](t, ctx, `(() => { const g = window.__graph, i = g.index.get("S-1"), r = g.canvas.getBoundingClientRect();
		return [r.left + g.pos[2*i]*g.scale + g.tx, r.top + g.pos[2*i+1]*g.scale + g.ty]; })()`)
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseClickXY(xy[0], xy[1])))
	require.Equal(t, "S-1", text(t, ctx, "#sel-key"))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click("#sel-expand")))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool]("window.__graphStats.nodes === 4", chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "expanding S-1 adds P-2")
	// Zoom with the wheel, pan by dragging the background.
	before := eval[float64](t, ctx, "window.__graph.scale")
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, xy[0], xy[1], func(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 1, -300 })))
	require.Greater(t, eval[float64](t, ctx, "window.__graph.scale"), before)
	// Drag S-1 by 60 pixels: the node follows the pointer (and the layout
	// keeps it pinned while held).
	from := eval[[]float64](t, ctx, `(() => { const g = window.__graph, i = g.index.get("S-1"), r = g.canvas.getBoundingClientRect();
		return [r.left + g.pos[2*i]*g.scale + g.tx, r.top + g.pos[2*i+1]*g.scale + g.ty]; })()`)
	view := eval[[]float64](t, ctx, "[window.__graph.tx, window.__graph.ty]")
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, from[0], from[1], chromedp.ButtonLeft)))
	for step := 1.0; step <= 4; step++ {
		require.NoError(t, chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, from[0]+15*step, from[1], chromedp.ButtonLeft)))
	}
	moved := eval[[]float64](t, ctx, `(() => { const g = window.__graph, i = g.index.get("S-1"), r = g.canvas.getBoundingClientRect();
		return [r.left + g.pos[2*i]*g.scale + g.tx, r.top + g.pos[2*i+1]*g.scale + g.ty]; })()`)
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, from[0]+60, from[1], chromedp.ButtonLeft)))
	require.InDelta(t, from[0]+60, moved[0], 2, "the dragged node is under the pointer")
	require.InDelta(t, from[1], moved[1], 2)
	require.Equal(t, view, eval[[]float64](t, ctx, "[window.__graph.tx, window.__graph.ty]"), "the node moved, not the view")
	// Drag the background: the view pans.
	tx := eval[float64](t, ctx, "window.__graph.tx")
	corner := eval[[]float64](t, ctx, `(() => { const r = window.__graph.canvas.getBoundingClientRect(); return [r.left + 8, r.bottom - 8]; })()`)
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, corner[0], corner[1], chromedp.ButtonLeft)))
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, corner[0]+40, corner[1], chromedp.ButtonLeft)))
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, corner[0]+40, corner[1], chromedp.ButtonLeft)))
	require.InDelta(t, tx+40, eval[float64](t, ctx, "window.__graph.tx"), 1, "dragging the background pans")
	require.Greater(t, paintedPixels(t, ctx), 100)
	viewportShot(t, ctx, dir, "graph")
	// Open the selected Record from the panel.
	_, err = chromedp.RunResponse(ctx, chromedp.Click("#sel-open"))
	require.NoError(t, err)
	require.Equal(t, "Acme Fastening Works", text(t, ctx, "h1"))

	// The log and one Revision.
	visit(t, ctx, e.URL+"/d/supply/revisions", http.StatusOK)
	require.Contains(t, text(t, ctx, "main"), "Rename Acme")
	visit(t, ctx, e.URL+"/d/supply/revisions/"+f.Rev1, http.StatusOK)
	screenshot(t, ctx, dir, "revision")
	visit(t, ctx, e.URL+"/d/supply/schema", http.StatusOK)
	screenshot(t, ctx, dir, "schema")

	// At 390 pixels wide nothing overflows sideways.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	for _, p := range []string{"/d/supply/records/S-1", "/d/supply/search?q=bolt", "/d/supply/", "/d/supply/schema"} {
		visit(t, ctx, e.URL+p, http.StatusOK)
		w := eval[float64](t, ctx, "document.documentElement.scrollWidth")
		require.LessOrEqual(t, w, 390.0, "%s is %v px wide at 390", p, w)
	}
	visit(t, ctx, e.URL+"/d/supply/records/S-1", http.StatusOK)
	screenshot(t, ctx, dir, "record-390")
	t.Logf("screenshots in %s", dir)
}

// TestBrowserProposal opens a Proposal with a conflict, resolves it and
// merges, in the browser.
func TestBrowserProposal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	conflicted(e, f)
	ctx := newChrome(t, 1440, 900)
	dir := outDir(t)
	signInBrowser(t, ctx, e.URL, f.Admin, "/d/supply/proposals")
	_, err := chromedp.RunResponse(ctx,
		chromedp.SendKeys(`input[name="title"]`, "Washer and rename"),
		chromedp.SetValue(`select[name="source"]`, "agent/scout/7"),
		chromedp.SetValue(`select[name="target"]`, "main"),
		chromedp.Submit(`input[name="title"]`))
	require.NoError(t, err)
	require.Contains(t, text(t, ctx, "#conflicts-h ~ .conflict"), "Acme (scout)")
	screenshot(t, ctx, dir, "proposal-conflict")
	_, err = chromedp.RunResponse(ctx, chromedp.Click(`input[name="choice"][value="source"]`), chromedp.Submit(`input[name="choice"][value="source"]`))
	require.NoError(t, err)
	require.Contains(t, text(t, ctx, ".notice"), "Resolution saved")
	_, err = chromedp.RunResponse(ctx, chromedp.Click("#merge-button"))
	require.NoError(t, err)
	require.Contains(t, text(t, ctx, ".notice"), "Merged")
	visit(t, ctx, e.URL+"/d/supply/records/S-1", http.StatusOK)
	require.Equal(t, "Acme (scout)", text(t, ctx, "h1"))
}

// paintedPixels counts the pixels of the graph canvas, as the screen
// shows it, that differ from its background: the worker paints the
// canvas, so the page's own script cannot read it back. A margin of a few
// pixels leaves the canvas's border out.
func paintedPixels(t *testing.T, ctx context.Context) int {
	t.Helper()
	// The viewport only: a capture beyond it resizes the page, which
	// clears a canvas until its next frame.
	data, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	r := eval[[]float64](t, ctx, `(() => { const r = document.getElementById("graph-canvas").getBoundingClientRect();
		return [r.left, r.top, Math.min(r.right, innerWidth), Math.min(r.bottom, innerHeight)]; })()`)
	const margin = 4
	b := image.Rect(int(r[0]), int(r[1]), int(r[2]), int(r[3])).Intersect(img.Bounds())
	// The canvas's background, #fbfcfd, in 16-bit colour.
	br, bg, bb := uint32(0xfb)*0x101, uint32(0xfc)*0x101, uint32(0xfd)*0x101
	far := func(a, b uint32) bool { return a > b+0x800 || b > a+0x800 }
	k := 0
	for y := b.Min.Y + margin; y < b.Max.Y-margin; y++ {
		for x := b.Min.X + margin; x < b.Max.X-margin; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if far(r, br) || far(g, bg) || far(bl, bb) {
				k++
			}
		}
	}
	return k
}

// TestBrowserGraphPerformance draws a neighborhood of 500 Records and
// about 1,000 Links and measures, in Chromium, the time from navigation to
// the first draw and the longest main-thread block while the layout
// settles (PerformanceObserver longtask).
func TestBrowserGraphPerformance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "supply"})
	admin := e.token("supply", "admin", "admin")
	e.api(http.StatusOK, "PUT", bpath("supply", "main")+"/schema", admin, supplySchema)
	// A neighborhood follows at most 20 Links per node and direction, and
	// returns the Links it followed. 50 Suppliers with exactly 20 Parts
	// each, 450 Parts: S-0's 20 Parts link to the 49 other Suppliers, whose
	// Parts are the rest. Depth 3 from S-0 holds all 500 Records and 1,000
	// Links.
	const suppliers, parts, perSupplier = 50, 450, 20
	var changes []map[string]any
	for i := range suppliers {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": fmt.Sprintf("Supplier %d", i)}))
	}
	for i := range parts {
		changes = append(changes, put("Part", fmt.Sprintf("P-%d", i), map[string]any{"name": fmt.Sprintf("Part %d", i)}))
	}
	supplied := func(part, supplier int) {
		changes = append(changes, linkChange("supplied_by", fmt.Sprintf("P-%d", part), fmt.Sprintf("S-%d", supplier)))
	}
	for p := range perSupplier {
		supplied(p, 0)
	}
	slot := 0
	for s := 1; s < suppliers; s++ {
		supplied((s-1)%perSupplier, s)
		for range perSupplier - 1 {
			supplied(perSupplier+slot%(parts-perSupplier), s)
			slot++
		}
	}
	e.commit("supply", "main", admin, "Graph fixture", changes...)

	ctx := newChrome(t, 1440, 900)
	dir := outDir(t)
	signInBrowser(t, ctx, e.URL, admin, "/d/supply/")
	type stats struct {
		Nodes, Links                   int
		FirstDraw, WorkerDraw, Settled float64
		LongestTask, Response, Loaded  float64
		Frames                         int
		MaxDraw                        float64
	}
	// LOREBASE_WEB_PERF_RUNS navigations (3 unless set) are measured.
	navigations := 3
	if v, err := strconv.Atoi(os.Getenv("LOREBASE_WEB_PERF_RUNS")); err == nil && v > 0 {
		navigations = v
	}
	var runs []stats
	for range navigations {
		visit(t, ctx, e.URL+"/d/supply/graph?key=S-0&depth=3&limit=500", http.StatusOK)
		// Polled every 250 ms, not every frame: the poll runs on the page's
		// thread that is being measured.
		_, err := chromedp.Run(ctx, chromedp.Poll[bool]("window.__graphStats && window.__graphStats.settled > 0",
			chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(250*time.Millisecond)))
		require.NoError(t, err)
		s := eval[stats](t, ctx, `({Nodes: __graphStats.nodes, Links: __graphStats.links, FirstDraw: __graphStats.firstDraw, WorkerDraw: __graphStats.workerDraw,
			Settled: __graphStats.settled, LongestTask: Math.max(0, ...window.__longtasks),
			Response: performance.getEntriesByType("navigation")[0].responseEnd,
			Loaded: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
			Frames: __graphStats.frames, MaxDraw: __graphStats.maxDraw})`)
		runs = append(runs, s)
		t.Logf("graph: %d nodes, %d links; page received %.0f ms, DOM ready %.0f ms, first draw %.0f ms after navigation (by the worker %.0f ms), settled at %.0f ms, longest main-thread block %.0f ms; %d frames, longest draw %.1f ms",
			s.Nodes, s.Links, s.Response, s.Loaded, s.FirstDraw, s.WorkerDraw, s.Settled, s.LongestTask, s.Frames, s.MaxDraw)
	}
	require.Greater(t, paintedPixels(t, ctx), 10000, "the settled graph is on the canvas")
	viewportShot(t, ctx, dir, "graph-500")
	var draws, blocks []float64
	for _, s := range runs {
		require.Equal(t, 500, s.Nodes)
		require.GreaterOrEqual(t, s.Links, 1000)
		draws, blocks = append(draws, s.FirstDraw), append(blocks, s.LongestTask)
	}
	t.Logf("long tasks of the last run (start ms, length ms): %v", eval[[]float64](t, ctx, "window.__longtaskStarts"))
	t.Logf("long animation frames of the last run: %s", eval[string](t, ctx, "JSON.stringify(window.__loafs)"))
	// The budgets (issue 12: first draw within 500 ms, no block over 100
	// ms) are reported, not asserted: a shared machine stretches every task.
	t.Logf("over %d navigations: first draw p50 %.0f ms, p95 %.0f ms; longest main-thread block p50 %.0f ms, p95 %.0f ms",
		len(runs), percentile(draws, 50), percentile(draws, 95), percentile(blocks, 50), percentile(blocks, 95))
}

// percentile is the nearest-rank percentile p of xs.
func percentile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// TestBrowserDeleteDomain: on the Domains page a Domain being deleted
// shows its job's progress as it changes, and leaves the list when the
// job is done, without a reload; a Domain is deleted by typing its name
// (a wrong name deletes nothing) and leaves the list too.
func TestBrowserDeleteDomain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.supply()
	e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "doomed"})
	e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "held"})
	e.holdDeleting("held", `{"phase": "mat_records", "tables_done": 3, "tables": 17, "rows": 1234}`)
	ctx := newChrome(t, 1440, 900)
	dir := outDir(t)
	signInBrowser(t, ctx, e.URL, adminToken, "/")
	require.Contains(t, text(t, ctx, `tr[data-domain="held"]`), "3 of 17 tables emptied, 1234 rows deleted, now mat_records")
	screenshot(t, ctx, dir, "domains-deleting")

	// The job moves on: the row follows without a reload.
	_, err := e.Store.Pool.Exec(context.Background(), `UPDATE domains SET progress = '{"phase": "refs", "tables_done": 9, "tables": 17, "rows": 5678}'
		WHERE name = 'held'`)
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('tr[data-domain="held"] td.job').textContent.includes("9 of 17 tables emptied, 5678 rows deleted, now refs")`,
		chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err, "the progress is live")
	// Its job runs now and removes the Domain: the row goes.
	_, err = e.Store.Pool.Exec(context.Background(), `UPDATE river_job SET scheduled_at = now() WHERE kind = 'store.domain_delete'`)
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('tr[data-domain="held"]') === null`, chromedp.WithPollingTimeout(60*time.Second)))
	require.NoError(t, err, "the deleted Domain leaves the list")
	require.Equal(t, "", e.domainState("held"))

	// Delete doomed: open its form, type a wrong name first.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`tr[data-domain="doomed"] summary`)))
	resp, err := chromedp.RunResponse(ctx,
		chromedp.SendKeys(`tr[data-domain="doomed"] input[name="confirm"]`, "doome"),
		chromedp.Submit(`tr[data-domain="doomed"] input[name="confirm"]`))
	require.NoError(t, err)
	require.EqualValues(t, http.StatusUnprocessableEntity, resp.Status)
	require.Contains(t, text(t, ctx, ".error"), `you typed "doome". Nothing was deleted.`)
	require.Equal(t, "ready", e.domainState("doomed"))
	screenshot(t, ctx, dir, "domains-mismatch")
	// The form is open again; the right name deletes it.
	resp, err = chromedp.RunResponse(ctx,
		chromedp.SendKeys(`tr[data-domain="doomed"] input[name="confirm"]`, "doomed"),
		chromedp.Submit(`tr[data-domain="doomed"] input[name="confirm"]`))
	require.NoError(t, err)
	require.EqualValues(t, http.StatusOK, resp.Status)
	require.Contains(t, text(t, ctx, ".notice"), "Domain doomed is being deleted.")
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('tr[data-domain="doomed"]') === null`, chromedp.WithPollingTimeout(60*time.Second)))
	require.NoError(t, err, "the deleted Domain leaves the list")
	require.Equal(t, "", e.domainState("doomed"))
	require.Contains(t, text(t, ctx, "table.domains"), "supply")

	// At 390 pixels wide nothing overflows sideways.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	visit(t, ctx, e.URL+"/", http.StatusOK)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`tr[data-domain="supply"] summary`)))
	w := eval[float64](t, ctx, "document.documentElement.scrollWidth")
	require.LessOrEqual(t, w, 390.0, "the Domains page is %v px wide at 390", w)
	screenshot(t, ctx, dir, "domains-390")
}
