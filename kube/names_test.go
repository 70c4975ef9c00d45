package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestObjectNameIsAValidUniqueDNSLabel(t *testing.T) {
	t.Parallel()
	inst := Instance("/repo", "main")
	long := strings.Repeat("Agent_With.Odd:Chars", 10)
	seen := map[string]string{}
	for _, run := range []string{"w0-A1-a1", "w0-A1-a2", "w12-" + long + "-a1", "w12-" + long + "-a2", "---", "ÄÖ-a1", ""} {
		n := ObjectName(inst, run)
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("ObjectName(%q) = %q: %v", run, n, errs)
		}
		// The pod adds "-xxxxx" to the Job's name.
		if errs := validation.IsDNS1123Subdomain(n + "-abcde"); len(errs) > 0 || len(n)+6 > 63 {
			t.Errorf("pod name of %q too long: %d", n, len(n)+6)
		}
		if prev, dup := seen[n]; dup {
			t.Errorf("runs %q and %q share the name %q", prev, run, n)
		}
		seen[n] = run
	}
	if ObjectName(inst, "w0-A1-a1") == ObjectName(Instance("/other", "main"), "w0-A1-a1") {
		t.Error("two checkouts of one lane share object names")
	}
	if got := ObjectName(inst, "w0-A1-a1"); !strings.HasPrefix(got, "wave-w0-a1-a1-") {
		t.Errorf("name %q does not say which run it is", got)
	}
}

func TestLabelValueIsValid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"A1", "agent/with spaces", strings.Repeat("x", 80), "-lead-", "é"} {
		v := LabelValue(in)
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q: %v", in, v, errs)
		}
	}
}
