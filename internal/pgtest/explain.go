package pgtest

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// AutoExplain opens a connection with the settings of pool (its role
// included) on which auto_explain reports the plan of every statement,
// nested ones included (and their row counts with analyze), as notices.
// plans returns the plans reported so far, each its message and detail,
// and forgets them. The connection closes when the test ends.
func AutoExplain(t testing.TB, pool *pgxpool.Pool, analyze bool) (conn *pgx.Conn, plans func() []string) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var got []string
	cfg := pool.Config().ConnConfig.Copy()
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, n.Message+"\n"+n.Detail)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("auto_explain connection: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	set := []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
		`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_level = notice`}
	if analyze {
		set = append(set, `SET auto_explain.log_analyze = on`)
	}
	for _, q := range set {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return conn, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
}

// AutoExplainGeneric is AutoExplain with analyze, plans reported in JSON
// (ParseExplained reads them) and every statement run by a generic plan
// (plan_cache_mode force_generic_plan), the plan a pooled session keeps
// from a prepared statement's sixth execution.
func AutoExplainGeneric(t testing.TB, pool *pgxpool.Pool) (conn *pgx.Conn, plans func() []string) {
	t.Helper()
	conn, plans = AutoExplain(t, pool, true)
	for _, q := range []string{`SET auto_explain.log_format = json`, `SET plan_cache_mode = force_generic_plan`} {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return conn, plans
}
