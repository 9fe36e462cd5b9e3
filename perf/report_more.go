package perf

import (
	"fmt"
	"strings"
	"time"
)

// writeConcurrency writes the concurrent measurement.
func (r *Report) writeConcurrency(p func(string, ...any)) {
	c := r.Concurrency
	p("")
	p("## Under load (milliseconds)")
	p("")
	if c == nil {
		p("Not measured: %s.", orDash(r.ConcurrencySkipped))
		return
	}
	p("N clients read the mix %s in turn (each through package reads as lorebase_app) for %s per level; client i reads Domain i mod %d (%s). With the writer, one more client commits %d Part updates to the first Domain's main %.3g times a second. Every Record and Link returned is checked against the client's own Domain (its keys, its title marker, its values' title): leaks counts those that were not its own.",
		strings.Join(MixedReads, ", "), c.Duration, len(c.Domains), strings.Join(c.Domains, "; "), c.WriterChanges, c.WriterRate)
	p("")
	p("| Clients | Writer | Calls | Calls/s | p50 | p95 | p99 | Errors | Checked | Leaks | Commits | Commit p50 | Commit p95 | Commit p99 |")
	p("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	leaks, checked := 0, 0
	for _, l := range c.Levels {
		w, commits := "no", "—"
		if l.Writer {
			w = "yes"
			n := 0
			if l.Commits != nil {
				n = l.Commits.N
			}
			commits = fmt.Sprintf("%d (%.2f/s)", n, l.CommitRate)
		}
		p("| %d | %s | %s | %.0f | %s | %s | %s | %d | %s | %d | %s | %s | %s | %s |", l.Clients, w, thousands(int64(l.Calls)), l.Throughput,
			ms(l.Latency.P50), ms(l.Latency.P95), ms(l.Latency.P99), l.Errors, thousands(int64(l.Checked)), l.Leaks, commits,
			stat(l.Commits, 50), stat(l.Commits, 95), stat(l.Commits, 99))
		leaks += l.Leaks
		checked += l.Checked
	}
	p("")
	p("Leaks: %d of %s Records and Links checked.", leaks, thousands(int64(checked)))
	if len(c.Domains) > 1 {
		p("")
		p("Per Domain (calls/s, p50, p99 of its clients' calls):")
		p("")
		head := "| Clients | Writer |"
		sep := "| ---: | --- |"
		for _, d := range c.Domains {
			head += fmt.Sprintf(" %s: clients, calls/s, p50, p99 |", d)
			sep += " --- |"
		}
		p("%s", head)
		p("%s", sep)
		for _, l := range c.Levels {
			line := fmt.Sprintf("| %d | %t |", l.Clients, l.Writer)
			for _, d := range l.ByDomain {
				if d.Clients == 0 {
					line += " — |"
					continue
				}
				line += fmt.Sprintf(" %d, %.0f, %s, %s |", d.Clients, d.Throughput, ms(d.Latency.P50), ms(d.Latency.P99))
			}
			p("%s", line)
		}
	}
	if len(c.Levels) > 0 {
		last := c.Levels[len(c.Levels)-1]
		p("")
		p("p50 / p99 per read at %d clients (writer %t):", last.Clients, last.Writer)
		p("")
		p("| Read | Calls | p50 | p95 | p99 |")
		p("| --- | ---: | ---: | ---: | ---: |")
		for _, name := range MixedReads {
			if st, ok := last.ByRead[name]; ok {
				p("| %s | %d | %s | %s | %s |", name, st.N, ms(st.P50), ms(st.P95), ms(st.P99))
			}
		}
	}
	for _, l := range c.Levels {
		if l.FirstError != "" {
			p("")
			p("- %d clients, writer %t: first error: %s", l.Clients, l.Writer, l.FirstError)
		}
		if l.CommitError != "" {
			p("- %d clients, writer %t: first commit error: %s", l.Clients, l.Writer, l.CommitError)
		}
		for _, e := range l.LeakExamples {
			p("- leak: %s", e)
		}
	}
}

// writeBranches writes the branch measurement.
func (r *Report) writeBranches(p func(string, ...any)) {
	b := r.Branches
	p("")
	p("## Branches (milliseconds)")
	p("")
	if b == nil {
		p("Not measured: %s.", orDash(r.BranchesSkipped))
		return
	}
	p("Requests through package store (store.CreateBranch, store.DeleteBranch) as lorebase_app, queuing their River jobs with an insert-only client; the background jobs' code (jobs.Copier, jobs.Deleter) runs in-process right after the request, timed batch by batch.")
	p("")
	p("| Operation | Runs | p50 | p95 | p99 | max |")
	p("| --- | ---: | ---: | ---: | ---: | ---: |")
	row := func(name string, s *Stats) {
		if s != nil {
			p("| %s | %d | %s | %s | %s | %s |", name, s.N, ms(s.P50), ms(s.P95), ms(s.P99), ms(s.Max))
		}
	}
	row("overlay creation", b.OverlayCreate)
	if b.CopyRequest > 0 {
		p("| copy creation (request) | 1 | %s | — | — | — |", ms(b.CopyRequest))
	}
	if b.DeleteRequest > 0 {
		p("| %s deletion (request) | 1 | %s | — | — | — |", orWord(b.Deleted, "copy"), ms(b.DeleteRequest))
	}
	row(fmt.Sprintf("overlay creation with up to %d overlays", b.ManyCount), b.ManyOverlays)
	row("commit of 1 Part update on each of those overlays", b.ManyOverlayCommits)
	for _, c := range b.Commits {
		row(c.Name, c.RLS)
	}
	job := func(name string, j *JobRun) {
		if j == nil {
			return
		}
		p("- %s: %s in %d batches, %s rows read, %s written, %.0f rows/s; batch held p50 %s, p95 %s, max %s ms; %d batches contended.",
			name, j.Total.Round(time.Millisecond), j.Batches, thousands(j.Rows), thousands(j.Written), j.PerSec,
			ms(j.Batch.P50), ms(j.Batch.P95), ms(j.Batch.Max), j.Contended)
	}
	p("")
	job("Background copy (store.materialize)", b.Copy)
	if b.CopyIndexes > 0 {
		p("- Per-Attribute indexes of the copy (store.index): %s.", b.CopyIndexes.Round(time.Millisecond))
	}
	job(fmt.Sprintf("Background deletion of the %s (store.branch_delete)", orWord(b.Deleted, "copy")), b.Delete)
	against := orWord(b.Against, "copy")
	if against != "copy" {
		p("- The copy branch was left out (--skip-copy); the overlay is read against %s, its base.", against)
	}
	if len(b.Paired) > 0 {
		p("")
		failed := 0
		for _, c := range b.Commits {
			if c.RLSError != "" {
				failed++
			}
		}
		if failed == 0 && len(b.Commits) > 0 {
			if against == "copy" {
				p("Overlay against copy, call by call on the same keys and queries, alternating which branch reads first, after the same commit on both and another on main (rls):")
			} else {
				p("Overlay against %s, call by call on the same keys and queries, alternating which branch reads first, after a commit on each (rls):", against)
			}
		} else {
			p("Overlay against %s, call by call on the same keys and queries, alternating which branch reads first (rls). %d of the %d commits meant to precede them failed (see Not measured), so the branches do not hold the same changes: the overlay reads its base with no rows of its own.", against, failed, max(len(b.Commits), 3))
		}
		p("")
		p("| Read | Target p95 | overlay p50 | overlay p95 | overlay p99 | %[1]s p50 | %[1]s p95 | %[1]s p99 | overlay/%[1]s p50 | n |", against)
		p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, x := range b.Paired {
			if x.Error != "" {
				p("| %s | %s | failed: %s |  |  |  |  |  |  |  |", x.Name, target(x.Target), strings.ReplaceAll(x.Error, "|", "/"))
				continue
			}
			rt := "—"
			if x.Copy != nil && x.Copy.P50 > 0 {
				rt = fmt.Sprintf("%.2f", float64(x.Overlay.P50)/float64(x.Copy.P50))
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", x.Name, target(x.Target), stat(x.Overlay, 50), stat(x.Overlay, 95), stat(x.Overlay, 99),
				stat(x.Copy, 50), stat(x.Copy, 95), stat(x.Copy, 99), rt, count(x.Overlay))
		}
	}
	if len(b.Answers) > 0 {
		when := "after the same commit on both"
		if against != "copy" {
			when = "before any commit"
		}
		p("")
		p("The overlay's answers against %s's, call by call on the same inputs, %s (Revision ids, sequence numbers and times left out):", against, when)
		p("")
		p("| Read | calls | different | first difference |")
		p("| --- | ---: | ---: | --- |")
		for _, c := range b.Answers {
			p("| %s | %d | %d | %s |", c.Name, c.Calls, c.Different, orDash(strings.ReplaceAll(c.First, "|", "/")))
		}
	}
	if len(b.OverlayEffects) > 0 {
		p("")
		p("Main with 0 and with %d overlays in the Domain (same inputs, rls):", b.ManyCount)
		p("")
		p("| Read | p50, 0 overlays | p95, 0 overlays | p50, %d overlays | p95, %d overlays |", b.ManyCount, b.ManyCount)
		p("| --- | ---: | ---: | ---: | ---: |")
		for _, e := range b.OverlayEffects {
			p("| %s | %s | %s | %s | %s |", e.Name, stat(e.Before, 50), stat(e.Before, 95), stat(e.After, 50), stat(e.After, 95))
		}
	}
	if len(b.Errors) > 0 {
		p("")
		p("Not measured (failed):")
		p("")
		for _, e := range b.Errors {
			p("- %s", e)
		}
	}
}

// orWord is w, or def when w is empty (reports written before the field).
func orWord(w, def string) string {
	if w == "" {
		return def
	}
	return w
}
