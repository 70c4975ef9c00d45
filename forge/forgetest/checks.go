package forgetest

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Routes of commit checks and the branch rules that require them.
const (
	RouteCheckRuns        = "checks.runs"
	RouteCombinedStatus   = "statuses.combined"
	RouteRequiredChecks   = "protection.required_checks"
	RouteBranchRules      = "rules.branch"
	checkStatusCompleted  = "completed"
	checkStatusInProgress = "in_progress"
)

// Check is one check a commit reports: a check run (what GitHub Actions
// and apps report) or, with Status, a commit status (what older CI
// services post). A check a commit does not list is missing on it.
type Check struct {
	Name   string
	Status bool // a commit status (context Name) rather than a check run
	// Conclusion once it is done: "" is success. A check run's: success,
	// failure, neutral, cancelled, skipped, timed_out, action_required;
	// a status's: success, failure, error.
	Conclusion string
	// It is pending until both have passed for the commit: PendingFor
	// from the first request about it, PendingPolls requests about it.
	PendingFor   time.Duration
	PendingPolls int
	// Title and Summary are a check run's output (a status has its
	// description: Summary); URL is its details (target) URL.
	Title, Summary, URL string
}

// checkClock is how long and how often one check of one commit has been
// asked about.
type checkClock struct {
	first time.Time
	polls int
}

// SetChecks makes every commit report cs (replacing what was set).
func (s *Server) SetChecks(cs ...Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks = slices.Clone(cs)
	s.checksBy = nil
}

// ChecksBy makes f say which checks commit sha reports; it wins over
// SetChecks. f runs while the server handles a request: it must not call
// the Server.
func (s *Server) ChecksBy(f func(sha string) []Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checksBy = f
}

// SetRequiredChecks sets the status checks the classic branch protection
// of branch requires (none: the branch is not protected).
func (s *Server) SetRequiredChecks(branch string, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.required[branch] = slices.Clone(names)
}

// SetRuleChecks sets the status checks a repository ruleset requires on
// branch.
func (s *Server) SetRuleChecks(branch string, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ruleChecks[branch] = slices.Clone(names)
}

// DenyProtection makes reading branch protection answer 403, as GitHub
// does for a token without administration rights.
func (s *Server) DenyProtection() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.protectionDenied = true
}

// checksOf are the checks of one kind commit sha reports, each with
// whether it is still pending. Caller holds s.mu.
func (s *Server) checksOf(sha string, status bool) []reported {
	cs := s.checks
	if s.checksBy != nil {
		cs = s.checksBy(sha)
	}
	var out []reported
	for _, c := range cs {
		if c.Status != status {
			continue
		}
		k := fmt.Sprintf("%s\x00%t\x00%s", sha, status, c.Name)
		clk, ok := s.checkClocks[k]
		if !ok {
			clk = &checkClock{first: time.Now()}
			s.checkClocks[k] = clk
		}
		clk.polls++
		pending := clk.polls <= c.PendingPolls || time.Since(clk.first) < c.PendingFor
		out = append(out, reported{Check: c, pending: pending, started: clk.first.UTC().Truncate(time.Second)})
	}
	return out
}

type reported struct {
	Check
	pending bool
	started time.Time
}

// checkRuns is GET .../commits/{ref}/check-runs: the latest run of each
// check on the commit.
func (s *Server) checkRuns(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("ref")
	list := s.checksOf(sha, false)
	page := paginate(w, r, list)
	runs := make([]any, 0, len(page))
	for i, c := range page {
		run := map[string]any{
			"id": 5000 + i, "name": c.Name, "head_sha": sha, "status": checkStatusCompleted,
			"conclusion": firstNonEmpty(c.Conclusion, "success"), "started_at": c.started,
			"html_url": c.URL, "details_url": c.URL,
			"output": map[string]any{"title": c.Title, "summary": c.Summary},
		}
		if c.pending {
			run["status"], run["conclusion"] = checkStatusInProgress, nil
		}
		runs = append(runs, run)
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "check_runs": runs})
}

// combinedStatus is GET .../commits/{ref}/status: the latest status of
// each context, and their combination.
func (s *Server) combinedStatus(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("ref")
	list := s.checksOf(sha, true)
	state := "success"
	statuses := make([]any, 0, len(list))
	for _, c := range paginate(w, r, list) {
		st := firstNonEmpty(c.Conclusion, "success")
		if c.pending {
			st = "pending"
		}
		switch {
		case st == "failure" || st == "error":
			state = "failure"
		case st == "pending" && state == "success":
			state = "pending"
		}
		statuses = append(statuses, map[string]any{"context": c.Name, "state": st, "description": c.Summary,
			"target_url": c.URL, "created_at": c.started, "updated_at": c.started})
	}
	if len(list) == 0 {
		state = "pending"
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": state, "sha": sha, "total_count": len(list), "statuses": statuses})
}

// requiredChecks is GET .../branches/{branch}/protection/required_status_checks.
func (s *Server) requiredChecks(w http.ResponseWriter, r *http.Request) {
	if s.protectionDenied {
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by personal access token"})
		return
	}
	names, ok := s.required[r.PathValue("branch")]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Branch not protected"})
		return
	}
	checks := make([]any, 0, len(names))
	for _, n := range names {
		checks = append(checks, map[string]any{"context": n})
	}
	writeJSON(w, http.StatusOK, map[string]any{"strict": false, "contexts": names, "checks": checks})
}

// branchRules is GET .../rules/branches/{branch}: the active ruleset
// rules on a branch (readable with read access).
func (s *Server) branchRules(w http.ResponseWriter, r *http.Request) {
	rules := []any{}
	if names := s.ruleChecks[r.PathValue("branch")]; len(names) > 0 {
		var req []any
		for _, n := range names {
			req = append(req, map[string]any{"context": n})
		}
		rules = append(rules, map[string]any{"type": "required_status_checks", "ruleset_source_type": "Repository",
			"ruleset_source": s.Owner + "/" + s.Repo, "ruleset_id": 1,
			"parameters": map[string]any{"required_status_checks": req, "strict_required_status_checks_policy": false}})
	}
	writeJSON(w, http.StatusOK, paginate(w, r, rules))
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
