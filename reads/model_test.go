package reads_test

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// The model is an independent Go rendering of the rows the fixture writes
// (per branch: mat_records, mat_history, mat_links, mat_link_history) and
// of the level-chain rule of the branch design, used to check the reads.

type recRow struct {
	Kind, Title string
	Values      map[string]any
	Lineage     map[string]int64
	Created     int64
	Seq         int64
	Versions    int
	Deleted     bool
}

type histRow struct {
	Seq    int64
	Rev    string
	Op     string
	Kind   string
	Title  string
	Values map[string]any // nil for a delete
	Prov   any
}

type lkey struct{ From, Rel, To string }

type linkRow struct {
	Origin  byte
	Seq     int64
	Deleted bool
}

type linkHist struct {
	Seq    int64
	Op     string
	Origin byte
}

type branchModel struct {
	ID      int32
	Name    string
	Mode    string
	State   string
	Base    *branchModel
	ForkSeq int64
	Head    int64
	Recs    map[string]*recRow
	Hist    map[string][]histRow // ascending seq
	Links   map[lkey]*linkRow
	LHist   map[lkey][]linkHist
}

func newBranchModel(id int32, name string) *branchModel {
	return &branchModel{ID: id, Name: name, Mode: "copy", State: "ready", Recs: map[string]*recRow{},
		Hist: map[string][]histRow{}, Links: map[lkey]*linkRow{}, LHist: map[lkey][]linkHist{}}
}

type level struct {
	B   *branchModel
	Cut int64
}

// levels is the chain of b as of cut s; through follows every base (at=).
func levels(b *branchModel, s int64, through bool) []level {
	out := []level{{b, s}}
	for cur := b; cur.Base != nil && (cur.Mode == "overlay" || cur.State == "copying" || through); cur = cur.Base {
		s = min(s, cur.ForkSeq)
		out = append(out, level{cur.Base, s})
	}
	return out
}

// effRec is an effective Record version.
type effRec struct {
	Present bool
	Level   int
	Cur     bool // the level's mat_records row
	Key     string
	Kind    string
	Title   string
	Values  map[string]any
	Seq     int64
	Row     *recRow
}

func (l level) say(key string) (effRec, bool) {
	r, ok := l.B.Recs[key]
	if !ok {
		return effRec{}, false
	}
	if r.Seq <= l.Cut {
		return effRec{Present: !r.Deleted, Cur: true, Key: key, Kind: r.Kind, Title: r.Title, Values: r.Values, Seq: r.Seq, Row: r}, true
	}
	hs := l.B.Hist[key]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Seq <= l.Cut {
			h := hs[i]
			return effRec{Present: h.Op != "delete", Key: key, Kind: h.Kind, Title: h.Title, Values: h.Values, Seq: h.Seq}, true
		}
	}
	return effRec{}, false
}

func effective(ls []level, key string) effRec {
	for i, l := range ls {
		if e, ok := l.say(key); ok {
			e.Level = i
			return e
		}
	}
	return effRec{}
}

// chainHist is the history of key over the levels, newest first.
func chainHist(ls []level, key string) []histRow {
	seen := map[int64]bool{}
	var out []histRow
	for _, l := range ls {
		for _, h := range l.B.Hist[key] {
			if h.Seq <= l.Cut && !seen[h.Seq] {
				seen[h.Seq] = true
				out = append(out, h)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq > out[j].Seq })
	return out
}

// meta is the lineage, creation and number of versions of an effective
// Record: its row's, or computed from the history since its creation.
func meta(ls []level, e effRec) (map[string]int64, int64, int) {
	if e.Cur {
		return e.Row.Lineage, e.Row.Created, e.Row.Versions
	}
	var hist []histRow
	for _, h := range chainHist(ls, e.Key) {
		if h.Seq <= e.Seq {
			hist = append([]histRow{h}, hist...)
		}
	}
	start := 0
	for i, h := range hist {
		if h.Op == "delete" {
			start = i + 1
		}
	}
	lin := map[string]int64{}
	var prev map[string]any
	for i, h := range hist[start:] {
		for k := range unionKeys(h.Values, prev) {
			if i == 0 || fmt.Sprint(h.Values[k]) != fmt.Sprint(prev[k]) || hasKey(h.Values, k) != hasKey(prev, k) {
				if i == 0 && !hasKey(h.Values, k) {
					continue
				}
				lin[k] = h.Seq
			}
		}
		prev = h.Values
	}
	return lin, hist[start].Seq, len(hist)
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func unionKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// allKeys are the Record keys of every level.
func allKeys(ls []level) []string {
	set := map[string]bool{}
	for _, l := range ls {
		for k := range l.B.Recs {
			set[k] = true
		}
		for k := range l.B.Hist {
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// present are the effective present Records in key order.
func present(ls []level) []effRec {
	var out []effRec
	for _, k := range allKeys(ls) {
		if e := effective(ls, k); e.Present {
			out = append(out, e)
		}
	}
	return out
}

type effLink struct {
	Present bool
	Origin  byte
}

func effectiveLink(ls []level, k lkey) effLink {
	for _, l := range ls {
		r, ok := l.B.Links[k]
		if !ok {
			continue
		}
		if r.Seq <= l.Cut {
			return effLink{!r.Deleted, r.Origin}
		}
		hs := l.B.LHist[k]
		for i := len(hs) - 1; i >= 0; i-- {
			if hs[i].Seq <= l.Cut {
				return effLink{hs[i].Op == "link", hs[i].Origin}
			}
		}
	}
	return effLink{}
}

// presentLinks are the effective present Links.
func presentLinks(ls []level) map[lkey]byte {
	out := map[lkey]byte{}
	for _, l := range ls {
		for k := range l.B.Links {
			if _, done := out[k]; done {
				continue
			}
			if e := effectiveLink(ls, k); e.Present {
				out[k] = e.Origin
			}
		}
	}
	return out
}

// words are the lexemes of the 'simple' configuration for plain ASCII text.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
}

// searchWords are the words of a Record version's search vector (title
// and the Part note).
func searchWords(e effRec) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(e.Title) {
		out[w] = true
	}
	if n, ok := e.Values["note"].(string); ok && e.Kind == "Part" {
		for _, w := range words(n) {
			out[w] = true
		}
	}
	return out
}

func cloneValues(m map[string]any) map[string]any {
	out := map[string]any{}
	maps.Copy(out, m)
	return out
}
