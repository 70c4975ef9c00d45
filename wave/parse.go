package wave

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/suggest"
)

// Options carries what parsing and validation need beyond the file.
type Options struct {
	// Roles gives the role prompt dir, closure ids and role prompt paths;
	// empty fields take the reference defaults.
	Roles config.Roles
	// ReadFile reads a repo-relative file (role prompts, the component
	// matrix). LoadDir defaults it to os.ReadFile under the repo root.
	ReadFile func(repoRel string) ([]byte, error)
	// ExecutorID, when set, gives an agent's resolved executor id for the
	// rules that depend on it (runtime mix, proof-centric local). Without
	// it the agent's own `id`, else its profile's id, else the lane
	// default is used.
	ExecutorID func(w *Wave, a *Agent) string
	// BenchmarkCatalogPath is the repo-relative benchmark catalog eval
	// targets are checked against when it exists; empty means
	// DefaultBenchmarkCatalogPath.
	BenchmarkCatalogPath string
	// Context7BundleIndexPath is the repo-relative Context7 bundle index
	// named bundles are checked against when it exists; empty means
	// DefaultContext7BundleIndexPath.
	Context7BundleIndexPath string
	// CompletedWaves lists waves already completed; their promotions may
	// sit below the matrix's current level.
	CompletedWaves map[int]bool
}

// Reference defaults for roles.
const (
	DefaultRolePromptDir         = "docs/agents"
	DefaultContQaRolePrompt      = "docs/agents/wave-cont-qa-role.md"
	DefaultContEvalRolePrompt    = "docs/agents/wave-cont-eval-role.md"
	DefaultIntegrationRolePrompt = "docs/agents/wave-integration-role.md"
	DefaultDocumentationPrompt   = "docs/agents/wave-documentation-role.md"
	DefaultSecurityRolePrompt    = "docs/agents/wave-security-role.md"
	DefaultDesignRolePrompt      = "docs/agents/wave-design-role.md"
)

// RolesWithDefaults fills empty role settings with the reference defaults.
func RolesWithDefaults(r config.Roles) config.Roles {
	def := func(p *string, v string) {
		if strings.TrimSpace(*p) == "" {
			*p = v
		}
	}
	def(&r.RolePromptDir, DefaultRolePromptDir)
	def(&r.ContQaAgentID, "A0")
	def(&r.ContEvalAgentID, "E0")
	def(&r.IntegrationAgentID, "A8")
	def(&r.DocumentationAgentID, "A9")
	def(&r.ContQaRolePromptPath, DefaultContQaRolePrompt)
	def(&r.ContEvalRolePromptPath, DefaultContEvalRolePrompt)
	def(&r.IntegrationRolePromptPath, DefaultIntegrationRolePrompt)
	def(&r.DocumentationRolePromptPath, DefaultDocumentationPrompt)
	def(&r.SecurityRolePromptPath, DefaultSecurityRolePrompt)
	def(&r.DesignRolePromptPath, DefaultDesignRolePrompt)
	return r
}

var (
	waveFileRe      = regexp.MustCompile(`^wave-(\d+)\.md$`)
	commitMessageRe = regexp.MustCompile("\\*\\*Commit message\\*\\*:\\s*`([^`]+)`")
)

// Number returns the wave number of a file named wave-<n>.md.
func Number(file string) (int, error) {
	m := waveFileRe.FindStringSubmatch(path.Base(filepath.ToSlash(file)))
	if m == nil {
		return 0, fmt.Errorf("file name %q is not wave-<n>.md", path.Base(file))
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, fmt.Errorf("wave number in %q: %w", file, err)
	}
	return n, nil
}

// Parse parses one wave file's content. path is repo-relative (used in
// errors and Wave.File). All problems found are returned in one *Error.
func Parse(path string, content []byte, opts Options) (*Wave, error) {
	path = filepath.ToSlash(path)
	ps := &problems{file: path}
	n, err := Number(path)
	if err != nil {
		ps.add(0, "", "bad-filename", "%v", err)
	}
	if !utf8.Valid(content) {
		ps.add(invalidUTF8Line(content), "", "invalid-utf8", "file is not valid UTF-8")
		return nil, ps.err()
	}
	text := string(content)
	if jsTrim(text) == "" {
		ps.add(1, "", "empty-file", "wave file is empty")
		return nil, ps.err()
	}
	r := RolesWithDefaults(opts.Roles)
	d := newDoc(text)
	w := &Wave{Number: n, File: path, Agents: []Agent{}, lines: map[string]int{}}
	if m := commitMessageRe.FindStringSubmatch(d.structureText()); m != nil {
		w.CommitMessage = &m[1]
	}
	top := func(h string) *block {
		b := d.topSection(h)
		if b != nil {
			w.lines[h] = b.lineNo()
		}
		return b
	}
	w.ComponentPromotions = parsePromotions(d, top("Component promotions"), ps)
	w.DeployEnvironments = parseDeployEnvironments(d, top("Deploy environments"), ps)
	w.EvalTargets = parseEvalTargets(d, top("Eval targets"), ps)
	if b := top("Context7 defaults"); b != nil {
		w.Context7Defaults = parseContext7(d, b, ps, "")
	}
	targets := map[string]string{}
	for _, p := range w.ComponentPromotions {
		targets[p.ComponentID] = p.TargetLevel
	}
	headers := d.agentHeaders(ps)
	seen := map[string]int{}
	for i, h := range headers {
		if first, dup := seen[h.id]; dup {
			ps.add(h.line+1, h.id, "duplicate-agent", "agent %s is already declared on line %d", h.id, first)
			continue
		}
		seen[h.id] = h.line + 1
		end := len(d.raw)
		if i+1 < len(headers) {
			end = headers[i+1].line
		}
		a := parseAgent(d, ps, h, h.line+1, end, n, r, opts)
		a.ComponentTargets = map[string]*string{}
		for _, c := range a.Components {
			if lvl, ok := targets[c]; ok {
				a.ComponentTargets[c] = &lvl
			} else {
				a.ComponentTargets[c] = nil
			}
		}
		w.Agents = append(w.Agents, a)
	}
	w.ContQaReportPath = reportPath(w, r.ContQaAgentID, isContQaReport)
	w.ContEvalReportPath = reportPath(w, r.ContEvalAgentID, isContEvalReport)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return w, nil
}

// structureText is the file with fenced lines blanked.
func (d *doc) structureText() string {
	lines := make([]string, len(d.raw))
	for i := range d.raw {
		if !d.fenced[i] {
			lines[i] = d.raw[i]
		}
	}
	return strings.Join(lines, "\n")
}

func invalidUTF8Line(b []byte) int {
	line := 1
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		b = b[size:]
	}
	return line
}

func parseAgent(d *doc, ps *problems, h header, from, to, waveNum int, r config.Roles, opts Options) Agent {
	id := h.id
	a := Agent{ID: id, Title: h.title, Slug: Slugify(fmt.Sprintf("%d-%s", waveNum, id)), Line: h.line + 1, lines: map[string]int{}}
	sub := func(name string) *block {
		b := d.subsection(from, to, name)
		if b != nil {
			a.lines[name] = b.lineNo()
		}
		return b
	}
	checkHeadings(d, ps, id, from, to)
	a.RolePromptPaths = parseRolePrompts(d, sub("Role prompts"), ps, id)
	a.Context7 = parseContext7(d, sub("Context7"), ps, id)
	a.ExitContract = parseExitContract(d, sub("Exit contract"), ps, id)
	a.Executor = parseExecutor(d, sub("Executor"), ps, id)
	a.Components = parseIDs(d, sub("Components"), ps, id, "component")
	a.Capabilities = normalizeCapabilities(parseIDs(d, sub("Capabilities"), ps, id, "capability"), a.RolePromptPaths, r)
	a.Skills = parseSkills(d, sub("Skills"), ps, id)
	var delivLines, proofLines []int
	a.Deliverables, delivLines = parsePaths(d, sub("Deliverables"), ps, id, "deliverable")
	a.ProofArtifacts, proofLines = parseProofArtifacts(d, sub("Proof artifacts"), ps, id)

	pb := sub("Prompt")
	if pb == nil {
		ps.add(a.Line, id, "missing-prompt", `agent has no "### Prompt" section`)
	} else if local, ok := fencedBlock(strings.Join(d.raw[pb.from:pb.to], "\n")); !ok {
		ps.add(pb.lineNo(), id, "missing-prompt-fence", "### Prompt must contain a ``` fenced block")
	} else {
		a.LocalPrompt = local
	}
	var standing []string
	for _, rp := range a.RolePromptPaths {
		line := a.lines["Role prompts"]
		s, err := readStandingPrompt(rp, r.RolePromptDir, opts.ReadFile)
		if err != nil {
			var bv *badValue
			rule := "role-prompt"
			if errors.As(err, &bv) {
				rule = bv.rule
			}
			ps.add(line, id, rule, "%v", err)
			continue
		}
		standing = append(standing, s)
	}
	a.Prompt = ComposePrompt(standing, a.LocalPrompt)
	a.OwnedPaths = OwnedPaths(a.LocalPrompt)

	for i, p := range a.Deliverables {
		switch {
		case strings.HasSuffix(normPath(p), "/"):
			ps.add(delivLines[i], id, "deliverable-is-directory", "deliverable %q must be a file, not a directory", p)
		case !ownedBy(a.OwnedPaths, p):
			ps.add(delivLines[i], id, "deliverable-outside-ownership", "deliverable %q is not inside the agent's File ownership paths %v", p, a.OwnedPaths)
		}
	}
	for i, p := range a.ProofArtifacts {
		if !ownedBy(a.OwnedPaths, p.Path) {
			ps.add(proofLines[i], id, "proof-artifact-outside-ownership", "proof artifact %q is not inside the agent's File ownership paths %v", p.Path, a.OwnedPaths)
		}
	}
	return a
}

// AgentHeadings are the `###` subsections of an agent section: the ones
// the reference reads. Any other is a typo that would silently drop what
// it holds (a misspelt "### Exit contract" drops the exit gate).
var AgentHeadings = []string{"Role prompts", "Executor", "Context7", "Skills", "Components", "Capabilities",
	"Deliverables", "Proof artifacts", "Exit contract", "Prompt"}

// checkHeadings reports every unfenced `### ` heading of an agent section
// that is not one of AgentHeadings. The scan stops at the first unfenced
// `## ` line: a wave file's own later sections are not the agent's, even
// though the reference's subsection lookup reads across them.
func checkHeadings(d *doc, ps *problems, id string, from, to int) {
	for i := from; i < to; i++ {
		if d.fenced[i] {
			continue
		}
		l := d.line(i)
		if isH2(l) {
			return
		}
		if !isH3(l) {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(l, "###"), " ")
		if slices.Contains(AgentHeadings, name) {
			continue
		}
		ps.add(i+1, id, "unknown-agent-heading", "unknown heading %q in an agent section%s; known: %s",
			l, suggest.Hint(name, AgentHeadings), strings.Join(AgentHeadings, ", "))
	}
}

func ownedBy(owned []string, p string) bool {
	return slices.ContainsFunc(owned, func(o string) bool { return Owns(o, p) })
}

// AllowedRolePromptPath: repo-contained, under dir, ending in .md.
func AllowedRolePromptPath(p, dir string) bool {
	dir = strings.TrimRight(strings.ReplaceAll(dir, `\`, "/"), "/")
	return RepoContained(p) && strings.HasPrefix(strings.ReplaceAll(p, `\`, "/"), dir+"/") &&
		strings.HasSuffix(strings.ToLower(p), ".md")
}

func readStandingPrompt(p, dir string, read func(string) ([]byte, error)) (string, error) {
	if !AllowedRolePromptPath(p, dir) {
		return "", &badValue{"role-prompt-path", fmt.Sprintf("role prompt %s must be a .md file under %s/", p, dir)}
	}
	if read == nil {
		return "", &badValue{"role-prompt-missing", fmt.Sprintf("role prompt %s: no file reader configured", p)}
	}
	b, err := read(p)
	if err != nil {
		return "", &badValue{"role-prompt-missing", fmt.Sprintf("role prompt %s: %v", p, err)}
	}
	s, err := StandingPrompt(string(b))
	if err != nil {
		return "", &badValue{"missing-standing-prompt", fmt.Sprintf("role prompt %s: %v", p, err)}
	}
	return s, nil
}

// LoadDir discovers wave-<n>.md in wavesDir (repo-relative, under
// repoRoot), parses them all and returns them sorted by number. Problems
// of every file are returned together.
func LoadDir(repoRoot, wavesDir string, opts Options) ([]*Wave, error) {
	if opts.ReadFile == nil {
		opts.ReadFile = func(rel string) ([]byte, error) {
			return os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
		}
	}
	entries, err := os.ReadDir(filepath.Join(repoRoot, wavesDir))
	if err != nil {
		return nil, fmt.Errorf("read waves directory %s: %w", wavesDir, err)
	}
	type file struct {
		name string
		n    int
	}
	var files []file
	var all []Problem
	for _, e := range entries {
		if e.Type()&fs.ModeType&^fs.ModeSymlink != 0 {
			continue
		}
		if !waveFileRe.MatchString(e.Name()) {
			if looksLikeWaveFile(e.Name()) {
				all = append(all, misnamed(wavesDir, e.Name()))
			}
			continue
		}
		n, err := Number(e.Name())
		if err != nil {
			return nil, err
		}
		files = append(files, file{e.Name(), n})
	}
	if len(files) == 0 && len(all) == 0 {
		return nil, fmt.Errorf("no wave-<n>.md files in %s", wavesDir)
	}
	slices.SortFunc(files, func(a, b file) int { return a.n - b.n })
	var waves []*Wave
	for i, f := range files {
		rel := path.Join(filepath.ToSlash(wavesDir), f.name)
		if i > 0 && files[i-1].n == f.n {
			all = append(all, Problem{File: rel, Rule: "duplicate-wave", Msg: fmt.Sprintf("wave %d is also defined by %s", f.n, files[i-1].name)})
			continue
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, wavesDir, f.name))
		if err != nil {
			return nil, fmt.Errorf("read wave file %s: %w", rel, err)
		}
		w, err := Parse(rel, b, opts)
		all = appendErr(all, rel, err)
		if w != nil {
			waves = append(waves, w)
		}
	}
	if len(all) > 0 {
		return nil, &Error{Problems: all}
	}
	return waves, nil
}

// looksLikeWaveFile reports a markdown file named like a wave (wave…,
// any case) that the wave-<n>.md rule does not match: it would never
// run, and the user who wrote it believes it will.
func looksLikeWaveFile(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasPrefix(lower, "wave") && strings.HasSuffix(lower, ".md")
}

// numberWords are the spelt-out wave numbers a misnamed file is most
// likely to carry (wave-one.md).
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}

// misnamed is the problem of a file that looks like a wave file but is
// not named wave-<n>.md, with the name it probably meant when its own
// name holds a number, in digits or a word.
func misnamed(wavesDir, name string) Problem {
	want := "wave-<n>.md"
	stem := strings.ToLower(name[:len(name)-len(".md")]) // looksLikeWaveFile saw the suffix
	words := strings.FieldsFunc(stem, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		w = strings.TrimPrefix(w, "wave")
		if n, err := strconv.Atoi(w); err == nil {
			want = fmt.Sprintf("wave-%d.md", n)
			break
		}
		if n := slices.Index(numberWords, w); n >= 0 {
			want = fmt.Sprintf("wave-%d.md", n)
			break
		}
	}
	dir := filepath.ToSlash(wavesDir)
	return Problem{File: path.Join(dir, name), Rule: "misnamed-wave-file",
		Msg: fmt.Sprintf("%q looks like a wave file but only files named wave-<n>.md are waves, so it would never run: rename it %s, or move it out of %s",
			name, want, dir)}
}

// Roles is config.Roles; the alias lets callers write wave.Roles(lane.Roles).
type Roles = config.Roles
