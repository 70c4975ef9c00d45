// Package config loads wave.config.yaml (or a reference wave.config.json),
// WAVE_* environment variables and flags into a typed Config, and resolves
// the per-lane view with lane overrides merged over the top level.
package config

import (
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// Config is the whole configuration file. Key names are the reference's
// camelCase names so a reference wave.config.json reads unchanged.
type Config struct {
	Version        int           `json:"version" yaml:"version"`
	ProjectName    string        `json:"projectName" yaml:"projectName"`
	RepoMode       string        `json:"repoMode" yaml:"repoMode"` // single-repo|multi-lane
	DefaultLane    string        `json:"defaultLane" yaml:"defaultLane"`
	Paths          Paths         `json:"paths" yaml:"paths"`
	Roles          Roles         `json:"roles" yaml:"roles"`
	Executors      Executors     `json:"executors" yaml:"executors"`
	SharedPlanDocs []string      `json:"sharedPlanDocs" yaml:"sharedPlanDocs"`
	Validation     Validation    `json:"validation" yaml:"validation"`
	Runtime        Runtime       `json:"runtime" yaml:"runtime"`
	GitHub         GitHub        `json:"github" yaml:"github"`
	Backlog        Backlog       `json:"backlog" yaml:"backlog"`
	RuntimePolicy  RuntimePolicy `json:"runtimePolicy,omitzero" yaml:"runtimePolicy,omitempty"`
	// Pricing prices tokens (USD per million) when a CLI reports no
	// cost; merged over usage.DefaultPricing.
	Pricing usage.Pricing `json:"pricing,omitzero" yaml:"pricing,omitempty"`
	// Notify lists the sinks people are told through (config/notify.go).
	Notify []NotifySink          `json:"notify,omitempty" yaml:"notify,omitempty"`
	Lanes  map[string]LaneConfig `json:"lanes" yaml:"lanes"`
	// Skills is read for its shape only (see Skills).
	Skills *Skills `json:"skills,omitempty" yaml:"skills,omitempty"`

	// File is the path the config was read from ("" when defaults only).
	File string `json:"-" yaml:"-"`

	// src records where each key came from (file line or env var) so
	// errors found after decoding can still point at their origin.
	src sources
}

// Paths are repo-relative directories and files.
type Paths struct {
	DocsDir                        string `json:"docsDir,omitempty" yaml:"docsDir"`
	PlansDir                       string `json:"plansDir,omitempty" yaml:"plansDir,omitempty"`
	WavesDir                       string `json:"wavesDir,omitempty" yaml:"wavesDir,omitempty"`
	StateRoot                      string `json:"stateRoot,omitempty" yaml:"stateRoot"` // ours: .wave
	ComponentCutoverMatrixDocPath  string `json:"componentCutoverMatrixDocPath,omitempty" yaml:"componentCutoverMatrixDocPath,omitempty"`
	ComponentCutoverMatrixJSONPath string `json:"componentCutoverMatrixJsonPath,omitempty" yaml:"componentCutoverMatrixJsonPath,omitempty"`
	BenchmarkCatalogPath           string `json:"benchmarkCatalogPath,omitempty" yaml:"benchmarkCatalogPath,omitempty"`
	Context7BundleIndexPath        string `json:"context7BundleIndexPath,omitempty" yaml:"context7BundleIndexPath,omitempty"`
}

// Roles binds closure role ids and role prompt paths.
type Roles struct {
	RolePromptDir               string `json:"rolePromptDir,omitempty" yaml:"rolePromptDir"`
	ContQaAgentID               string `json:"contQaAgentId,omitempty" yaml:"contQaAgentId"`
	ContEvalAgentID             string `json:"contEvalAgentId,omitempty" yaml:"contEvalAgentId"`
	IntegrationAgentID          string `json:"integrationAgentId,omitempty" yaml:"integrationAgentId"`
	DocumentationAgentID        string `json:"documentationAgentId,omitempty" yaml:"documentationAgentId"`
	ContQaRolePromptPath        string `json:"contQaRolePromptPath,omitempty" yaml:"contQaRolePromptPath"`
	ContEvalRolePromptPath      string `json:"contEvalRolePromptPath,omitempty" yaml:"contEvalRolePromptPath"`
	IntegrationRolePromptPath   string `json:"integrationRolePromptPath,omitempty" yaml:"integrationRolePromptPath"`
	DocumentationRolePromptPath string `json:"documentationRolePromptPath,omitempty" yaml:"documentationRolePromptPath"`
	SecurityRolePromptPath      string `json:"securityRolePromptPath,omitempty" yaml:"securityRolePromptPath"`
	DesignRolePromptPath        string `json:"designRolePromptPath,omitempty" yaml:"designRolePromptPath"`
}

// Executors is the executors section: default id, per-vendor defaults and
// named profiles. Vendor sections reuse the wave file's executor types so
// lane ← profile ← agent merging works on one shape.
type Executors struct {
	Default  string                 `json:"default,omitempty" yaml:"default"`
	Profiles map[string]Profile     `json:"profiles,omitempty" yaml:"profiles"`
	Codex    CodexConfig            `json:"codex,omitzero" yaml:"codex"`
	Claude   ClaudeDefaults         `json:"claude,omitzero" yaml:"claude"`
	Opencode OpencodeConfig         `json:"opencode,omitzero" yaml:"opencode"`
	Shell    ShellConfig            `json:"shell,omitzero" yaml:"shell"`
	Env      EnvPolicy              `json:"env,omitzero" yaml:"env"`
	Extra    map[string]interface{} `json:"-" yaml:"-"`
}

// ClaudeDefaults are lane-level claude settings (the agent-level keys plus
// the system prompt mode).
type ClaudeDefaults struct {
	ClaudeConfig           `yaml:",inline"`
	AppendSystemPromptMode string `json:"appendSystemPromptMode,omitempty" yaml:"appendSystemPromptMode,omitempty"` // append|replace
	StrictMcpConfig        bool   `json:"strictMcpConfig,omitempty" yaml:"strictMcpConfig,omitempty"`
}

// Profile is executors.profiles.<name>.
type Profile struct {
	ID        string          `json:"id,omitempty" yaml:"id,omitempty"`
	Model     string          `json:"model,omitempty" yaml:"model,omitempty"`
	Fallbacks []string        `json:"fallbacks,omitempty" yaml:"fallbacks,omitempty"`
	Tags      []string        `json:"tags,omitempty" yaml:"tags,omitempty"`
	Budget    *Budget         `json:"budget,omitempty" yaml:"budget,omitempty"`
	Codex     *CodexConfig    `json:"codex,omitempty" yaml:"codex,omitempty"`
	Claude    *ClaudeConfig   `json:"claude,omitempty" yaml:"claude,omitempty"`
	Opencode  *OpencodeConfig `json:"opencode,omitempty" yaml:"opencode,omitempty"`
}

// EnvPolicy controls the agent environment.
type EnvPolicy struct {
	// Scrub lists variables removed from every agent's environment.
	// Default (nil): ANTHROPIC_BASE_URL, ANTHROPIC_CUSTOM_HEADERS. An empty
	// list (`scrub: []`) removes nothing, so the tag keeps an empty slice
	// through the lane merge's JSON round trip.
	Scrub []string `json:"scrub" yaml:"scrub,omitempty"`
	// Keep lists secret variables (config.SecretEnvNames) every agent
	// keeps besides the ones its executor needs; backlog workers never
	// keep the GitHub token or a notify sink's URL.
	Keep []string `json:"keep,omitempty" yaml:"keep,omitempty"`
}

// Validation holds thresholds: a rule applies to waves >= its value; nil
// disables it.
type Validation struct {
	RequireDocumentationStewardFromWave *int        `json:"requireDocumentationStewardFromWave,omitempty" yaml:"requireDocumentationStewardFromWave"`
	RequireContext7DeclarationsFromWave *int        `json:"requireContext7DeclarationsFromWave,omitempty" yaml:"requireContext7DeclarationsFromWave"`
	RequireExitContractsFromWave        *int        `json:"requireExitContractsFromWave,omitempty" yaml:"requireExitContractsFromWave"`
	RequireIntegrationStewardFromWave   *int        `json:"requireIntegrationStewardFromWave,omitempty" yaml:"requireIntegrationStewardFromWave"`
	RequireComponentPromotionsFromWave  *int        `json:"requireComponentPromotionsFromWave,omitempty" yaml:"requireComponentPromotionsFromWave"`
	RequireAgentComponentsFromWave      *int        `json:"requireAgentComponentsFromWave,omitempty" yaml:"requireAgentComponentsFromWave"`
	RequiredPromptReferences            []string    `json:"requiredPromptReferences,omitempty" yaml:"requiredPromptReferences"`
	GateModeThresholds                  Modes       `json:"gateModeThresholds,omitzero" yaml:"gateModeThresholds"`
	ClosureModeThresholds               Modes       `json:"closureModeThresholds,omitzero" yaml:"closureModeThresholds"`
	AutoClosure                         AutoClosure `json:"autoClosure,omitzero" yaml:"autoClosure"`
}

// Modes maps a wave number to bootstrap/standard/strict.
type Modes struct {
	Bootstrap int `json:"bootstrap,omitempty" yaml:"bootstrap"`
	Standard  int `json:"standard,omitempty" yaml:"standard"`
	Strict    int `json:"strict,omitempty" yaml:"strict"`
}

// AutoClosure lets closure stages pass without an agent.
type AutoClosure struct {
	AllowInferredIntegration   bool `json:"allowInferredIntegration,omitempty" yaml:"allowInferredIntegration"`
	AllowAutoDocNoChange       bool `json:"allowAutoDocNoChange,omitempty" yaml:"allowAutoDocNoChange"`
	AllowSkipContQaInBootstrap bool `json:"allowSkipContQaInBootstrap,omitempty" yaml:"allowSkipContQaInBootstrap"`
}

// Runtime tunes the runner and liveness.
type Runtime struct {
	HeartbeatIntervalMs int `json:"heartbeatIntervalMs" yaml:"heartbeatIntervalMs"` // default 2000
	TerminateGraceMs    int `json:"terminateGraceMs" yaml:"terminateGraceMs"`       // default 5000
	TimeoutMinutes      int `json:"timeoutMinutes" yaml:"timeoutMinutes"`           // default 240
	HistoryLimit        int `json:"historyLimit" yaml:"historyLimit"`               // tmux history-limit, default 50000
	RateLimitRetries    int `json:"rateLimitRetries" yaml:"rateLimitRetries"`       // default 2
	RateLimitBaseDelayS int `json:"rateLimitBaseDelaySeconds" yaml:"rateLimitBaseDelaySeconds"`
	RateLimitMaxDelayS  int `json:"rateLimitMaxDelaySeconds" yaml:"rateLimitMaxDelaySeconds"`
	// SilenceMinutes and SilenceSeconds add up to the stall window: an
	// agent printing nothing for that long is stopped and classified
	// stalled. 0 (the default) disables; seconds are for fine tuning and
	// tests.
	SilenceMinutes int `json:"silenceMinutes" yaml:"silenceMinutes"`
	SilenceSeconds int `json:"silenceSeconds" yaml:"silenceSeconds"`
	// NoProgressMinutes and NoProgressSeconds add up to the no-progress
	// window of wave agents: one that keeps printing while its owned
	// files do not change for that long is stopped as no-progress and
	// retried like a stall. 0 (the default) disables.
	NoProgressMinutes int `json:"noProgressMinutes" yaml:"noProgressMinutes"`
	NoProgressSeconds int `json:"noProgressSeconds" yaml:"noProgressSeconds"`
	// MaxLogBytes caps each run's agent.log and its rotated segments
	// (default 64 MiB; 0: no cap; else at least 1 MiB).
	MaxLogBytes int `json:"maxLogBytes" yaml:"maxLogBytes"`
	// Backend runs each agent in a tmux session (tmux, the default) or
	// as a Kubernetes Job (kubernetes; see Kubernetes).
	Backend    string     `json:"backend" yaml:"backend"`
	Kubernetes Kubernetes `json:"kubernetes,omitzero" yaml:"kubernetes,omitempty"`
	// Budget caps what a wave and the lane may spend (runtime.budget).
	Budget RuntimeBudget `json:"budget,omitzero" yaml:"budget,omitempty"`
	// InputTimeoutMinutes (+ InputTimeoutSeconds, for fine tuning and
	// tests) is how long a live launcher waits for a person to answer a
	// blocking question before it gives up (the question becomes
	// unanswered, exit 43); 0, the default, waits for ever.
	InputTimeoutMinutes int `json:"inputTimeoutMinutes" yaml:"inputTimeoutMinutes"`
	InputTimeoutSeconds int `json:"inputTimeoutSeconds" yaml:"inputTimeoutSeconds"`
	// Sandbox confines wave agents (runtime.sandbox; off unless set).
	Sandbox Sandbox `json:"sandbox,omitzero" yaml:"sandbox,omitempty"`
}

// InputTimeout is how long a blocking question is waited for (0: for
// ever).
func (r Runtime) InputTimeout() time.Duration {
	return time.Duration(r.InputTimeoutMinutes)*time.Minute + time.Duration(r.InputTimeoutSeconds)*time.Second
}

// RuntimeBudget is runtime.budget: caps on what a wave and the lane may
// spend. Its keys are its own: a backlog cap (perIssue, run) here is an
// unknown key, not a cap silently ignored.
type RuntimeBudget struct {
	Wave         usage.Cap `json:"wave,omitzero" yaml:"wave,omitempty"`
	Lane         usage.Cap `json:"lane,omitzero" yaml:"lane,omitempty"`
	BudgetPolicy `yaml:",inline"`
}

// BacklogBudget is backlog.budget: caps on what one issue (its every
// worker run) and the whole backlog run may spend. A wave-mode cap (wave,
// lane) here is an unknown key.
type BacklogBudget struct {
	PerIssue     usage.Cap `json:"perIssue,omitzero" yaml:"perIssue,omitempty"`
	Run          usage.Cap `json:"run,omitzero" yaml:"run,omitempty"`
	BudgetPolicy `yaml:",inline"`
}

// BudgetPolicy is what both budget sections say besides their caps: the
// share of a cap at which a warning is given (default 80) and what
// running agents do once a cap is reached: finish (the default; nothing
// new starts) or stop.
type BudgetPolicy struct {
	WarnAtPercent int    `json:"warnAtPercent,omitempty" yaml:"warnAtPercent,omitempty"`
	OnExceeded    string `json:"onExceeded,omitempty" yaml:"onExceeded,omitempty"` // finish|stop
}

// Warn is WarnAtPercent or its default.
func (b BudgetPolicy) Warn() int {
	if b.WarnAtPercent > 0 {
		return b.WarnAtPercent
	}
	return usage.DefaultWarnAtPercent
}

// Stops reports whether running agents are stopped at the cap.
func (b BudgetPolicy) Stops() bool { return b.OnExceeded == "stop" }

// Backends of runtime.backend.
const (
	BackendTmux       = "tmux"
	BackendKubernetes = "kubernetes"
)

// UsesKubernetes reports whether agents run as Kubernetes Jobs.
func (r Runtime) UsesKubernetes() bool { return r.Backend == BackendKubernetes }

// Kubernetes configures the kubernetes backend (docs/kubernetes.md).
type Kubernetes struct {
	// Kubeconfig and Context pick the cluster; by default $KUBECONFIG,
	// ~/.kube/config or the in-cluster service account.
	Kubeconfig string `json:"kubeconfig" yaml:"kubeconfig"`
	Context    string `json:"context" yaml:"context"`
	// Namespace defaults to the kubeconfig context's, else "default".
	Namespace      string `json:"namespace" yaml:"namespace"`
	Image          string `json:"image" yaml:"image"`
	ServiceAccount string `json:"serviceAccount" yaml:"serviceAccount"`
	// Binary is wave-orchestrator's path in the image (default
	// /usr/local/bin/wave-orchestrator).
	Binary          string `json:"binary" yaml:"binary"`
	ImagePullPolicy string `json:"imagePullPolicy" yaml:"imagePullPolicy"`
	// Workspace is how the pods see the repository, at the same path as
	// the launcher does. Wave agents need it; backlog workers, which
	// clone origin in their pod, do not.
	Workspace KubeWorkspace `json:"workspace" yaml:"workspace"`
	// GitCredentialsSecret names a kubernetes.io/basic-auth Secret
	// (username, password) mounted into backlog workers' pods: their
	// runner's git answers origin's credential requests from it.
	GitCredentialsSecret string `json:"gitCredentialsSecret" yaml:"gitCredentialsSecret"`
	// GitURL is origin's URL as the pods reach it (default: origin's URL
	// in the supervisor's clone).
	GitURL string `json:"gitURL" yaml:"gitURL"`
	// EnvFrom names Secrets whose keys become the agents' environment
	// (API keys); PassEnv copies variables of the launcher's environment
	// into each run's own Secret.
	EnvFrom []string `json:"envFrom" yaml:"envFrom"`
	PassEnv []string `json:"passEnv" yaml:"passEnv"`
	// CPU and Memory are each agent container's requests and limits
	// (Kubernetes quantities such as 2 and 2Gi).
	CPU          string            `json:"cpu" yaml:"cpu"`
	Memory       string            `json:"memory" yaml:"memory"`
	NodeSelector map[string]string `json:"nodeSelector" yaml:"nodeSelector"`
}

// KubeWorkspace is the volume holding the repository: a
// PersistentVolumeClaim the launcher also mounts (ReadWriteMany), or a
// path on the node (one-node clusters).
type KubeWorkspace struct {
	ClaimName string `json:"claimName" yaml:"claimName"`
	HostPath  string `json:"hostPath" yaml:"hostPath"`
}

// Silence is the stall window (0: off).
func (r Runtime) Silence() time.Duration {
	return time.Duration(r.SilenceMinutes)*time.Minute + time.Duration(r.SilenceSeconds)*time.Second
}

// NoProgress is the no-progress window of wave agents (0: off).
func (r Runtime) NoProgress() time.Duration {
	return time.Duration(r.NoProgressMinutes)*time.Minute + time.Duration(r.NoProgressSeconds)*time.Second
}

// GitHub configures backlog mode's API access.
type GitHub struct {
	Owner      string `json:"owner" yaml:"owner"`
	Repo       string `json:"repo" yaml:"repo"`
	BaseBranch string `json:"baseBranch" yaml:"baseBranch"`
	APIURL     string `json:"apiUrl" yaml:"apiUrl"`
	TokenEnv   string `json:"tokenEnv" yaml:"tokenEnv"`
	// Login is who the token acts as, for tokens that cannot read GET
	// /user (GitHub Apps, Actions): only its comments' markers count.
	Login string `json:"login" yaml:"login"`
}

// Backlog configures backlog mode (README, "Backlog mode"). Commands (probe, verify,
// claim hooks) are argv lists, never shell strings.
type Backlog struct {
	Source            string   `json:"source" yaml:"source"`     // github|local; default github when github.owner is set
	LocalDir          string   `json:"localDir" yaml:"localDir"` // local source: docs/backlog
	Width             int      `json:"width" yaml:"width"`       // workers at once, default 5
	MaxIssues         int      `json:"maxIssues" yaml:"maxIssues"`
	MaxMinutes        int      `json:"maxMinutes" yaml:"maxMinutes"`
	Labels            []string `json:"labels" yaml:"labels"` // required labels (AND)
	ClaimLabel        string   `json:"claimLabel" yaml:"claimLabel"`
	NeedsInputLabel   string   `json:"needsInputLabel" yaml:"needsInputLabel"`
	UndeclaredSurface string   `json:"undeclaredSurface" yaml:"undeclaredSurface"` // serial|parallel
	WorktreeRoot      string   `json:"worktreeRoot" yaml:"worktreeRoot"`
	SilenceMinutes    int      `json:"silenceMinutes" yaml:"silenceMinutes"` // default 60; 0 = off
	SilenceSeconds    int      `json:"silenceSeconds" yaml:"silenceSeconds"` // finer; wins when > 0
	// NoProgressMinutes is how long a worker may keep printing with
	// neither a new commit nor a changed file in its checkout before it
	// is stopped as no-progress (default 90; 0 = off);
	// NoProgressSeconds is finer and wins when > 0.
	NoProgressMinutes int `json:"noProgressMinutes" yaml:"noProgressMinutes"`
	NoProgressSeconds int `json:"noProgressSeconds" yaml:"noProgressSeconds"`
	// MaxRunsPerIssue caps an issue's worker runs of every kind (first
	// run, salvage, rework, answer, conflict), across the lane's backlog
	// runs (default 8; 0 = no cap): reached, the issue parks.
	MaxRunsPerIssue  int      `json:"maxRunsPerIssue" yaml:"maxRunsPerIssue"`
	WorkerPRs        *bool    `json:"workerPRs" yaml:"workerPRs"` // default true (github only)
	Verify           []string `json:"verify" yaml:"verify"`       // argv run at the would-be merge
	VerifyTimeoutMin int      `json:"verifyTimeoutMinutes" yaml:"verifyTimeoutMinutes"`
	// VerifyParallel is how many merge candidates are verified at once,
	// each on top of the ones ahead of it (0: min(width, 4); 1: one at a
	// time). docs/merge-gate.md, "The pipeline".
	VerifyParallel int `json:"verifyParallel" yaml:"verifyParallel"`
	// Setup is an argv run in each new worker checkout before its worker
	// starts (npm ci, go mod download), and in each verify checkout
	// before backlog.verify; SetupTimeoutMinutes bounds one run of it
	// (default 30).
	Setup               []string `json:"setup" yaml:"setup"`
	SetupTimeoutMinutes int      `json:"setupTimeoutMinutes" yaml:"setupTimeoutMinutes"`
	// CopyIgnored are globs of git-ignored files (.env,
	// config/local.yml) copied from the repository into each worker and
	// verify checkout, modes kept.
	CopyIgnored []string `json:"copyIgnored" yaml:"copyIgnored"`
	// Checks names the CI checks (check runs and commit statuses, by
	// name) a worker's head must pass before its merge, and the final
	// PR's; "branch-protection" stands for the branch's own required
	// checks (GitHub only).
	Checks []string `json:"checks" yaml:"checks"`
	// ChecksTimeoutMinutes is how long a required check may stay missing
	// or pending on a head before the issue parks with a question
	// (default 60).
	ChecksTimeoutMinutes int `json:"checksTimeoutMinutes" yaml:"checksTimeoutMinutes"`
	// SnapshotMinutes is how often a worker in a pod pushes a snapshot of
	// its uncommitted work to origin (default 10; 0: only when stopped
	// and at exit).
	SnapshotMinutes  int               `json:"snapshotMinutes" yaml:"snapshotMinutes"`
	Probe            Probe             `json:"probe" yaml:"probe"`
	Review           Review            `json:"review" yaml:"review"`
	Executor         map[string]string `json:"executor" yaml:"executor"` // `### Executor` keys
	Claim            Claim             `json:"claim" yaml:"claim"`
	WorkerRolePrompt string            `json:"workerRolePromptPath" yaml:"workerRolePromptPath"`
	// TransientRetryMinutes is how long the supervisor waits out a
	// transient failure (origin unreachable, disk full, a hook refusing
	// pushes) before it gives up; TransientRetrySeconds is finer and wins
	// when > 0. 0 and 0: give up at once.
	TransientRetryMinutes int `json:"transientRetryMinutes" yaml:"transientRetryMinutes"` // default 30
	TransientRetrySeconds int `json:"transientRetrySeconds" yaml:"transientRetrySeconds"`
	// ReworkRounds is how many times a failed verify, a reviewer's fail
	// verdict or a worker PR review asking for changes sends an issue
	// back to its worker before it is parked (default 2; 0 = park at once).
	ReworkRounds int `json:"reworkRounds" yaml:"reworkRounds"`
	// SurfacePolicy is what a worker's change to files outside its
	// issue's declared Files: list does: warn (merged, listed in the
	// final PR and status) or park (not merged; parked with the files).
	SurfacePolicy string `json:"surfacePolicy" yaml:"surfacePolicy"` // warn|park, default warn
	// InputWaitMinutes is how long a run with nothing left but workers'
	// questions waits for their answers before it ends with its final
	// PR (default 60; 0 = end at once; -1 = wait until answered).
	InputWaitMinutes int `json:"inputWaitMinutes" yaml:"inputWaitMinutes"`
	// Budget caps what one issue (its every worker run) and the whole
	// backlog run may spend (backlog.budget.perIssue|run).
	Budget BacklogBudget `json:"budget,omitzero" yaml:"budget,omitempty"`
	// Sandbox confines workers, reviewers and verify (backlog.sandbox;
	// auto unless set).
	Sandbox Sandbox `json:"sandbox,omitzero" yaml:"sandbox,omitempty"`
}

// Probe is backlog.probe: a connectivity check run before a salvage
// relaunch; a failing probe means wait and retry, not relaunch.
type Probe struct {
	Argv           []string `json:"argv" yaml:"argv"`
	TimeoutSeconds int      `json:"timeoutSeconds" yaml:"timeoutSeconds"`
}

// Review is backlog.review: a reviewer agent run over a ready worker's
// diff whose [wave-verdict] decides the merge.
type Review struct {
	Executor map[string]string `json:"executor" yaml:"executor"`
}

// Claim is backlog.claim: a repository's own claim system, run in
// addition to the claim ref ({issue} is replaced by the number), and the
// lease of our claims.
type Claim struct {
	Check        []string `json:"check" yaml:"check"`
	Command      []string `json:"command" yaml:"command"`
	LeaseMinutes int      `json:"leaseMinutes" yaml:"leaseMinutes"` // default 120
}

// Skills is the reference's skills section. This port does not project
// skills into prompts, so the section is ignored, but its keys are checked
// like the reference checks them: a misspelt role under byRole would
// otherwise be accepted and silently do nothing.
type Skills struct {
	Dir          string              `json:"dir,omitempty" yaml:"dir,omitempty"`
	Base         []string            `json:"base,omitempty" yaml:"base,omitempty"`
	ByRole       map[string][]string `json:"byRole,omitempty" yaml:"byRole,omitempty"`
	ByRuntime    map[string][]string `json:"byRuntime,omitempty" yaml:"byRuntime,omitempty"`
	ByDeployKind map[string][]string `json:"byDeployKind,omitempty" yaml:"byDeployKind,omitempty"`
}

// RuntimePolicy is lanes.<lane>.runtimePolicy.
type RuntimePolicy struct {
	RuntimeMixTargets     map[string]int    `json:"runtimeMixTargets,omitempty" yaml:"runtimeMixTargets,omitempty"`
	DefaultExecutorByRole map[string]string `json:"defaultExecutorByRole,omitempty" yaml:"defaultExecutorByRole,omitempty"`
	FallbackExecutorOrder []string          `json:"fallbackExecutorOrder,omitempty" yaml:"fallbackExecutorOrder,omitempty"`
}

// LaneConfig is lanes.<lane>: overrides merged over the top level. Path
// keys may be given flat (the reference's form) or under paths.
type LaneConfig struct {
	Paths          *Paths        `json:"paths,omitempty" yaml:"paths,omitempty"`
	DocsDir        string        `json:"docsDir,omitempty" yaml:"docsDir,omitempty"`
	PlansDir       string        `json:"plansDir,omitempty" yaml:"plansDir,omitempty"`
	WavesDir       string        `json:"wavesDir,omitempty" yaml:"wavesDir,omitempty"`
	Roles          *Roles        `json:"roles,omitempty" yaml:"roles,omitempty"`
	Validation     *Validation   `json:"validation,omitempty" yaml:"validation,omitempty"`
	Executors      *Executors    `json:"executors,omitempty" yaml:"executors,omitempty"`
	RuntimePolicy  RuntimePolicy `json:"runtimePolicy,omitzero" yaml:"runtimePolicy,omitempty"`
	SharedPlanDocs []string      `json:"sharedPlanDocs,omitempty" yaml:"sharedPlanDocs,omitempty"`
	Skills         *Skills       `json:"skills,omitempty" yaml:"skills,omitempty"`

	// Flat forms the reference accepts directly under lanes.<lane>.
	StateRoot                      string            `json:"stateRoot,omitempty" yaml:"stateRoot,omitempty"`
	ComponentCutoverMatrixDocPath  string            `json:"componentCutoverMatrixDocPath,omitempty" yaml:"componentCutoverMatrixDocPath,omitempty"`
	ComponentCutoverMatrixJSONPath string            `json:"componentCutoverMatrixJsonPath,omitempty" yaml:"componentCutoverMatrixJsonPath,omitempty"`
	BenchmarkCatalogPath           string            `json:"benchmarkCatalogPath,omitempty" yaml:"benchmarkCatalogPath,omitempty"`
	Context7BundleIndexPath        string            `json:"context7BundleIndexPath,omitempty" yaml:"context7BundleIndexPath,omitempty"`
	RuntimeMixTargets              map[string]int    `json:"runtimeMixTargets,omitempty" yaml:"runtimeMixTargets,omitempty"`
	DefaultExecutorByRole          map[string]string `json:"defaultExecutorByRole,omitempty" yaml:"defaultExecutorByRole,omitempty"`
	FallbackExecutorOrder          []string          `json:"fallbackExecutorOrder,omitempty" yaml:"fallbackExecutorOrder,omitempty"`

	// raw is the lane's section as read from the file. Merging replays it
	// over the top level, so a key set to its zero value (or null) in the
	// file still overrides; nil for a LaneConfig built in code.
	raw []byte
}

// Lane is the resolved view of one lane: top level with the lane's
// overrides merged in. Everything downstream reads this, never Config.
type Lane struct {
	Name           string
	Project        string
	RepoRoot       string // absolute
	DocsDir        string // repo-relative
	PlansDir       string
	WavesDir       string
	StateRoot      string // repo-relative, default .wave
	Roles          Roles
	Executors      Executors
	RuntimePolicy  RuntimePolicy
	Validation     Validation
	SharedPlanDocs []string
	Runtime        Runtime
	// Pricing is the price table in effect: config over the defaults.
	Pricing        usage.Pricing
	MatrixDocPath  string
	MatrixJSONPath string
	// BenchmarkCatalogPath and Context7BundleIndexPath are the files eval
	// targets and Context7 bundle names are checked against.
	BenchmarkCatalogPath    string
	Context7BundleIndexPath string
	// Notify is the config's notify sinks (not overridable per lane).
	Notify []NotifySink
	// SecretEnv are the variables the configuration names as credentials
	// (see SecretEnvNames): agents never get them unless kept.
	SecretEnv []string
}
