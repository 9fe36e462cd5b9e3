package perf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// AnswerCheck compares one read's answers on the overlay and on the
// branch it is read against, call by call with the same inputs.
type AnswerCheck struct {
	Name      string `json:"name"`
	Calls     int    `json:"calls"`
	Different int    `json:"different"`
	// First shows the first call whose answers differ.
	First string `json:"first,omitempty"`
}

// answers compares the overlay's answers with the copy's (or main's).
func (b *branchRun) answers(ctx context.Context) error {
	checks, err := b.w.CompareAnswers(ctx, b.overlayBranch(), b.againstBranch(), b.opts.AnswerCalls)
	b.out.Answers = checks
	if err != nil {
		return err
	}
	var differ []string
	for _, c := range checks {
		b.logf("perf: %-40s answers: %d of %d calls differ", c.Name, c.Different, c.Calls)
		if c.Different > 0 {
			differ = append(differ, fmt.Sprintf("%s %d of %d", c.Name, c.Different, c.Calls))
		}
	}
	if len(differ) > 0 {
		return fmt.Errorf("the overlay answered otherwise than %s: %s", b.out.Against, strings.Join(differ, ", "))
	}
	return nil
}

// CompareAnswers makes each read's first calls (20 when calls is 0) on
// branch a and on branch b with the same inputs, and compares what they
// answer. What names a branch's own commits (Revision ids, sequence
// numbers, times) is left out: an overlay answers exactly as a copy holding
// the same Records does.
func (w *Workload) CompareAnswers(ctx context.Context, a, b string, calls int) ([]AnswerCheck, error) {
	if calls <= 0 {
		calls = 20
	}
	ra, rb := w.ReadsOn(a), w.ReadsOn(b)
	var out []AnswerCheck
	for i := range ra {
		if ra[i].Answer == nil || rb[i].Answer == nil {
			continue
		}
		c := AnswerCheck{Name: ra[i].Name}
		for call := 1; call <= calls; call++ {
			got, gerr := ra[i].Answer(ctx)
			want, werr := rb[i].Answer(ctx)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			c.Calls++
			g, h := answerText(got, gerr), answerText(want, werr)
			if g == h {
				continue
			}
			c.Different++
			if c.First == "" {
				c.First = fmt.Sprintf("call %d: %s %s; %s %s", call, a, clip(g, 300), b, clip(h, 300))
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// answerText is a read's answer as comparable text, without what names the
// branch's own commits. A Record missing on both branches compares equal.
func answerText(v any, err error) string {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "not found"
	case err != nil:
		return "error: " + err.Error()
	}
	type record struct {
		Key, Kind, Title string
		Values           json.RawMessage
	}
	type change struct {
		Op, Author, Message string
		Values, Provenance  json.RawMessage
	}
	type origin struct {
		Value      json.RawMessage
		Author     string
		Provenance json.RawMessage
	}
	var out any
	switch a := v.(type) {
	case *reads.Record:
		out = record{a.Key, a.Kind, a.Title, a.Values}
	case *reads.Page:
		rs := make([]record, len(a.Records))
		for i, r := range a.Records {
			rs[i] = record{r.Key, r.Kind, r.Title, r.Values}
		}
		out = struct {
			Records []record
			Next    string
			Count   *reads.RecordCount
		}{rs, a.Next, a.Count}
	case *reads.History:
		cs := make([]change, len(a.Entries))
		for i, e := range a.Entries {
			cs[i] = change{e.Op, e.Author, e.Message, e.Values, e.Provenance}
		}
		out = struct {
			Entries []change
			More    bool
		}{cs, a.Next != ""}
	case *reads.Lineage:
		vs := make(map[string]origin, len(a.Values))
		for k, o := range a.Values {
			vs[k] = origin{o.Value, o.Author, o.Provenance}
		}
		out = struct {
			Key, Kind string
			Created   origin
			Changes   int
			Values    map[string]origin
		}{a.Key, a.Kind, origin{a.Created.Value, a.Created.Author, a.Created.Provenance}, a.Changes, vs}
	case *reads.SearchResults:
		out = struct {
			Results     []reads.SearchResult
			Corrections map[string][]string
		}{a.Results, a.Corrections}
	default:
		// Links, neighborhoods and candidates name no commit.
		out = v
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		return "unencodable answer: " + merr.Error()
	}
	return string(b)
}

// clip shortens s to at most n bytes for a report.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
