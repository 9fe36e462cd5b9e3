package keeper

import (
	"context"
	"net/http"
	"time"

	"github.com/lorebase/lorebase/store"
)

// healthz is liveness: the process answers.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readiness is the body of /readyz. It needs no token, so it says what is
// missing but not which versions the database is at (they are logged).
type readiness struct {
	Status   string `json:"status"`
	Database string `json:"database"`
	// VectorSearch is how semantic search runs: exact, or hnsw where
	// pgvector is installed.
	VectorSearch string   `json:"vector_search,omitempty"`
	Missing      []string `json:"missing,omitempty"`
}

// readyz is readiness: the database answers and its migrations are up to
// date. Otherwise 503 saying what is missing.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	out := readiness{Status: "ready", Database: "ok"}
	if err := s.store.Pool.Ping(ctx); err != nil {
		s.log.WarnContext(ctx, "readiness: database unreachable", "error", err.Error())
		out.Status, out.Database = "unavailable", "unreachable"
		out.Missing = append(out.Missing, "database: not reachable")
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	st, err := s.store.Migrations(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "readiness: migration state unreadable", "error", err.Error())
		out.Status = "unavailable"
		out.Missing = append(out.Missing, "migrations: state could not be read")
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	if !st.UpToDate() {
		s.log.WarnContext(ctx, "readiness: migrations behind", "lorebase", st.Current, "lorebase_latest", st.Latest, "dirty", st.Dirty,
			"river", st.RiverCurrent, "river_latest", st.RiverLatest, "functions_pending", st.FunctionsPending)
		out.Status = "unavailable"
		if st.Dirty {
			out.Missing = append(out.Missing, "migrations: the last migration failed halfway (dirty); fix it and run keeper migrate")
		} else {
			out.Missing = append(out.Missing, "migrations: the database is behind this build; run keeper migrate")
		}
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	if path, err := store.VectorSearch(ctx, s.store.Pool); err != nil {
		s.log.WarnContext(ctx, "readiness: extensions unreadable", "error", err.Error())
	} else {
		out.VectorSearch = path
	}
	writeJSON(w, http.StatusOK, out)
}
