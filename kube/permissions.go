package kube

// The one table of what the backend does on a cluster. Everything that
// grants or checks a right is derived from it: the Roles of
// docs/kubernetes/rbac.yaml (TestRBACManifestIsTheTable keeps the file
// equal to it), doctor's permission checks (LauncherPermissions,
// RunnerPermissions) and, in the tests, the refusal of any API request
// the table does not name (TestBackendUsesOnlyTheTablesVerbs): a verb the
// code starts to use without a row here fails a test, not a user's run.

// Identity is who makes a request: the launcher's user or the runner's
// ServiceAccount.
type Identity string

// The two identities of docs/kubernetes/rbac.yaml.
const (
	Launcher Identity = "launcher"
	Runner   Identity = "runner"
)

// Grant says where a permission comes from.
type Grant int

const (
	// Required: granted by the identity's Role; doctor fails without it.
	Required Grant = iota
	// Optional: granted by the launcher's Role for doctor's sake; without
	// it doctor says it could not check, and runs work.
	Optional
	// Ambient: not in the manifest. Every authenticated user has it
	// (system:basic-user, system:public-info-viewer), or a namespaced Role
	// cannot grant it and doctor does without, or doctor uses it only when
	// an access review says this user has it anyway.
	Ambient
)

// Need is one row: identity, grant and the permission.
type Need struct {
	Who   Identity
	Grant Grant
	Permission
}

// Needs is the table. Rows of one resource stay together, in the order
// the manifest lists them.
func Needs() []Need {
	const batch, coord, authz, authn = "batch", "coordination.k8s.io", "authorization.k8s.io", "authentication.k8s.io"
	l := func(g Grant, verb, group, resource, sub, why string) Need {
		return Need{Who: Launcher, Grant: g, Permission: Permission{Verb: verb, Group: group, Resource: resource, Subresource: sub, For: why}}
	}
	return []Need{
		l(Required, "create", batch, "jobs", "", "start runs"),
		l(Required, "get", batch, "jobs", "", "adopt a run whose Job exists"),
		l(Required, "list", batch, "jobs", "", "watch runs"),
		l(Required, "watch", batch, "jobs", "", "watch runs"),
		l(Required, "delete", batch, "jobs", "", "stop runs"),
		// No get or list: a Role cannot narrow them to the runs' own
		// Secrets, and the namespace's other Secrets (envFrom's API keys)
		// are none of the launcher's business. A missing Secret is told
		// by the run's Lease, which is created after it.
		l(Required, "create", "", "secrets", "", "hand each run its payload"),
		l(Required, "delete", "", "secrets", "", "delete a finished run's payload"),
		l(Required, "create", coord, "leases", "", "start runs"),
		// A Lease that looks expired is read from the API server before
		// its run is called lost: the watch may lag.
		l(Required, "get", coord, "leases", "", "confirm that a runner stopped renewing"),
		l(Required, "list", coord, "leases", "", "watch heartbeats"),
		l(Required, "watch", coord, "leases", "", "watch heartbeats"),
		l(Required, "patch", coord, "leases", "", "mark runs stopped"),
		l(Required, "get", "", "pods", "", "attach"),
		l(Required, "list", "", "pods", "", "watch runs"),
		l(Required, "watch", "", "pods", "", "watch runs"),
		l(Required, "deletecollection", "", "pods", "", "stop runs"),
		// The WebSocket attach is a GET, authorized as get (API servers
		// from 1.35 ask create too); the SPDY fallback is a POST,
		// authorized as create.
		l(Required, "get", "", "pods", "attach", "attach to an agent's terminal"),
		l(Required, "create", "", "pods", "attach", "attach to an agent's terminal"),
		l(Required, "get", "", "pods", "log", "follow an agent's log"),
		l(Optional, "get", "", "serviceaccounts", "", "check that the pods' ServiceAccount exists"),
		l(Optional, "create", authz, "localsubjectaccessreviews", "", "check the runner's rights"),
		l(Ambient, "get", "", "namespaces", "", "check that the namespace exists"),
		l(Ambient, "create", authz, "subjectaccessreviews", "", "check the runner's rights"),
		l(Ambient, "create", authz, "selfsubjectaccessreviews", "", "check the launcher's rights"),
		l(Ambient, "create", authn, "selfsubjectreviews", "", "name the launcher's user"),
		// Only when an access review allows it by name: the Role grants
		// no Secret reads (see above).
		l(Ambient, "get", "", "secrets", "", "check the git credentials Secret"),
		{Who: Runner, Grant: Required, Permission: Permission{Verb: "patch", Group: coord, Resource: "leases",
			For: "renew its run's Lease every heartbeat"}},
	}
}

// permissions are the table's permissions of who with grant g.
func permissions(who Identity, g Grant) []Permission {
	var out []Permission
	for _, n := range Needs() {
		if n.Who == who && n.Grant == g {
			out = append(out, n.Permission)
		}
	}
	return out
}

// LauncherPermissions is what the launcher's user must be granted in the
// lane's namespace (doctor checks each): Backend.Start creates each run's
// Job, Secret and Lease (and gets a Job that exists already, to adopt
// it); its caches list and watch jobs, pods and leases; an expired
// Lease is read once more; Terminate patches the Lease, deletes the Job
// and the run's pods; attach finds the agent's pod, attaches to it and
// follows its log.
func LauncherPermissions() []Permission { return permissions(Launcher, Required) }

// RunnerPermissions is what the runner in a pod does, as its
// ServiceAccount: renew its run's Lease.
func RunnerPermissions() []Permission { return permissions(Runner, Required) }

// Allowed reports whether the table lets who do verb on
// group/resource/subresource.
func Allowed(who Identity, verb, group, resource, subresource string) bool {
	for _, n := range Needs() {
		p := n.Permission
		if n.Who == who && p.Verb == verb && p.Group == group && p.Resource == resource && p.Subresource == subresource {
			return true
		}
	}
	return false
}
