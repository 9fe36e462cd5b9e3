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

// readiness is the body of /readyz.
type readiness struct {
	Status     string                `json:"status"`
	Database   string                `json:"database"`
	Migrations *store.MigrationState `json:"migrations,omitempty"`
	Missing    []string              `json:"missing,omitempty"`
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
	out.Migrations = &st
	if !st.UpToDate() {
		out.Status = "unavailable"
		if st.Dirty {
			out.Missing = append(out.Missing, "migrations: the last migration failed halfway (dirty); fix it and run keeper migrate")
		}
		if st.Current < st.Latest {
			out.Missing = append(out.Missing, "migrations: lorebase at "+itoa(st.Current)+", needs "+itoa(st.Latest)+"; run keeper migrate")
		}
		if st.RiverCurrent < st.RiverLatest {
			out.Missing = append(out.Missing, "migrations: river at "+itoa(st.RiverCurrent)+", needs "+itoa(st.RiverLatest)+"; run keeper migrate")
		}
		if st.FunctionsPending > 0 {
			out.Missing = append(out.Missing, "migrations: "+itoa(st.FunctionsPending)+" function files not applied; run keeper migrate")
		}
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
