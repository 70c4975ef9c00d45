package kube

// The core group's objects (v1): pods, Secrets, namespaces and service
// accounts, with the fields this package reads or writes.

// Pod is a pod as the package makes it (in a Job's template) and reads it.
type Pod struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Spec       PodSpec   `json:"spec"`
	Status     PodStatus `json:"status,omitzero"`
}

// PodTemplateSpec is the pod a Job makes.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata"`
	Spec       PodSpec `json:"spec"`
}

// PodSpec is what a pod runs, and where.
type PodSpec struct {
	Volumes                       []Volume          `json:"volumes,omitempty"`
	Containers                    []PodContainer    `json:"containers"`
	RestartPolicy                 string            `json:"restartPolicy,omitempty"`
	TerminationGracePeriodSeconds *int64            `json:"terminationGracePeriodSeconds,omitempty"`
	NodeSelector                  map[string]string `json:"nodeSelector,omitempty"`
	ServiceAccountName            string            `json:"serviceAccountName,omitempty"`
	NodeName                      string            `json:"nodeName,omitempty"`
	// EnableServiceLinks is sent false: unset, the server makes it true.
	EnableServiceLinks *bool `json:"enableServiceLinks,omitempty"`
}

// restartNever: a Job's pod whose container ended is not restarted.
const restartNever = "Never"

// Volume is one of a pod's volumes; one of its sources is set.
type Volume struct {
	Name                  string                 `json:"name"`
	Secret                *SecretVolume          `json:"secret,omitempty"`
	EmptyDir              *EmptyDirVolume        `json:"emptyDir,omitempty"`
	PersistentVolumeClaim *PersistentVolumeClaim `json:"persistentVolumeClaim,omitempty"`
	HostPath              *HostPathVolume        `json:"hostPath,omitempty"`
}

// SecretVolume mounts a Secret's keys as files.
type SecretVolume struct {
	SecretName  string `json:"secretName,omitempty"`
	DefaultMode *int32 `json:"defaultMode,omitempty"`
}

// EmptyDirVolume is a directory of the pod's own, empty at start.
type EmptyDirVolume struct{}

// PersistentVolumeClaim mounts a claim's volume.
type PersistentVolumeClaim struct {
	ClaimName string `json:"claimName"`
}

// HostPathVolume mounts a directory of the node.
type HostPathVolume struct {
	Path string  `json:"path"`
	Type *string `json:"type,omitempty"`
}

// hostPathDirectory: the node's directory must exist.
const hostPathDirectory = "Directory"

// PodContainer is one of a pod's containers.
type PodContainer struct {
	Name                     string          `json:"name"`
	Image                    string          `json:"image,omitempty"`
	Command                  []string        `json:"command,omitempty"`
	Args                     []string        `json:"args,omitempty"`
	WorkingDir               string          `json:"workingDir,omitempty"`
	EnvFrom                  []EnvFromSource `json:"envFrom,omitempty"`
	Env                      []EnvVar        `json:"env,omitempty"`
	Resources                Resources       `json:"resources,omitzero"`
	VolumeMounts             []VolumeMount   `json:"volumeMounts,omitempty"`
	TerminationMessagePath   string          `json:"terminationMessagePath,omitempty"`
	TerminationMessagePolicy string          `json:"terminationMessagePolicy,omitempty"`
	ImagePullPolicy          string          `json:"imagePullPolicy,omitempty"`
	Stdin                    bool            `json:"stdin,omitempty"`
	TTY                      bool            `json:"tty,omitempty"`
}

// terminationMessageFile: the termination message is the file's.
const terminationMessageFile = "File"

// EnvVar is one variable of a container's environment: a value, or one
// read from the pod's own fields.
type EnvVar struct {
	Name      string     `json:"name"`
	Value     string     `json:"value,omitempty"`
	ValueFrom *EnvSource `json:"valueFrom,omitempty"`
}

// EnvSource reads a variable's value from the pod.
type EnvSource struct {
	FieldRef *FieldRef `json:"fieldRef,omitempty"`
}

// FieldRef names one of the pod's fields: "metadata.name".
type FieldRef struct {
	FieldPath string `json:"fieldPath"`
}

// EnvFromSource puts every key of a Secret into the environment.
type EnvFromSource struct {
	SecretRef *NameRef `json:"secretRef,omitempty"`
}

// NameRef names an object in the pod's namespace.
type NameRef struct {
	Name string `json:"name,omitempty"`
}

// Resources are a container's requests and limits, by resource name
// ("cpu", "memory"), as quantities ("500m", "1Gi"; see checkQuantity).
type Resources struct {
	Limits   map[string]string `json:"limits,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
}

// VolumeMount mounts a volume in a container.
type VolumeMount struct {
	Name      string `json:"name"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	MountPath string `json:"mountPath"`
}

// PodStatus is how a pod is doing.
type PodStatus struct {
	Phase             string            `json:"phase,omitempty"`
	Conditions        []PodCondition    `json:"conditions,omitempty"`
	Message           string            `json:"message,omitempty"`
	Reason            string            `json:"reason,omitempty"`
	ContainerStatuses []ContainerStatus `json:"containerStatuses,omitempty"`
}

// The phases of a pod.
const (
	PodPending   = "Pending"
	PodRunning   = "Running"
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"
)

// PodCondition is one of a pod's conditions (PodScheduled, Ready, …).
type PodCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// podScheduled is the condition saying whether the pod has a node.
const podScheduled = "PodScheduled"

// The values of a condition's status.
const (
	conditionTrue  = "True"
	conditionFalse = "False"
)

// ContainerStatus is one container's state.
type ContainerStatus struct {
	Name  string         `json:"name"`
	State ContainerState `json:"state,omitzero"`
}

// ContainerState is a container's state: one of the three is set.
type ContainerState struct {
	Waiting    *ContainerWaiting    `json:"waiting,omitempty"`
	Running    *ContainerRunning    `json:"running,omitempty"`
	Terminated *ContainerTerminated `json:"terminated,omitempty"`
}

// ContainerWaiting is a container not running yet, and why.
type ContainerWaiting struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ContainerRunning is a running container.
type ContainerRunning struct {
	StartedAt Time `json:"startedAt,omitzero"`
}

// ContainerTerminated is a container that ended.
type ContainerTerminated struct {
	ExitCode   int32  `json:"exitCode"`
	Reason     string `json:"reason,omitempty"`
	Message    string `json:"message,omitempty"`
	StartedAt  Time   `json:"startedAt,omitzero"`
	FinishedAt Time   `json:"finishedAt,omitzero"`
}

// Secret holds a run's launch.json and env values.
type Secret struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
}

// secretOpaque is a Secret of arbitrary keys.
const secretOpaque = "Opaque"

// Namespace is a namespace; only its phase is read.
type Namespace struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Status     struct {
		Phase string `json:"phase,omitempty"`
	} `json:"status,omitzero"`
}

// namespaceTerminating: the namespace is being deleted.
const namespaceTerminating = "Terminating"

// ServiceAccount is a service account; only its existence is read.
type ServiceAccount struct {
	typeMeta
	ObjectMeta `json:"metadata"`
}
