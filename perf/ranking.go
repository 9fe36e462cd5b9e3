package perf

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/reads"
)

// RankingClasses are the query classes of the ranking measurement, in
// report order.
var RankingClasses = []string{"rare word", "common word", "two common words", "title word and a common one", "misspelled", "partial"}

// RankingK is the depth of the ranking measures (overlap@K, NDCG@K) and the
// number of results a measured search returns.
const RankingK = 20

// RankingQuery is one query of a class.
type RankingQuery struct {
	Class string `json:"class"`
	Q     string `json:"q"`
}

// RankingClass is the measure of one search path over the queries of one
// class, against the exhaustive ranking of every match.
type RankingClass struct {
	Class   string `json:"class"`
	Queries int    `json:"queries"`
	// Matches is the median number of Records the queries match (full
	// matches, or partial ones when the query falls back to them).
	Matches int `json:"matches"`
	// Overlap is the mean overlap@K counting ties: a Record of the
	// exhaustive top K above the K-th best gain counts when returned, and
	// Records tied with the K-th gain are interchangeable for the slots the
	// tie has in the top K. MinOverlap is the worst query's.
	Overlap    float64 `json:"overlap"`
	MinOverlap float64 `json:"min_overlap"`
	// StrictOverlap is the mean overlap@K with the exhaustive top K in
	// (gain, key) order: ties broken by key, as the SQL orders them.
	StrictOverlap float64 `json:"strict_overlap"`
	// NDCG is the mean NDCG@K with each Record's exhaustive gain.
	NDCG float64 `json:"ndcg"`
	// Truncated is the number of queries whose answer said its ranking
	// was truncated.
	Truncated int   `json:"truncated"`
	Latency   Stats `json:"latency"`
}

// SearchPath is one way of searching measured by MeasureRanking.
type SearchPath struct {
	Name    string         `json:"name"`
	Note    string         `json:"note,omitempty"`
	Classes []RankingClass `json:"classes,omitempty"`
	Error   string         `json:"error,omitempty"`
	run     func(ctx context.Context, q string) (searchAnswer, error)
}

// Ranking is the ranking measurement: the served search (package reads,
// as lorebase_app) and the candidate search paths, over the same queries.
type Ranking struct {
	Queries []RankingQuery `json:"queries"`
	Paths   []SearchPath   `json:"paths"`
	// Exhaustive is the time the exhaustive rankings took, in total.
	Exhaustive time.Duration `json:"exhaustive_ns"`
	// Setup is what the candidates' preparation did (index and table
	// builds), with its time.
	Setup []string `json:"setup,omitempty"`
}

// RankingOptions choose the measurement.
type RankingOptions struct {
	// PerClass is the number of queries of each class.
	PerClass int
	// Repeats is the number of timed calls of each query per path (after
	// one untimed call).
	Repeats int
	// Candidates adds the candidate search paths (the RUM index, the GIN
	// index with every match ranked, impact-ordered postings) to the
	// served one.
	Candidates bool
	Log        func(format string, args ...any)
}

type scored struct {
	key  string
	gain float64
}

type searchAnswer struct {
	results   []scored
	truncated bool
}

// RankingQueries draws PerClass queries of each class from the branch's
// word lexicon, the dataset's titles and the workload's query helpers.
func (w *Workload) RankingQueries(ctx context.Context, perClass int) ([]RankingQuery, error) {
	type wc struct {
		word    string
		records int64
	}
	var lex []wc
	rows, err := w.Store.Pool.Query(ctx, `SELECT word, records FROM mat_lexicon
		WHERE domain_id = $1 AND branch_id = $2 AND word ~ '^[a-z]{3,}$' ORDER BY records DESC, word`, w.DomainID, w.BranchID)
	if err != nil {
		return nil, fmt.Errorf("ranking queries: read lexicon: %w", err)
	}
	for rows.Next() {
		var x wc
		if err := rows.Scan(&x.word, &x.records); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ranking queries: read lexicon: %w", err)
		}
		lex = append(lex, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ranking queries: read lexicon: %w", err)
	}
	if len(lex) < 20 {
		return nil, fmt.Errorf("ranking queries: the lexicon holds %d words", len(lex))
	}
	common := lex[:10]
	var rare []wc
	for _, x := range lex {
		if x.records >= 2 && x.records <= 100 {
			rare = append(rare, x)
		}
	}
	if len(rare) == 0 {
		rare = lex[len(lex)/2:]
	}
	r := w.rand(41)
	titles, err := w.randomTitles(ctx, perClass)
	if err != nil {
		return nil, err
	}
	phrases := supply.Queries(w.Seed+41, perClass)
	var out []RankingQuery
	add := func(class, q string) { out = append(out, RankingQuery{class, q}) }
	for i := range perClass {
		add("rare word", rare[r.IntN(len(rare))].word)
		add("common word", common[i%len(common)].word)
		a := r.IntN(len(common))
		b := (a + 1 + r.IntN(len(common)-1)) % len(common)
		add("two common words", common[a].word+" "+common[b].word)
		add("title word and a common one", titles[i%len(titles)]+" "+common[r.IntN(len(common))].word)
		for range 10 {
			if m, ok := supply.Misspell(lex[r.IntN(30)].word); ok {
				add("misspelled", m)
				break
			}
		}
		add("partial", phrases[i])
	}
	slices.SortStableFunc(out, func(x, y RankingQuery) int {
		return cmp.Compare(slices.Index(RankingClasses, x.Class), slices.Index(RankingClasses, y.Class))
	})
	return out, nil
}

var titleWord = regexp.MustCompile(`^[a-z]{4,}$`)

// randomTitles draws a word of at least four letters from the titles of
// n random Records (one word per Record holding one).
func (w *Workload) randomTitles(ctx context.Context, n int) ([]string, error) {
	r := w.rand(43)
	keys := make([]string, 0, 4*n)
	for range 4 * n {
		keys = append(keys, w.randomKey(r).key)
	}
	rows, err := w.Store.Pool.Query(ctx, `SELECT title FROM mat_records
		WHERE domain_id = $1 AND branch_id = $2 AND key = ANY($3) AND NOT deleted ORDER BY key`, w.DomainID, w.BranchID, keys)
	if err != nil {
		return nil, fmt.Errorf("ranking queries: read titles: %w", err)
	}
	titles, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("ranking queries: read titles: %w", err)
	}
	var out []string
	for _, t := range titles {
		var words []string
		for _, x := range strings.Fields(strings.ToLower(t)) {
			if titleWord.MatchString(x) {
				words = append(words, x)
			}
		}
		if len(words) > 0 {
			out = append(out, words[r.IntN(len(words))])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ranking queries: no title word among %d Records", len(titles))
	}
	return out, nil
}

// searchSpec is a search statement's shape: lb_search's full match over
// main (lb_search_full_sql) with Candidates candidates, read in rank order
// from the RUM index when Ordered, then its partial match when fewer than
// the partial minimum match in full.
type searchSpec struct {
	Candidates, Limit, PartialCandidates int
	Ordered                              bool
}

// ownerTx runs fn in a read-only transaction of the owner with the
// Domain set (the read functions read it with lb_domain()).
func (w *Workload) ownerTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, w.Store.Pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('lorebase.domain_id', $1, true)`, strconv.Itoa(int(w.DomainID))); err != nil {
			return err
		}
		return fn(tx)
	})
}

// terms returns the query's terms as lb_search computes them (corrections
// included), as tsquery text.
func (w *Workload) searchTerms(ctx context.Context, tx pgx.Tx, q string) ([]string, error) {
	var terms []string
	err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(term::text), '{}') FROM lb_search_terms($1, $2)`, w.BranchID, q).Scan(&terms)
	return terms, err
}

func fullQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "(" + t + ")"
	}
	return strings.Join(parts, " & ")
}

// gain maps a result's score to its gain: every full match above every
// partial one (lb_search puts them first), higher scores higher.
func gain(match string, score float64) float64 {
	g := score / (1 + score)
	if match == "full" {
		g++
	}
	return g
}

// runStatement executes a statement of lb_search_full_sql or
// lb_search_partial_sql and appends its rows.
func runStatement(ctx context.Context, tx pgx.Tx, stmt string, ans *searchAnswer) (int, error) {
	rows, err := tx.Query(ctx, stmt)
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		var key, kind, title, match string
		var score float32
		var corr []byte
		var ranked int
		var truncated bool
		if err := rows.Scan(&key, &kind, &title, &score, &match, &corr, &ranked, &truncated); err != nil {
			rows.Close()
			return 0, err
		}
		ans.results = append(ans.results, scored{key, gain(match, float64(score))})
		ans.truncated = ans.truncated || truncated
		n++
	}
	rows.Close()
	return n, rows.Err()
}

// search runs lb_search's statements over main with the spec, as the
// owner: what lb_search does, with the candidates and order of the spec.
func (w *Workload) search(ctx context.Context, q string, spec searchSpec) (searchAnswer, error) {
	var ans searchAnswer
	def := reads.DefaultConfig()
	err := w.ownerTx(ctx, func(tx pgx.Tx) error {
		terms, err := w.searchTerms(ctx, tx, q)
		if err != nil || len(terms) == 0 {
			return err
		}
		fq := fullQuery(terms)
		var stmt string
		if err := tx.QueryRow(ctx, `SELECT lb_search_full_sql(lb_search_source($1, $2, NULL), '', $3::tsquery[], $4, $5, $6)`,
			w.DomainID, w.BranchID, terms, spec.Candidates, spec.Limit, spec.Ordered).Scan(&stmt); err != nil {
			return err
		}
		n, err := runStatement(ctx, tx, stmt, &ans)
		if err != nil {
			return err
		}
		return w.partial(ctx, tx, terms, fq, n, def.PartialMinResults, spec, &ans)
	})
	return ans, err
}

// partial runs lb_search's partial match when lb_search would: fewer than
// min full matches, fewer than the limit, more than one term; up to 6
// terms tier by tier (the most terms matched first) as lb_search does,
// in one statement when the spec has no limit (the exhaustive ranking).
func (w *Workload) partial(ctx context.Context, tx pgx.Tx, terms []string, fq string, n, minFull int, spec searchSpec, ans *searchAnswer) error {
	if n >= minFull || n >= spec.Limit || len(terms) < 2 {
		return nil
	}
	src := `lb_search_source($1, $2, NULL)`
	if spec.Limit == math.MaxInt32 || len(terms) > 6 {
		var stmt string
		if err := tx.QueryRow(ctx, `SELECT lb_search_partial_sql(`+src+`, '', $3::tsquery[], $4::tsquery, $5, $6, $7)`,
			w.DomainID, w.BranchID, terms, fq, spec.PartialCandidates, spec.Limit-n, spec.Ordered).Scan(&stmt); err != nil {
			return err
		}
		_, err := runStatement(ctx, tx, stmt, ans)
		return err
	}
	for k := len(terms) - 1; k >= 1 && n < spec.Limit; k-- {
		var stmt string
		if err := tx.QueryRow(ctx, `SELECT lb_search_partial_sql(`+src+`, '', $3::tsquery[], $4::tsquery, $5, $6, $7, $8)`,
			w.DomainID, w.BranchID, terms, fq, spec.PartialCandidates, spec.Limit-n, spec.Ordered, k).Scan(&stmt); err != nil {
			return err
		}
		m, err := runStatement(ctx, tx, stmt, ans)
		if err != nil {
			return err
		}
		n += m
	}
	return nil
}

// exhaustive ranks every match, with no candidate cap and no limit.
func (w *Workload) exhaustive(ctx context.Context, q string) (searchAnswer, error) {
	return w.search(ctx, q, searchSpec{Candidates: math.MaxInt32, Limit: math.MaxInt32, PartialCandidates: math.MaxInt32})
}

// served runs the search Keeper serves (package reads, lorebase_app).
func (w *Workload) served(ctx context.Context, q string) (searchAnswer, error) {
	res, err := w.Reader.Search(ctx, w.DomainID, Branch, reads.SearchQuery{Q: q, Limit: RankingK})
	if err != nil {
		return searchAnswer{}, err
	}
	ans := searchAnswer{truncated: res.Truncated}
	for _, x := range res.Results {
		ans.results = append(ans.results, scored{x.Key, gain(x.Match, float64(x.Score))})
	}
	return ans, nil
}

// scoreRanking computes the tie-aware overlap@K, the strict overlap@K and
// NDCG@K of got against the exhaustive ranking ex (best first).
func scoreRanking(got []scored, ex []scored) (overlap, strict, ndcg float64) {
	k := min(RankingK, len(ex))
	if k == 0 {
		if len(got) == 0 {
			return 1, 1, 1
		}
		return 0, 0, 0
	}
	got = got[:min(len(got), RankingK)]
	gains := make(map[string]float64, len(ex))
	for _, x := range ex {
		gains[x.key] = x.gain
	}
	top := make(map[string]bool, k)
	for _, x := range ex[:k] {
		top[x.key] = true
	}
	// Records above the K-th gain must be there themselves; those tied
	// with it are interchangeable for the slots the tie has in the top K.
	const eps = 1e-6
	threshold := ex[k-1].gain
	above := 0
	for _, x := range ex[:k] {
		if x.gain > threshold+eps {
			above++
		}
	}
	gotAbove, gotTied, same := 0, 0, 0
	var dcg, idcg float64
	for i, x := range got {
		g, ok := gains[x.key]
		switch {
		case ok && g > threshold+eps:
			gotAbove++
		case ok && g >= threshold-eps:
			gotTied++
		}
		if top[x.key] {
			same++
		}
		dcg += g / math.Log2(float64(i)+2)
	}
	for i, x := range ex[:k] {
		idcg += x.gain / math.Log2(float64(i)+2)
	}
	overlap = float64(gotAbove+min(gotTied, k-above)) / float64(k)
	strict = float64(same) / float64(k)
	if idcg > 0 {
		ndcg = min(dcg/idcg, 1)
	}
	return overlap, strict, ndcg
}

// MeasureRanking measures, per query class, the served search and (with
// Candidates) the candidate search paths: their latency, and the overlap
// and NDCG of what they return against the exhaustive ranking of every
// match by the same scoring (lb_search's statements without candidate cap
// or limit), computed once per query.
func (w *Workload) MeasureRanking(ctx context.Context, opt RankingOptions) (*Ranking, error) {
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	qs, err := w.RankingQueries(ctx, max(opt.PerClass, 1))
	if err != nil {
		return nil, err
	}
	rk := &Ranking{Queries: qs}
	def := reads.DefaultConfig()
	paths := []SearchPath{{Name: "served (package reads, lorebase_app)", Note: "what Keeper answers: lb_search as lorebase_app", run: w.served}}
	if opt.Candidates {
		rum, setup, err := w.ensureRUM(ctx)
		if err != nil {
			return nil, fmt.Errorf("ranking: %w", err)
		}
		if setup != "" {
			rk.Setup = append(rk.Setup, setup)
		}
		spec := func(cands int, ordered bool) func(ctx context.Context, q string) (searchAnswer, error) {
			partial := def.PartialCandidates
			if cands == math.MaxInt32 {
				partial = cands
			}
			return func(ctx context.Context, q string) (searchAnswer, error) {
				return w.search(ctx, q, searchSpec{Candidates: cands, Limit: RankingK, PartialCandidates: partial, Ordered: ordered})
			}
		}
		paths = append(paths,
			SearchPath{Name: "GIN, first 1,000 matches ranked", Note: "lb_search's full match of several words", run: spec(def.SearchCandidates, false)},
			SearchPath{Name: "GIN, every match ranked", Note: "no candidate cap: honest by construction", run: spec(math.MaxInt32, false)})
		if rum {
			paths = append(paths,
				SearchPath{Name: "RUM, best 1,000 in rank order", Note: "ORDER BY search <=> q LIMIT 1000, re-ranked", run: spec(def.SearchCandidates, true)},
				SearchPath{Name: "RUM, best 100 in rank order", Note: "an earlier stop of the same ordered scan", run: spec(100, true)})
		} else {
			paths = append(paths, SearchPath{Name: "RUM", Error: "the rum extension is not available on the server"})
		}
		start := time.Now()
		if err := w.buildImpact(ctx); err != nil {
			paths = append(paths, SearchPath{Name: "impact-ordered postings", Error: err.Error()})
		} else {
			rk.Setup = append(rk.Setup, fmt.Sprintf("impact-ordered postings table built in %s ms", ms(time.Since(start))))
			paths = append(paths, SearchPath{Name: "impact-ordered postings, best 1,000 of the rarest term",
				Note: "prototype table built by the harness (not kept by commits), re-ranked", run: w.impactSearch(def.SearchCandidates)})
		}
	}
	start := time.Now()
	ex := make([]searchAnswer, len(qs))
	for i, q := range qs {
		if ex[i], err = w.exhaustive(ctx, q.Q); err != nil {
			return nil, fmt.Errorf("ranking: exhaustive %q: %w", q.Q, err)
		}
	}
	rk.Exhaustive = time.Since(start)
	logf("perf: ranking: exhaustive rankings of %d queries in %s ms", len(qs), ms(rk.Exhaustive))
	for pi := range paths {
		p := &paths[pi]
		if p.run == nil {
			continue
		}
		if err := measurePath(ctx, p, qs, ex, max(opt.Repeats, 1)); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p.Error = err.Error()
		}
		for _, c := range p.Classes {
			logf("perf: ranking: %-50s %-28s overlap %.3f (min %.2f) ndcg %.3f p50 %s p95 %s truncated %d/%d",
				p.Name, c.Class, c.Overlap, c.MinOverlap, c.NDCG, ms(c.Latency.P50), ms(c.Latency.P95), c.Truncated, c.Queries)
		}
	}
	rk.Paths = paths
	return rk, nil
}

func measurePath(ctx context.Context, p *SearchPath, qs []RankingQuery, ex []searchAnswer, repeats int) error {
	for _, class := range RankingClasses {
		c := RankingClass{Class: class, MinOverlap: 1}
		var lat []time.Duration
		var matches []int
		for i, q := range qs {
			if q.Class != class {
				continue
			}
			ans, err := p.run(ctx, q.Q)
			if err != nil {
				return fmt.Errorf("%s %q: %w", class, q.Q, err)
			}
			for range repeats {
				start := time.Now()
				if _, err := p.run(ctx, q.Q); err != nil {
					return fmt.Errorf("%s %q: %w", class, q.Q, err)
				}
				lat = append(lat, time.Since(start))
			}
			o, s, n := scoreRanking(ans.results, ex[i].results)
			c.Queries++
			c.Overlap += o
			c.StrictOverlap += s
			c.NDCG += n
			c.MinOverlap = min(c.MinOverlap, o)
			if ans.truncated {
				c.Truncated++
			}
			matches = append(matches, len(ex[i].results))
		}
		if c.Queries == 0 {
			continue
		}
		f := float64(c.Queries)
		c.Overlap, c.StrictOverlap, c.NDCG = c.Overlap/f, c.StrictOverlap/f, c.NDCG/f
		slices.Sort(matches)
		c.Matches = matches[(len(matches)-1)/2]
		c.Latency = Summarize(lat)
		p.Classes = append(p.Classes, c)
	}
	return nil
}

// ensureRUM creates the RUM index mat_records_search_rum_idx in the
// measured database when the server has the rum extension (migration 0008
// does not create it). It reports whether the index exists and what it did.
// With the index present the served search reads partial matches from it.
func (w *Workload) ensureRUM(ctx context.Context) (bool, string, error) {
	var have, avail bool
	if err := w.Store.Pool.QueryRow(ctx, `SELECT to_regclass('mat_records_search_rum_idx') IS NOT NULL,
		EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'rum')`).Scan(&have, &avail); err != nil {
		return false, "", err
	}
	if have || !avail {
		return have, "", nil
	}
	start := time.Now()
	for _, stmt := range []string{`CREATE EXTENSION IF NOT EXISTS rum`,
		`CREATE INDEX mat_records_search_rum_idx ON mat_records USING rum (search rum_tsvector_ops)`, `ANALYZE mat_records`} {
		if _, err := w.Store.Pool.Exec(ctx, stmt); err != nil {
			return false, "", fmt.Errorf("rum index: %w", err)
		}
	}
	return true, fmt.Sprintf("RUM index mat_records_search_rum_idx built in %s ms (the served path then reads partial matches from it)", ms(time.Since(start))), nil
}

// buildImpact builds the prototype impact-ordered postings of main: one
// row per Record and word with the Record's rank for that word alone (its
// static score), indexed best first per word.
func (w *Workload) buildImpact(ctx context.Context) error {
	for _, stmt := range []string{
		`DROP TABLE IF EXISTS perf_search_impact`,
		fmt.Sprintf(`CREATE TABLE perf_search_impact AS
			SELECT x.word, ts_rank(m.search, x.word::tsquery) AS score, m.key
			  FROM mat_records m CROSS JOIN LATERAL unnest(tsvector_to_array(m.search)) x(word)
			 WHERE m.domain_id = %d AND m.branch_id = %d AND NOT m.deleted`, w.DomainID, w.BranchID),
		`CREATE INDEX perf_search_impact_idx ON perf_search_impact (word, score DESC, key)`,
		`ANALYZE perf_search_impact`,
	} {
		if _, err := w.Store.Pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("impact postings: %w", err)
		}
	}
	return nil
}

var lexemeRE = regexp.MustCompile(`'((?:[^']|'')*)'`)

// impactSearch takes the best cands postings of the query's rarest term
// (of each of its lexemes, a corrected word having several), keeps the
// Records matching every term and ranks them as lb_search does; the
// partial match is lb_search's.
func (w *Workload) impactSearch(cands int) func(ctx context.Context, q string) (searchAnswer, error) {
	return func(ctx context.Context, q string) (searchAnswer, error) {
		var ans searchAnswer
		def := reads.DefaultConfig()
		err := w.ownerTx(ctx, func(tx pgx.Tx) error {
			terms, err := w.searchTerms(ctx, tx, q)
			if err != nil || len(terms) == 0 {
				return err
			}
			best, bestN := []string(nil), int64(math.MaxInt64)
			for _, t := range terms {
				var lex []string
				for _, m := range lexemeRE.FindAllStringSubmatch(t, -1) {
					lex = append(lex, strings.ReplaceAll(m[1], "''", "'"))
				}
				var n int64
				if err := tx.QueryRow(ctx, `SELECT coalesce(sum(records), 0) FROM mat_lexicon
					WHERE domain_id = $1 AND branch_id = $2 AND word = ANY($3)`, w.DomainID, w.BranchID, lex).Scan(&n); err != nil {
					return err
				}
				if n < bestN {
					best, bestN = lex, n
				}
			}
			take := cands
			if len(terms) == 1 && len(best) == 1 {
				// One word: its static score is the query's score, so its
				// best postings are the answer.
				take = RankingK
			}
			parts := make([]string, len(best))
			for i, l := range best {
				parts[i] = fmt.Sprintf(`(SELECT key, score FROM perf_search_impact WHERE word = %s ORDER BY score DESC, key LIMIT %d)`,
					quoteLiteral(l), take)
			}
			fq := fullQuery(terms)
			stmt := fmt.Sprintf(`SELECT m.key::text, m.kind::text, m.title, ts_rank(m.search, %[1]s::tsquery), 'full'::text, NULL::jsonb,
				(count(*) OVER ())::integer, false
			  FROM (SELECT DISTINCT key FROM (SELECT key FROM (%[2]s) u ORDER BY score DESC, key LIMIT %[3]d) v) i
			  JOIN mat_records m ON m.domain_id = %[4]d AND m.branch_id = %[5]d AND m.key = i.key AND NOT m.deleted
			 WHERE m.search @@ %[1]s::tsquery
			 ORDER BY 4 DESC, m.key LIMIT %[6]d`, quoteLiteral(fq), strings.Join(parts, " UNION ALL "), take, w.DomainID, w.BranchID, RankingK)
			n, err := runStatement(ctx, tx, stmt, &ans)
			if err != nil {
				return err
			}
			ans.truncated = take != RankingK && bestN > int64(cands)
			return w.partial(ctx, tx, terms, fq, n, def.PartialMinResults,
				searchSpec{Limit: RankingK, PartialCandidates: def.PartialCandidates}, &ans)
		})
		return ans, err
	}
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// writeRanking writes the ranking section of the report.
func (r *Report) writeRanking(p func(string, ...any)) {
	if r.Ranking == nil {
		if r.RankingSkipped != "" {
			p("")
			p("## Search ranking")
			p("")
			p("Not measured: %s", r.RankingSkipped)
		}
		return
	}
	rk := r.Ranking
	p("")
	p("## Search ranking (top %d against every match ranked)", RankingK)
	p("")
	perClass := 0
	for _, q := range rk.Queries {
		if q.Class == RankingClasses[0] {
			perClass++
		}
	}
	p("%d queries per class (rare word: 2 to 100 Records in the lexicon; common: the 10 most common words; misspelled: one of the 30 most common with two middle letters swapped; partial: three descriptive words). Each query's exhaustive ranking is lb_search's own statements over main with no candidate cap and no limit (%s ms for all). overlap: mean overlap@%d where the Records above the %d-th best gain count when returned and those tied with it are interchangeable for the tie's slots; min: the worst query's; strict: overlap with the top %d in (score, key) order; NDCG@%d with each Record's exhaustive gain (full matches above partial ones, then the score). Latency: milliseconds over every timed call (owner transactions for the candidates; package reads as lorebase_app for the served path). truncated: queries whose answer said its ranking was truncated.",
		perClass, ms(rk.Exhaustive), RankingK, RankingK, RankingK, RankingK)
	for _, s := range rk.Setup {
		p("")
		p("- %s", s)
	}
	p("")
	p("| Search path | Class | Matches (median) | overlap | min | strict | NDCG | p50 | p95 | truncated |")
	p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, path := range rk.Paths {
		if path.Error != "" {
			p("| %s | not measured: %s | | | | | | | | |", path.Name, path.Error)
		}
		for _, c := range path.Classes {
			p("| %s | %s | %s | %.3f | %.2f | %.3f | %.3f | %s | %s | %d/%d |", path.Name, c.Class, thousands(int64(c.Matches)),
				c.Overlap, c.MinOverlap, c.StrictOverlap, c.NDCG, ms(c.Latency.P50), ms(c.Latency.P95), c.Truncated, c.Queries)
		}
	}
	p("")
	p("Queries:")
	p("")
	for _, class := range RankingClasses {
		var qs []string
		for _, q := range rk.Queries {
			if q.Class == class {
				qs = append(qs, "`"+q.Q+"`")
			}
		}
		p("- %s: %s", class, strings.Join(qs, ", "))
	}
}
