package perf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lorebase/lorebase/internal/storagecli"
)

// hugePagesFile, in the server's directory, holds the huge pages Up
// reserved for it (a count of pages): Stop gives them back.
const hugePagesFile = "hugepages"

// nrHugePages is the kernel's count of reserved huge pages of the default
// size.
const nrHugePages = "/proc/sys/vm/nr_hugepages"

// compactMemory has the kernel compact memory when written; dropCaches
// (written 1) has it drop the clean page cache.
const (
	compactMemory = "/proc/sys/vm/compact_memory"
	dropCaches    = "/proc/sys/vm/drop_caches"
)

// hugePages are the huge page counts of /proc/meminfo: pages reserved in
// all (Total), not yet touched (Free), of which promised to a mapping
// but not yet touched (Rsvd), and the page size in bytes.
type hugePages struct {
	Total, Free, Rsvd, Size int64
}

// String tells the pages reserved and those in use or promised.
func (h hugePages) String() string {
	if h.Total == 0 {
		return fmt.Sprintf("none reserved (%s pages)", storagecli.HumanSize(h.Size))
	}
	return fmt.Sprintf("%d of %s reserved, %d in use or promised", h.Total, storagecli.HumanSize(h.Size), h.Total-h.Free+h.Rsvd)
}

// Available are the reserved pages neither used nor promised.
func (h hugePages) Available() int64 { return h.Free - h.Rsvd }

// parseHugePages reads the huge page counts of /proc/meminfo's text
// (false when it lacks them: a kernel without huge pages).
func parseHugePages(meminfo string) (hugePages, bool) {
	var h hugePages
	seen := 0
	for _, line := range strings.Split(meminfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "HugePages_Total:":
			h.Total = n
		case "HugePages_Free:":
			h.Free = n
		case "HugePages_Rsvd:":
			h.Rsvd = n
		case "Hugepagesize:":
			if len(f) < 3 || f[2] != "kB" {
				continue
			}
			h.Size = n << 10
		default:
			continue
		}
		seen++
	}
	return h, seen == 4 && h.Size > 0
}

func readHugePages() (hugePages, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return hugePages{}, false
	}
	return parseHugePages(string(b))
}

// hugePagesWarning says when shared buffers of this size run without
// huge pages for them: "" below storagecli.HugePagesFrom or when the host has
// reserved enough (h.Total pages of h.Size; ok false: not known).
func hugePagesWarning(sharedBuffers int64, h hugePages, ok bool) string {
	if sharedBuffers < storagecli.HugePagesFrom || !ok || h.Total*h.Size >= sharedBuffers {
		return ""
	}
	return fmt.Sprintf("shared_buffers %s without huge pages (%d of %s reserved): at 10M the first run of a warm search took 1.2 to 1.5 times as long without them; as root, perfpg up --huge-pages (make perf-up PERF_HUGE_PAGES=1) reserves them while the server runs",
		storagecli.HumanSize(sharedBuffers), h.Total, storagecli.HumanSize(h.Size))
}

// hugePagesToAdd are the huge pages to reserve so that need of them are
// available to a server about to start (0: enough are).
func hugePagesToAdd(h hugePages, need int64) int64 {
	return max(need-h.Available(), 0)
}

// reserveHugePages stops the server when it runs, reserves the huge pages
// its shared memory needs (postgres -C shared_memory_size_in_huge_pages,
// read with the server stopped), notes how many it added in Dir so Stop
// gives them back, and starts the server. PostgreSQL's huge_pages = try
// (the default) then maps its shared memory on them; Up checks it did.
func (p PerfServer) reserveHugePages(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return errors.New("--huge-pages: reserving huge pages (" + nrHugePages + ") needs root")
	}
	if _, err := os.Stat(filepath.Join(p.Dir, hugePagesFile)); err == nil && p.running(ctx) {
		p.logf("perf-pg: huge pages already reserved for the running server")
		return nil
	}
	if p.running(ctx) {
		p.logf("perf-pg: stopping PostgreSQL to start it on huge pages")
		if err := p.pgctl(ctx, "stop", "-w", "-m", "fast"); err != nil {
			return fmt.Errorf("stop the perf server: %w", err)
		}
	}
	out, err := p.output(ctx, "postgres", "-D", p.data(), "-C", "shared_memory_size_in_huge_pages")
	if err != nil {
		return fmt.Errorf("--huge-pages: the server's need: %w", err)
	}
	need, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil || need < 1 {
		return fmt.Errorf("--huge-pages: shared_memory_size_in_huge_pages is %q: the kernel has no huge pages", strings.TrimSpace(out))
	}
	h, ok := readHugePages()
	if !ok {
		return errors.New("--huge-pages: /proc/meminfo gives no huge page counts")
	}
	if add := hugePagesToAdd(h, need); add > 0 {
		got, err := reserve(h.Total+add, p.logf)
		if err != nil {
			return fmt.Errorf("--huge-pages: reserve %d huge pages: %w", add, err)
		}
		got -= h.Total
		if err := p.noteHugePages(got); err != nil {
			return err
		}
		if got < add {
			// Memory in use or too fragmented: give back what was taken.
			if err := p.releaseHugePages(ctx); err != nil {
				return err
			}
			return fmt.Errorf("--huge-pages: the kernel reserved %d of the %d huge pages of %s asked for (memory in use or fragmented, the clean page cache dropped: stop other servers or programs first)",
				got, add, storagecli.HumanSize(h.Size))
		}
		p.logf("perf-pg: reserved %d huge pages of %s (%s)", got, storagecli.HumanSize(h.Size), storagecli.HumanSize(got*h.Size))
	}
	p.logf("perf-pg: starting PostgreSQL in %s on 127.0.0.1:%d", p.data(), p.Port)
	if err := p.pgctl(ctx, "start", "-w", "-t", "120", "-l", filepath.Join(p.Dir, "postgres.log"),
		"-o", "-p "+strconv.Itoa(p.Port)); err != nil {
		return fmt.Errorf("start the perf server: %w", err)
	}
	if after, ok := readHugePages(); ok && after.Total-after.Free+after.Rsvd < need {
		p.warnf(fmt.Sprintf("the server did not take its %d huge pages (%d in use or promised in all)", need, after.Total-after.Free+after.Rsvd))
	}
	return nil
}

// reserve asks the kernel for total huge pages and returns how many it
// holds then. The pages must be contiguous memory, found by reclaiming
// the page cache and compacting, which the kernel does a little at each
// ask: while an ask gains pages and falls short, memory is compacted
// (vm.compact_memory) and the kernel asked again, until two asks in a
// row gain nothing (at most 16 asks); then the clean page cache is
// dropped and the kernel asked once more.
func reserve(total int64, log func(string, ...any)) (int64, error) {
	// Dirty pages cannot be reclaimed until written.
	unix.Sync()
	got := int64(-1)
	stalled := 0
	for try := 0; try < 16 && stalled < 2; try++ {
		if try > 0 {
			if err := os.WriteFile(compactMemory, []byte("1"), 0o644); err != nil {
				return got, fmt.Errorf("compact memory: %w", err)
			}
		}
		n, err := askHugePages(total)
		if err != nil {
			return got, err
		}
		if n >= total {
			return n, nil
		}
		if n == got {
			stalled++
		}
		got = n
	}
	// The page cache the kernel would not reclaim: drop the clean part
	// (vm.drop_caches) and ask once more.
	log("perf-pg: %d of %d huge pages reserved; dropping the clean page cache", got, total)
	if err := os.WriteFile(dropCaches, []byte("1"), 0o644); err != nil {
		return got, fmt.Errorf("drop the page cache: %w", err)
	}
	n, err := askHugePages(total)
	if err != nil {
		return got, err
	}
	return n, nil
}

// askHugePages sets the kernel's count of reserved huge pages and returns
// the count it reached.
func askHugePages(total int64) (int64, error) {
	if err := os.WriteFile(nrHugePages, []byte(strconv.FormatInt(total, 10)), 0o644); err != nil {
		return 0, err
	}
	h, ok := readHugePages()
	if !ok {
		return 0, errors.New("/proc/meminfo gives no huge page counts")
	}
	return h.Total, nil
}

// noteHugePages adds n to the huge pages noted as reserved for the server.
func (p PerfServer) noteHugePages(n int64) error {
	if n <= 0 {
		return nil
	}
	path := filepath.Join(p.Dir, hugePagesFile)
	had, err := notedHugePages(path)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(strconv.FormatInt(had+n, 10)+"\n"), 0o644); err != nil {
		return fmt.Errorf("note the huge pages reserved: %w", err)
	}
	return nil
}

func notedHugePages(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return n, nil
}

// releaseWait is how long releaseHugePages waits for the kernel's count
// to come down: pg_ctl's stop returns once the postmaster has removed its
// pid file, and the processes' mappings of the shared memory may outlive
// it by a moment; the kernel keeps pages still mapped as surplus and frees
// them when they are unmapped.
const releaseWait = 10 * time.Second

// releaseHugePages gives back the huge pages noted as reserved for the
// server (Stop, once it has stopped): the kernel's count less them. It
// waits, up to releaseWait, for the count to reach that.
func (p PerfServer) releaseHugePages(ctx context.Context) error {
	path := filepath.Join(p.Dir, hugePagesFile)
	n, err := notedHugePages(path)
	if err != nil || n == 0 {
		return err
	}
	h, ok := readHugePages()
	if !ok {
		return errors.New("release huge pages: /proc/meminfo gives no huge page counts")
	}
	want := max(h.Total-n, 0)
	if err := os.WriteFile(nrHugePages, []byte(strconv.FormatInt(want, 10)), 0o644); err != nil {
		return fmt.Errorf("release %d huge pages: %w", n, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("release huge pages: %w", err)
	}
	deadline := time.Now().Add(releaseWait)
	for {
		h, ok = readHugePages()
		if !ok || h.Total <= want {
			break
		}
		if time.Now().After(deadline) {
			p.logf("perf-pg: %d huge pages still mapped after %s: the kernel frees them when they are unmapped", h.Total-want, releaseWait)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.logf("perf-pg: released %d huge pages", n)
	return nil
}

// output runs a PostgreSQL binary as run does and returns its standard
// output.
func (p PerfServer) output(ctx context.Context, name string, args ...string) (string, error) {
	cmd, err := p.command(ctx, name, args...)
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
