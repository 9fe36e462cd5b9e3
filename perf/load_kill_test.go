package perf_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

// killChildEnv names the database the child process of TestLoadKilled
// loads into.
const killChildEnv = "LOREBASE_PERF_KILLED_LOAD_URL"

// killedLoad is the load the child runs and the test resumes.
func killedLoad() perf.LoadOptions {
	return perf.LoadOptions{Supply: supply.Config{Seed: 9, Scale: 4, ExtraLinks: 1}, BatchSize: 50}
}

// TestLoadKilled kills (SIGKILL) a process loading the dataset once it has
// committed a few batches, then loads again: the second load skips what the
// first committed and commits the rest, and every Record, Link and history
// row is there exactly once.
func TestLoadKilled(t *testing.T) {
	if url := os.Getenv(killChildEnv); url != "" {
		// The child: load until killed.
		ctx := context.Background()
		s, err := store.Open(ctx, url, store.Config{})
		require.NoError(t, err)
		defer s.Close()
		opts := killedLoad()
		opts.SkipVacuum = true
		_, err = perf.Load(ctx, s, opts)
		require.NoError(t, err)
		return
	}
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	t.Cleanup(s.Close)

	var out bytes.Buffer
	child := exec.Command(os.Args[0], "-test.run=^TestLoadKilled$", "-test.count=1")
	child.Env = append(os.Environ(), killChildEnv+"="+url)
	child.Stdout, child.Stderr = &out, &out
	require.NoError(t, child.Start())
	loadCommits := func() int {
		var n int
		err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM revisions WHERE message LIKE 'supply load batch %'`).Scan(&n)
		require.NoError(t, err)
		return n
	}
	deadline := time.Now().Add(2 * time.Minute)
	for loadCommits() < 3 {
		require.True(t, time.Now().Before(deadline), "the child committed nothing: %s", out.String())
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, child.Process.Kill())
	err = child.Wait()
	require.Error(t, err, "killed")
	require.NotContains(t, out.String(), "PASS", "the child was killed before it finished")

	before := loadCommits()
	res, err := perf.Load(ctx, s, killedLoad())
	require.NoError(t, err)
	require.True(t, res.Complete)
	require.Equal(t, before, res.Skipped, "the load goes on after the last batch the killed one committed")
	require.Less(t, res.Skipped, res.Batches)
	require.Equal(t, res.Batches-before, res.Committed)
	checkLoaded(t, s, res.DomainID, killedLoad().Supply)
	var revisions int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM revisions WHERE domain_id = $1`, res.DomainID).Scan(&revisions))
	require.Equal(t, res.Batches+1, revisions, "the schema commit and one commit per batch")
}

// TestLoadProgressBar draws the bar of a small load: the batches, the
// changes, their rate and the time left.
func TestLoadProgressBar(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	cfg := supply.Config{Seed: 3, Scale: 1, ExtraLinks: 1}
	var out bytes.Buffer
	res, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, BatchSize: 100, Progress: &out, ProgressBar: true, SkipVacuum: true})
	require.NoError(t, err)
	require.True(t, res.Complete)
	g, err := supply.New(cfg)
	require.NoError(t, err)
	text := out.String()
	total := g.Counts().Changes()
	for _, want := range []string{
		"supply: batch " + itoa(res.Batches) + "/" + itoa(res.Batches),
		"100%",
		"(" + itoa(total) + "/" + itoa(total) + ", ",
		"changes/s)",
		"supply: " + itoa(res.Batches) + " batches committed",
	} {
		require.Contains(t, text, want)
	}
	require.Regexp(t, `\[\d+[a-z0-9]*:\d+[a-z0-9]*\]`, text, "elapsed:left")
	require.False(t, strings.Contains(text, "supply: batch 1/"+itoa(res.Batches)+", "), "no progress lines beside the bar")
}

func itoa(n int) string { return strconv.Itoa(n) }
