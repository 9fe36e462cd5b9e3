package storagecli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

func describe(p *Profile) string {
	return fmt.Sprintf("profile %s (memory %s, table tier %s)", p.Name, HumanSize(p.Memory), p.Tier)
}

// WritePlan writes a plan as a diff: each setting and table parameter that
// differs, current → wanted, and what it takes to get there.
func WritePlan(w io.Writer, plan *Plan) {
	fmt.Fprintln(w, describe(plan.Profile))
	nSet, nTab := plan.Changes()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	same := 0
	fmt.Fprintln(w, "\nsettings:")
	fmt.Fprintln(tw, "  SETTING\tCURRENT\t\tWANTED\tTAKES EFFECT\t")
	for _, s := range plan.Settings {
		if s.Action == ActionNone {
			same++
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t→\t%s\t%s\t\n", s.Name, s.Current, s.Wanted, settingNote(s))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "  (%d of %d settings already as wanted)\n", same, len(plan.Settings))
	if !plan.FileSettings {
		fmt.Fprintln(w, "  note: pg_file_settings is not readable by this role; values written by ALTER SYSTEM that wait for a restart show as changes")
	}
	if n := plan.HugePages; n != nil {
		fmt.Fprintf(w, "\nhuge pages: huge_pages = %s; at shared_buffers %s the server's shared memory needs %s huge pages (shared_memory_size_in_huge_pages; read it again after the restart).\n",
			n.Setting, n.SharedBuffers, n.Needed)
		fmt.Fprintln(w, "  From 8GB of shared buffers reserve them on the server's host (vm.nr_hugepages), which plan cannot see, and set huge_pages = on: docs/storage.md")
	}
	fmt.Fprintln(w, "\ntable storage parameters:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  PARTITION\tPARAMETER\tCURRENT\t\tWANTED\t")
	for _, t := range plan.Tables {
		if !t.Change {
			continue
		}
		cur := t.Current
		if cur == "" {
			cur = "(default)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t→\t%s\t\n", t.Table, t.Param, cur, t.Wanted)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "  (%d of %d parameters already as wanted)\n", len(plan.Tables)-nTab, len(plan.Tables))
	if nSet+nTab == 0 {
		fmt.Fprintln(w, "\nnothing to change")
	} else {
		fmt.Fprintf(w, "\n%d settings and %d table parameters to change (storage apply)\n", nSet, nTab)
	}
}

func settingNote(s SettingChange) string {
	switch s.Action {
	case ActionRestart:
		return "restart (postmaster)"
	case ActionReload:
		return "reload (" + s.Context + ")"
	case ActionPendingRestart:
		return "configured " + s.Configured + ", pending restart"
	case ActionOverridden:
		return "configured, overridden by a " + s.Source + " setting"
	}
	return s.Action
}

// WriteApply writes what Apply changed and which settings wait for a
// restart.
func WriteApply(w io.Writer, res *ApplyResult) {
	fmt.Fprintln(w, describe(res.Plan.Profile))
	if !res.Changed() {
		fmt.Fprintln(w, "nothing changed: the database already has this profile")
	}
	if len(res.Settings) > 0 {
		fmt.Fprintln(w, "\nALTER SYSTEM:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range res.Settings {
			fmt.Fprintf(tw, "  %s\t%s\t→\t%s\t%s\t\n", s.Name, s.Current, s.Wanted, settingNote(s))
		}
		_ = tw.Flush()
		if res.Reloaded {
			fmt.Fprintln(w, "configuration reloaded (pg_reload_conf)")
		}
	}
	if len(res.Tables) > 0 {
		fmt.Fprintln(w, "\nALTER TABLE ... SET:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range res.Tables {
			cur := t.Current
			if cur == "" {
				cur = "(default)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t→\t%s\t\n", t.Table, t.Param, cur, t.Wanted)
		}
		_ = tw.Flush()
		fmt.Fprintln(w, "(a new fill factor applies to pages written from now on; existing pages keep theirs until rewritten)")
	}
	if len(res.RestartNeeded) > 0 {
		fmt.Fprintf(w, "\nrestart PostgreSQL for these to take effect: %s\n", strings.Join(res.RestartNeeded, ", "))
	}
}

// WritePrewarmSummary writes the end of a prewarm (the progress lines come
// before it).
func WritePrewarmSummary(w io.Writer, res *PrewarmResult) {
	if !res.HasRows {
		fmt.Fprintf(w, "domain %s has no Records: its partitions (%s) were not loaded\n", res.Domain, res.Partition)
	}
	fmt.Fprintf(w, "domain %s (id %d, partition %s): loaded %s of a %s budget (shared_buffers %s)\n",
		res.Domain, res.DomainID, res.Partition, HumanSize(res.Loaded), HumanSize(res.Budget), HumanSize(res.SharedBuffers))
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "budget reached; not loaded: %s\n", strings.Join(res.Skipped, ", "))
	}
	if res.Budget > res.SharedBuffers {
		fmt.Fprintln(w, "warning: the budget exceeds shared_buffers; later relations evicted earlier ones")
	}
}

func pct(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *r*100)
}

func pctRaw(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *r)
}

func rowsText(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

// WriteReport writes a report as tables.
func WriteReport(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "tables (total %s):\n", HumanSize(rep.Total))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TABLE\tHEAP\tINDEXES\tTOTAL\tROWS (est)\tDEAD\tHEAP HIT\tINDEX HIT\tEST FREE\t")
	for _, t := range rep.Tables {
		name := t.Name
		if t.Parent != "" {
			name = "  " + name
		}
		free := "-"
		if t.FreeBytes != nil {
			free = HumanSize(*t.FreeBytes) + " (" + pctRaw(t.FreePct) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, HumanSize(t.Heap), HumanSize(t.Indexes),
			HumanSize(t.Total), rowsText(t.Rows), fmt.Sprintf("%d (%s)", t.DeadTuples, pct(t.DeadRatio)),
			pct(t.HeapHit), pct(t.IndexHit), free)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nindexes:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "INDEX\tTABLE\tSIZE\tSCANS\tHIT\t")
	for _, ix := range rep.Indexes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", ix.Name, ix.Table, HumanSize(ix.Size), ix.Scans, pct(ix.HitRatio))
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nDomain partitions (every hash-partitioned table):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tHEAP\tINDEXES\tTOTAL\tRECORDS (est)\tDOMAINS\t")
	for _, p := range rep.Partitions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t\n", p.Partition, HumanSize(p.Heap), HumanSize(p.Indexes),
			HumanSize(p.Total), p.Records, strings.Join(p.Domains, ", "))
	}
	_ = tw.Flush()
}

// WriteProfiles writes the named profiles side by side.
func WriteProfiles(w io.Writer, ps []*Profile) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t", p.Name)
	}
	fmt.Fprint(tw, "\nmemory\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t", FormatSetting(p.Memory))
	}
	fmt.Fprintln(tw)
	for _, s := range ps[0].Settings {
		fmt.Fprintf(tw, "%s\t", s.Name)
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t", p.Setting(s.Name))
		}
		fmt.Fprintln(tw)
	}
	for ti, t := range ps[0].Tables {
		for pi, prm := range t.Params {
			fmt.Fprintf(tw, "%s_p*.%s\t", t.Table, prm.Name)
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t", p.Tables[ti].Params[pi].Value)
			}
			fmt.Fprintln(tw)
		}
	}
	_ = tw.Flush()
}
