package keeper

import (
	"net/http"
)

// maxWhoamiBranches bounds the branches one whoami call may ask about.
const maxWhoamiBranches = 100

// whoami is the answer of GET /v1/whoami: who the token is and, for each
// branch asked about, whether it may write there.
type whoami struct {
	Name      string          `json:"name"`
	Domain    string          `json:"domain,omitempty"`
	Role      string          `json:"role"`
	Branches  []string        `json:"branches"`
	Bootstrap bool            `json:"bootstrap"`
	Write     map[string]bool `json:"write"`
}

// getWhoami: GET /v1/whoami?branch=B&branch=C. The branch parameter may be
// repeated (up to 100); write answers canWrite for each, so a client (the
// web UI) shows only the actions the API would allow.
func (s *Server) getWhoami(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for k := range q {
		if k != "branch" {
			return badRequest(k, "unknown_parameter", "Unknown query parameter "+quote(k)+"; this route takes branch (repeatable).")
		}
	}
	branches := q["branch"]
	if len(branches) > maxWhoamiBranches {
		return badRequest("branch", "too_many", "Ask about at most 100 branches at once.")
	}
	p := principalFrom(r.Context())
	out := whoami{Name: p.name(), Role: RoleAdmin, Branches: []string{"*"}, Bootstrap: p.bootstrap, Write: map[string]bool{}}
	if !p.bootstrap {
		out.Domain, out.Role, out.Branches = p.token.Domain, p.token.Role, p.token.Branches
		if out.Branches == nil {
			out.Branches = []string{}
		}
	}
	for _, b := range branches {
		if err := checkText("branch", b, maxParamBytes); err != nil {
			return err
		}
		out.Write[b] = p.canWrite(b)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
