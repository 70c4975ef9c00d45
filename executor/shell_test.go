package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{"a b\tc", []string{"a", "b", "c"}, false},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}, false},
		{`x'y'"z"`, []string{"xyz"}, false},
		{`'' ""`, []string{"", ""}, false},
		{`"a \"q\" \$HOME \\ \n"`, []string{`a "q" $HOME \ \n`}, false},
		{`a\ b`, []string{"a b"}, false},
		{`$(rm -rf /) ; | *`, []string{"$(rm", "-rf", "/)", ";", "|", "*"}, false},
		{`'open`, nil, true},
		{`"open`, nil, true},
		{`trail\`, nil, true},
	}
	for _, tc := range cases {
		got, err := SplitWords(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q, err=%v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"e" f\ g`, `''`, `"\$x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		// Quoting every word back must split to the same words.
		var b strings.Builder
		for _, w := range words {
			b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "' ")
		}
		again, err := SplitWords(b.String())
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("round trip of %q: %q, %v", s, again, err)
		}
	})
}

// TestShellTemplateHostileValues runs a real shell template whose
// placeholders carry quotes, spaces and command substitutions: each value
// must arrive as exactly one argument and nothing may run.
func TestShellTemplateHostileValues(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	hostile := filepath.Join(dir, `it's $(touch PWNED) `+"`touch PWNED2`"+` "q"`)
	if err := os.MkdirAll(hostile, 0o755); err != nil {
		t.Fatal(err)
	}
	prompt := filepath.Join(hostile, "prompt; touch PWNED3.md")
	os.WriteFile(prompt, []byte("x"), 0o644)
	a := implAgent()
	a.ID = `A1'$(touch PWNED4)`
	a.Executor = &wave.ExecutorConfig{ID: ptr("shell"), Shell: &wave.ShellConfig{
		Command: ptr(sh + ` -c 'for a in "$@"; do printf "<%s>\n" "$a"; done' sh {prompt_file} --agent={agent} "{run_dir}/x y" {log}`)}}
	lane := testLane(dir)
	r, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: hostile, PromptPath: prompt,
		LogPath: filepath.Join(hostile, "a b.log"), Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "<" + prompt + ">\n<--agent=" + a.ID + ">\n<" + hostile + "/x y>\n<" + filepath.Join(hostile, "a b.log") + ">\n"
	if string(out) != want {
		t.Errorf("arguments\n%s\nwant\n%s", out, want)
	}
	for _, p := range []string{"PWNED", "PWNED2", "PWNED3.md", "PWNED4"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was created: a placeholder value was evaluated", p)
		}
	}
}
