package kube

// The objects of the batch, coordination, authorization and
// authentication groups this package uses.

// Job is a run's Job (batch/v1).
type Job struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Spec       JobSpec   `json:"spec"`
	Status     JobStatus `json:"status,omitzero"`
}

// JobSpec is how a Job runs its pod. The pointers are sent only when
// set: the server defaults an absent one (backoffLimit to 6), so a 0
// meant must be sent as 0.
type JobSpec struct {
	Parallelism             *int32          `json:"parallelism,omitempty"`
	Completions             *int32          `json:"completions,omitempty"`
	ActiveDeadlineSeconds   *int64          `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit            *int32          `json:"backoffLimit,omitempty"`
	Template                PodTemplateSpec `json:"template"`
	TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
}

// JobStatus is how a Job is doing.
type JobStatus struct {
	Conditions []JobCondition `json:"conditions,omitempty"`
}

// JobCondition is one of a Job's conditions (Complete, Failed, …).
type JobCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime Time   `json:"lastTransitionTime,omitzero"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

const (
	// jobConditionFailed is the condition of a Job that failed.
	jobConditionFailed = "Failed"
	// jobDeadlineExceeded is the reason of a Job failed by its
	// activeDeadlineSeconds.
	jobDeadlineExceeded = "DeadlineExceeded"
)

// Lease is a run's Lease (coordination.k8s.io/v1): the runner renews it.
type Lease struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Spec       LeaseSpec `json:"spec"`
}

// LeaseSpec is who holds a Lease, and until when.
type LeaseSpec struct {
	HolderIdentity       *string    `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32     `json:"leaseDurationSeconds,omitempty"`
	RenewTime            *MicroTime `json:"renewTime,omitempty"`
}

// ResourceAttributes are what an access review asks about.
type ResourceAttributes struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

// SelfSubjectAccessReview asks whether this user may do something.
type SelfSubjectAccessReview struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Spec       struct {
		ResourceAttributes *ResourceAttributes `json:"resourceAttributes,omitempty"`
	} `json:"spec"`
	Status AccessReviewStatus `json:"status,omitzero"`
}

// SubjectAccessReviewSpec names a user (and groups) and what is asked.
type SubjectAccessReviewSpec struct {
	ResourceAttributes *ResourceAttributes `json:"resourceAttributes,omitempty"`
	User               string              `json:"user,omitempty"`
	Groups             []string            `json:"groups,omitempty"`
}

// SubjectAccessReview asks whether a user may do something.
type SubjectAccessReview struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Spec       SubjectAccessReviewSpec `json:"spec"`
	Status     AccessReviewStatus      `json:"status,omitzero"`
}

// LocalSubjectAccessReview is a SubjectAccessReview in a namespace
// (which a Role can grant).
type LocalSubjectAccessReview SubjectAccessReview

// AccessReviewStatus is an access review's answer.
type AccessReviewStatus struct {
	Allowed bool   `json:"allowed"`
	Denied  bool   `json:"denied,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// SelfSubjectReview asks who this user is.
type SelfSubjectReview struct {
	typeMeta
	ObjectMeta `json:"metadata"`
	Status     struct {
		UserInfo struct {
			Username string   `json:"username,omitempty"`
			Groups   []string `json:"groups,omitempty"`
		} `json:"userInfo"`
	} `json:"status,omitzero"`
}
