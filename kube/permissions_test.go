package kube

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// granted expands a Role's rules into its permissions, named as
// Permission.String does.
func granted(r *rbacv1.Role) []string {
	var out []string
	for _, rule := range r.Rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					p := Permission{Verb: v, Group: g, Resource: res}
					if base, sub, ok := cutSub(res); ok {
						p.Resource, p.Subresource = base, sub
					}
					out = append(out, p.String())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func cutSub(res string) (string, string, bool) {
	for i := range res {
		if res[i] == '/' {
			return res[:i], res[i+1:], true
		}
	}
	return res, "", false
}

// tabled is what the table says the manifest's Role for who grants.
func tabled(who Identity) []string {
	var out []string
	for _, n := range Needs() {
		if n.Who == who && n.Grant != Ambient {
			out = append(out, n.Permission.String())
		}
	}
	slices.Sort(out)
	return out
}

// TestRBACManifestIsTheTable keeps docs/kubernetes/rbac.yaml's two Roles
// equal to kube.Needs: what doctor checks and what the code may do is
// what the manifest grants, no verb more or less.
func TestRBACManifestIsTheTable(t *testing.T) {
	t.Parallel()
	roles := map[string]*rbacv1.Role{}
	for _, obj := range manifest(t) {
		if r, ok := obj.(*rbacv1.Role); ok {
			roles[r.Name] = r
		}
	}
	for who, role := range map[Identity]string{Launcher: "wave-launcher", Runner: "wave-runner"} {
		r := roles[role]
		if r == nil {
			t.Fatalf("%s has no Role %s", RBACManifest, role)
		}
		got, want := granted(r), tabled(who)
		for _, p := range want {
			if !slices.Contains(got, p) {
				t.Errorf("Role %s of %s lacks %s, which the %s needs (kube.Needs)", role, RBACManifest, p, who)
			}
		}
		for _, p := range got {
			if !slices.Contains(want, p) {
				t.Errorf("Role %s of %s grants %s, which kube.Needs does not list for the %s", role, RBACManifest, p, who)
			}
		}
	}
}

// TestDoctorChecksEveryRequiredRowOfTheTable: doctor's lists are the
// table's rows, so a verb added for the code is a verb doctor checks.
func TestDoctorChecksEveryRequiredRowOfTheTable(t *testing.T) {
	t.Parallel()
	var launcher, runner []string
	for _, p := range LauncherPermissions() {
		launcher = append(launcher, p.String())
	}
	for _, p := range RunnerPermissions() {
		runner = append(runner, p.String())
	}
	for _, n := range Needs() {
		list := map[Identity][]string{Launcher: launcher, Runner: runner}[n.Who]
		if in := slices.Contains(list, n.Permission.String()); in != (n.Grant == Required) {
			t.Errorf("%s of the %s (grant %d): in doctor's checks = %v", n.Permission, n.Who, n.Grant, in)
		}
	}
}

// TestCheckClusterNamesEveryVerbOfTheTableWhenTheRoleLacksIt: each
// launcher verb the table requires, taken out of the shipped Role, is the
// one permission doctor fails. A verb the code uses is a verb doctor
// checks: a cluster that lacks it is told so before a run hangs on it.
func TestCheckClusterNamesEveryVerbOfTheTableWhenTheRoleLacksIt(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	for _, p := range LauncherPermissions() {
		t.Run(p.String(), func(t *testing.T) {
			ns := kc.Namespace(t, "verb")
			applyManifest(t, kc, ns, "bob", func(r *rbacv1.Role) {
				res := p.Resource
				if p.Subresource != "" {
					res += "/" + p.Subresource
				}
				for i := range r.Rules {
					if slices.Contains(r.Rules[i].APIGroups, p.Group) && slices.Contains(r.Rules[i].Resources, res) {
						r.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(r.Rules[i].Verbs), func(v string) bool { return v == p.Verb })
					}
				}
				// A rule left without verbs is invalid: drop it.
				r.Rules = slices.DeleteFunc(r.Rules, func(rule rbacv1.PolicyRule) bool { return len(rule.Verbs) == 0 })
			})
			cs := checkCluster(t, testClient(t, kc.UserConfig("bob")), Options{Namespace: ns, Image: "agents:1", ServiceAccount: "wave"})
			f := Failed(cs)
			if len(f) != 1 || f[0].Permission == nil || f[0].Permission.String() != p.String() {
				t.Fatalf("without %s in the Role, want exactly that permission failed, got:%s", p, dump(cs))
			}
		})
	}
}
