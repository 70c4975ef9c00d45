package kube

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
func jobFor(p *runtime.Payload, o Options, name string, now time.Time) *batchv1.Job {
	labels := runLabels(o, p)
	grace := int64(p.TerminateGraceMs/1000) + 10
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels, Annotations: runAnnotations(p)},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)), // retries are the launcher's
			// A finished run's objects stay a while for kubectl, then go.
			TTLSecondsAfterFinished: new(o.finishedTTL()),
			Parallelism:             new(int32(1)),
			Completions:             new(int32(1)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels), Annotations: runAnnotations(p)},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            o.ServiceAccount,
					TerminationGracePeriodSeconds: &grace,
					EnableServiceLinks:            new(false),
					NodeSelector:                  o.NodeSelector,
					Containers:                    []corev1.Container{container(p, o)},
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

func container(p *runtime.Payload, o Options) corev1.Container {
	c := corev1.Container{
		Name:                     Container,
		Image:                    o.Image,
		ImagePullPolicy:          corev1.PullPolicy(o.ImagePullPolicy),
		Command:                  []string{o.binary()},
		Args:                     []string{"agent-run", "--payload", inDir + "/" + payloadKey},
		WorkingDir:               workingDir(p),
		TTY:                      true,
		Stdin:                    true,
		TerminationMessagePath:   terminationLog,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		Env: []corev1.EnvVar{
			{Name: "WAVE_POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "WAVE_POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
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
		c.Env = append(c.Env, corev1.EnvVar{Name: runtime.EnvRunDir, Value: p.RunDir},
			corev1.EnvVar{Name: runtime.EnvCheckoutDir, Value: p.Checkout.Dir})
		if o.GitCredentialsSecret != "" {
			c.Env = append(c.Env, corev1.EnvVar{Name: envGitCredentials, Value: gitCredentialsDir})
		}
	}
	for _, s := range o.EnvFrom {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s}}})
	}
	if o.CPU != "" || o.Memory != "" {
		rl := corev1.ResourceList{}
		if o.CPU != "" {
			rl[corev1.ResourceCPU] = resource.MustParse(o.CPU)
		}
		if o.Memory != "" {
			rl[corev1.ResourceMemory] = resource.MustParse(o.Memory)
		}
		c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
	}
	return c
}

func volumes(p *runtime.Payload, o Options, name string) []corev1.Volume {
	vs := []corev1.Volume{
		{Name: "wave-in", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name, DefaultMode: new(int32(0o400))}}},
		{Name: "wave-pod", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if p.Checkout != nil {
		// No shared disk: the run dir and the clone are the pod's own.
		vs = append(vs,
			corev1.Volume{Name: "wave-run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			corev1.Volume{Name: "wave-checkout", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		if o.GitCredentialsSecret != "" {
			vs = append(vs, corev1.Volume{Name: "git-credentials", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: o.GitCredentialsSecret, DefaultMode: new(int32(0o400))}}})
		}
		return vs
	}
	ws := corev1.VolumeSource{}
	if o.WorkspaceClaim != "" {
		ws.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.WorkspaceClaim}
	} else {
		ws.HostPath = &corev1.HostPathVolumeSource{Path: o.WorkspaceHostPath, Type: new(corev1.HostPathDirectory)}
	}
	return append(vs, corev1.Volume{Name: "workspace", VolumeSource: ws})
}

// mounts are the agent container's mounts of volumes.
func mounts(p *runtime.Payload, o Options) []corev1.VolumeMount {
	ms := []corev1.VolumeMount{
		{Name: "wave-in", MountPath: inDir, ReadOnly: true},
		{Name: "wave-pod", MountPath: podDir},
	}
	if co := p.Checkout; co != nil {
		ms = append(ms, corev1.VolumeMount{Name: "wave-run", MountPath: p.RunDir})
		if co.Dir != p.RunDir {
			ms = append(ms, corev1.VolumeMount{Name: "wave-checkout", MountPath: co.Dir})
		}
		if o.GitCredentialsSecret != "" {
			ms = append(ms, corev1.VolumeMount{Name: "git-credentials", MountPath: gitCredentialsDir, ReadOnly: true})
		}
		return ms
	}
	return append(ms, corev1.VolumeMount{Name: "workspace", MountPath: o.RepoRoot})
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
func ownedBy(job *batchv1.Job) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}}
}

func secretFor(p *runtime.Payload, o Options, self string, job *batchv1.Job) (*corev1.Secret, error) {
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
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name, Namespace: o.Namespace, Labels: runLabels(o, p),
			Annotations: runAnnotations(p), OwnerReferences: ownedBy(job)},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}, nil
}

func leaseFor(p *runtime.Payload, o Options, job *batchv1.Job) *coordv1.Lease {
	return &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name, Namespace: o.Namespace, Labels: runLabels(o, p),
			Annotations: runAnnotations(p), OwnerReferences: ownedBy(job)},
		Spec: coordv1.LeaseSpec{LeaseDurationSeconds: new(int32(leaseSeconds(p)))},
	}
}
