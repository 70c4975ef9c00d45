package suggest

import "testing"

func TestClosest(t *testing.T) {
	opts := []string{"Role prompts", "Executor", "Exit contract", "Deliverables", "Proof artifacts", "Prompt"}
	for in, want := range map[string]string{
		"Exit contrac":          "Exit contract",
		"Deliverable":           "Deliverables",
		"executor":              "Executor",
		"Promt":                 "Prompt",
		"Notes":                 "",
		"Risks and mitigations": "",
	} {
		if got := Closest(in, opts); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
	if Hint("implemntation", []string{"implementation", "design"}) != ` (did you mean "implementation"?)` || Hint("zzz", []string{"design"}) != "" {
		t.Error("Hint")
	}
}
