package kube

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Options is what the backend needs beyond a cluster client.
type Options struct {
	Namespace      string
	Image          string
	ServiceAccount string
	// Binary is wave-orchestrator's path in the image.
	Binary          string
	ImagePullPolicy string
	// WorkspaceClaim or WorkspaceHostPath is mounted at RepoRoot; runs
	// without a Payload.Checkout need one.
	WorkspaceClaim    string
	WorkspaceHostPath string
	RepoRoot          string
	// GitCredentialsSecret names the basic-auth Secret mounted into the
	// pods of runs with a Payload.Checkout (runtime.kubernetes.gitCredentialsSecret).
	GitCredentialsSecret string
	Lane                 string
	// EnvFrom names Secrets for the agents' environment; PassEnv are
	// values copied into each run's own Secret.
	EnvFrom      []string
	PassEnv      map[string]string
	CPU, Memory  string
	NodeSelector map[string]string
	// LaunchGrace is how long a run may stay without a pod, or with a
	// container that cannot start, before it is failed (default
	// runtime.DefaultLaunchGrace).
	LaunchGrace time.Duration
	// FinishedTTL is the Jobs' ttlSecondsAfterFinished (default
	// finishedTTL; tests shorten it to meet the real TTL controller).
	FinishedTTL int32
}

// agentTerm is the TERM of agents in pods, unless their executor sets
// one.
const agentTerm = "xterm-256color"

// finishedTTL is how long a finished Job (and its pod, Lease and
// Secret) stays in the cluster.
const finishedTTL = 600

// DefaultBinary is wave-orchestrator's path in the agent image.
const DefaultBinary = "/usr/local/bin/wave-orchestrator"

// Paths inside the agent container.
const (
	inDir          = "/wave/in"
	podDir         = "/wave/pod"
	terminationLog = "/dev/termination-log"
	payloadKey     = "launch.json"
)

func (o Options) instance() string { return Instance(o.RepoRoot, o.Lane) }

// leaseSeconds is a run's Lease duration: three heartbeats, and never
// less than one heartbeat plus the time one renewal may take
// (runtime.ReportTimeout): a runner whose PATCH is merely slow, on a
// loaded node or API server, is not lost. A 200 ms heartbeat made 1 s
// Leases, which a loaded machine missed.
func leaseSeconds(p *runtime.Payload) int {
	every := time.Duration(p.HeartbeatIntervalMs) * time.Millisecond
	if every <= 0 {
		every = 2 * time.Second
	}
	d := max(3*every, every+runtime.ReportTimeout)
	return int(math.Ceil(d.Seconds()))
}

// podPayload is the launch.json the pod's runner reads: the launcher's,
// with the real env values (it travels in a Secret), no tmux, and the
// image's binary where the agent command names the launcher's.
func podPayload(p *runtime.Payload, o Options, self, name string) runtime.Payload {
	pp := *p
	pp.Argv = append([]string(nil), p.Argv...)
	if len(pp.Argv) > 0 && self != "" && pp.Argv[0] == self {
		pp.Argv[0] = o.binary()
	}
	pp.Env = maps.Clone(p.Env)
	if pp.Env == nil {
		pp.Env = map[string]string{}
	}
	for k, v := range o.PassEnv {
		if _, set := pp.Env[k]; !set {
			pp.Env[k] = v
		}
	}
	if _, set := pp.Env["TERM"]; !set {
		// The runner's own TERM is dumb (see container); agents get a
		// usual one, but our own binary needs none: it would ask a
		// terminal that nobody answers in a pod for its colours.
		pp.Env["TERM"] = agentTerm
		if len(pp.Argv) > 0 && pp.Argv[0] == o.binary() {
			pp.Env["TERM"] = "dumb"
		}
	}
	pp.RuntimePath, pp.StatusPath = "", ""
	pp.SocketName, pp.SessionName = "", ""
	pp.Kubernetes = &runtime.KubeRun{Namespace: o.Namespace, Name: name, LeaseDurationSeconds: leaseSeconds(p)}
	return pp
}

func (o Options) finishedTTL() int32 {
	if o.FinishedTTL <= 0 {
		return finishedTTL
	}
	return o.FinishedTTL
}

func (o Options) binary() string {
	if o.Binary == "" {
		return DefaultBinary
	}
	return o.Binary
}

func runLabels(o Options, p *runtime.Payload) map[string]string {
	return map[string]string{
		LabelInstance: o.instance(),
		LabelLane:     LabelValue(p.Lane),
		LabelWave:     strconv.Itoa(p.WaveNumber),
		LabelAgent:    LabelValue(p.AgentID),
		LabelRun:      LabelValue(p.RunID),
	}
}

func runAnnotations(p *runtime.Payload) map[string]string {
	return map[string]string{AnnotationAgentID: p.AgentID, AnnotationRunID: p.RunID}
}

// jobFor builds a run's Job. now is when it is created: the Job's own
// deadline is a backstop past the runner's (which stops the agent and
// records a timeout itself), for a runner that cannot.
func jobFor(p *runtime.Payload, o Options, name string, now time.Time) *Job {
	labels := runLabels(o, p)
	grace := int64(p.TerminateGraceMs/1000) + 10
	job := &Job{
		ObjectMeta: ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels, Annotations: runAnnotations(p)},
		Spec: JobSpec{
			BackoffLimit: new(int32(0)), // retries are the launcher's
			// A finished run's objects stay a while for kubectl, then go.
			TTLSecondsAfterFinished: new(o.finishedTTL()),
			Parallelism:             new(int32(1)),
			Completions:             new(int32(1)),
			Template: PodTemplateSpec{
				ObjectMeta: ObjectMeta{Labels: maps.Clone(labels), Annotations: runAnnotations(p)},
				Spec: PodSpec{
					RestartPolicy:                 restartNever,
					ServiceAccountName:            o.ServiceAccount,
					TerminationGracePeriodSeconds: &grace,
					EnableServiceLinks:            new(false),
					NodeSelector:                  o.NodeSelector,
					Containers:                    []PodContainer{container(p, o)},
					Volumes:                       volumes(p, o, name),
				},
			},
		},
	}
	if p.DeadlineAt != nil {
		left := p.DeadlineAt.Sub(now) + time.Duration(grace)*time.Second + time.Minute
		job.Spec.ActiveDeadlineSeconds = new(max(1, int64(left.Seconds())))
	}
	return job
}

func container(p *runtime.Payload, o Options) PodContainer {
	c := PodContainer{
		Name:                     Container,
		Image:                    o.Image,
		ImagePullPolicy:          o.ImagePullPolicy,
		Command:                  []string{o.binary()},
		Args:                     []string{"agent-run", "--payload", inDir + "/" + payloadKey},
		WorkingDir:               workingDir(p),
		TTY:                      true,
		Stdin:                    true,
		TerminationMessagePath:   terminationLog,
		TerminationMessagePolicy: terminationMessageFile,
		Env: []EnvVar{
			{Name: "WAVE_POD_NAME", ValueFrom: &EnvSource{FieldRef: &FieldRef{FieldPath: "metadata.name"}}},
			{Name: "WAVE_POD_NAMESPACE", ValueFrom: &EnvSource{FieldRef: &FieldRef{FieldPath: "metadata.namespace"}}},
			{Name: "WAVE_POD_DIR", Value: podDir},
			{Name: "WAVE_TERMINATION_LOG", Value: terminationLog},
			{Name: envInDir, Value: inDir},
			// Libraries in the runner query the terminal's colours at
			// start and wait 5 s for an answer no pod terminal gives;
			// they skip the query for a dumb one. The runner draws
			// nothing; the agent's TERM is in the payload.
			{Name: "TERM", Value: "dumb"},
		},
		VolumeMounts: mounts(p, o),
	}
	if p.Checkout != nil {
		c.Env = append(c.Env, EnvVar{Name: runtime.EnvRunDir, Value: p.RunDir},
			EnvVar{Name: runtime.EnvCheckoutDir, Value: p.Checkout.Dir})
		if o.GitCredentialsSecret != "" {
			c.Env = append(c.Env, EnvVar{Name: envGitCredentials, Value: gitCredentialsDir})
		}
	}
	for _, s := range o.EnvFrom {
		c.EnvFrom = append(c.EnvFrom, EnvFromSource{SecretRef: &NameRef{Name: s}})
	}
	if o.CPU != "" || o.Memory != "" {
		rl := map[string]string{}
		if o.CPU != "" {
			rl["cpu"] = o.CPU
		}
		if o.Memory != "" {
			rl["memory"] = o.Memory
		}
		c.Resources = Resources{Requests: rl, Limits: maps.Clone(rl)}
	}
	return c
}

func volumes(p *runtime.Payload, o Options, name string) []Volume {
	vs := []Volume{
		{Name: "wave-in", Secret: &SecretVolume{SecretName: name, DefaultMode: new(int32(0o400))}},
		{Name: "wave-pod", EmptyDir: &EmptyDirVolume{}},
	}
	if p.Checkout != nil {
		// No shared disk: the run dir and the clone are the pod's own.
		vs = append(vs,
			Volume{Name: "wave-run", EmptyDir: &EmptyDirVolume{}},
			Volume{Name: "wave-checkout", EmptyDir: &EmptyDirVolume{}})
		if o.GitCredentialsSecret != "" {
			vs = append(vs, Volume{Name: "git-credentials", Secret: &SecretVolume{
				SecretName: o.GitCredentialsSecret, DefaultMode: new(int32(0o400))}})
		}
		return vs
	}
	ws := Volume{Name: "workspace"}
	if o.WorkspaceClaim != "" {
		ws.PersistentVolumeClaim = &PersistentVolumeClaim{ClaimName: o.WorkspaceClaim}
	} else {
		ws.HostPath = &HostPathVolume{Path: o.WorkspaceHostPath, Type: new(hostPathDirectory)}
	}
	return append(vs, ws)
}

// mounts are the agent container's mounts of volumes.
func mounts(p *runtime.Payload, o Options) []VolumeMount {
	ms := []VolumeMount{
		{Name: "wave-in", MountPath: inDir, ReadOnly: true},
		{Name: "wave-pod", MountPath: podDir},
	}
	if co := p.Checkout; co != nil {
		ms = append(ms, VolumeMount{Name: "wave-run", MountPath: p.RunDir})
		if co.Dir != p.RunDir {
			ms = append(ms, VolumeMount{Name: "wave-checkout", MountPath: co.Dir})
		}
		if o.GitCredentialsSecret != "" {
			ms = append(ms, VolumeMount{Name: "git-credentials", MountPath: gitCredentialsDir, ReadOnly: true})
		}
		return ms
	}
	return append(ms, VolumeMount{Name: "workspace", MountPath: o.RepoRoot})
}

// workingDir is the container's: the agent's for a run on the shared
// workspace; for one that clones, a directory there from the start (the
// runner starts the agent in the clone itself).
func workingDir(p *runtime.Payload) string {
	if p.Checkout != nil {
		return podDir
	}
	return p.Cwd
}

// ownedBy makes job the owner of a run's other objects, so deleting the
// Job deletes them.
func ownedBy(job *Job) []OwnerReference {
	return []OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}}
}

func secretFor(p *runtime.Payload, o Options, self string, job *Job) (*Secret, error) {
	pp := podPayload(p, o, self, job.Name)
	b, err := json.Marshal(pp)
	if err != nil {
		return nil, fmt.Errorf("run %s: payload: %w", p.RunID, err)
	}
	data := map[string][]byte{payloadKey: b}
	if p.Checkout != nil {
		if err := addRunFiles(data, p.RunDir); err != nil {
			return nil, fmt.Errorf("run %s: %w", p.RunID, err)
		}
	}
	return &Secret{
		ObjectMeta: ObjectMeta{Name: job.Name, Namespace: o.Namespace, Labels: runLabels(o, p),
			Annotations: runAnnotations(p), OwnerReferences: ownedBy(job)},
		Type: secretOpaque,
		Data: data,
	}, nil
}

func leaseFor(p *runtime.Payload, o Options, job *Job) *Lease {
	return &Lease{
		ObjectMeta: ObjectMeta{Name: job.Name, Namespace: o.Namespace, Labels: runLabels(o, p),
			Annotations: runAnnotations(p), OwnerReferences: ownedBy(job)},
		Spec: LeaseSpec{LeaseDurationSeconds: new(int32(leaseSeconds(p)))},
	}
}
