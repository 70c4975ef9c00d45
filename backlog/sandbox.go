package backlog

// Sandbox events (docs/security-model.md).
const (
	// EvSandbox: whether the run's workers are sandboxed, recorded when
	// a supervisor (re)opens the run and it changed. Outcome on|off,
	// Detail why it is off.
	EvSandbox = "sandbox"
	// EvBlocked: the sandbox refused an issue's worker, reviewer or
	// verify step these Hosts; Detail says which ran.
	EvBlocked = "blocked_hosts"
)

// Outcomes of EvSandbox.
const (
	SandboxOn  = "on"
	SandboxOff = "off"
)

// SandboxState is whether the run's workers are sandboxed, and why not.
type SandboxState struct {
	On  bool   `json:"on"`
	Why string `json:"why,omitempty"`
	// Unconfined is why some of the run's workers ran without a
	// sandbox, should any have: it stays once said, for the final PR.
	Unconfined string `json:"unconfined,omitempty"`
}

func (r *Run) sandbox(ev Event) {
	st := SandboxState{On: ev.Outcome == SandboxOn}
	if r.Sandbox != nil {
		st.Unconfined = r.Sandbox.Unconfined
	}
	if !st.On {
		st.Why = ev.Detail
		st.Unconfined = ev.Detail
	}
	r.Sandbox = &st
}

// BlockedHosts are the hosts the sandbox refused, each with the issues
// whose runs tried them, in the order first refused.
func (r *Run) BlockedHosts() []BlockedHost {
	var out []BlockedHost
	at := map[string]int{}
	for _, is := range r.List() {
		for _, h := range is.Blocked {
			i, ok := at[h]
			if !ok {
				i, at[h] = len(out), len(out)
				out = append(out, BlockedHost{Host: h})
			}
			out[i].Issues = append(out[i].Issues, is.Number)
		}
	}
	return out
}

// BlockedHost is one host the sandbox refused and who tried it.
type BlockedHost struct {
	Host   string `json:"host"`
	Issues []int  `json:"issues"`
}
