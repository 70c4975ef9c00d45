package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Every field of kube's own API types is read from what k8s.io/api's
// types write: objects with each of those fields set, encoded by
// k8s.io/api, decode into kube's types with none left unset. A field
// whose JSON name is misspelt stays unset and fails here.
func TestOwnTypesReadEveryFieldOfTheAPI(t *testing.T) {
	at := metav1.NewTime(t0.Add(time.Minute))
	meta := metav1.ObjectMeta{Name: "n", Namespace: "ns", UID: "u", ResourceVersion: "7", CreationTimestamp: at,
		Labels: map[string]string{"l": "v"}, Annotations: map[string]string{"a": "v"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "ju"}}}
	spec := corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
			Secret:                &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr.To[int32](0o400)},
			EmptyDir:              &corev1.EmptyDirVolumeSource{},
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"},
			HostPath:              &corev1.HostPathVolumeSource{Path: "/p", Type: ptr.To(corev1.HostPathDirectory)}}}},
		Containers: []corev1.Container{{Name: "agent", Image: "i", Command: []string{"c"}, Args: []string{"a"}, WorkingDir: "/w",
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}},
			Env:     []corev1.EnvVar{{Name: "E", Value: "v", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
			VolumeMounts:           []corev1.VolumeMount{{Name: "v", ReadOnly: true, MountPath: "/m"}},
			TerminationMessagePath: "/t", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent, Stdin: true, TTY: true}},
		RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](15),
		NodeSelector: map[string]string{"k": "v"}, ServiceAccountName: "sa", NodeName: "node", EnableServiceLinks: ptr.To(false),
	}
	pod := &corev1.Pod{ObjectMeta: meta, Spec: spec, Status: corev1.PodStatus{Phase: corev1.PodRunning, Message: "m", Reason: "r",
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Reason: "r", Message: "m"}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "agent", State: corev1.ContainerState{
			Waiting:    &corev1.ContainerStateWaiting{Reason: "r", Message: "m"},
			Running:    &corev1.ContainerStateRunning{StartedAt: at},
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "r", Message: "m", StartedAt: at, FinishedAt: at}}}}}}
	job := &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
		ActiveDeadlineSeconds: ptr.To[int64](9), BackoffLimit: ptr.To[int32](0), TTLSecondsAfterFinished: ptr.To[int32](5),
		Template: corev1.PodTemplateSpec{ObjectMeta: meta, Spec: spec}},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
			LastTransitionTime: at, Reason: batchv1.JobReasonDeadlineExceeded, Message: "m"}}}}
	renew := metav1.NewMicroTime(t0.Add(1500 * time.Microsecond))
	lease := &coordv1.Lease{ObjectMeta: meta, Spec: coordv1.LeaseSpec{HolderIdentity: ptr.To("h"),
		LeaseDurationSeconds: ptr.To[int32](7), RenewTime: &renew}}
	secret := &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}}
	ns := &corev1.Namespace{ObjectMeta: meta, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	attrs := &authzv1.ResourceAttributes{Namespace: "ns", Verb: "get", Group: "g", Resource: "r", Subresource: "s", Name: "n"}
	review := authzv1.SubjectAccessReviewStatus{Allowed: true, Denied: true, Reason: "r"}
	sar := &authzv1.SubjectAccessReview{ObjectMeta: meta, Spec: authzv1.SubjectAccessReviewSpec{ResourceAttributes: attrs,
		User: "u", Groups: []string{"g"}}, Status: review}
	self := &authzv1.SelfSubjectAccessReview{ObjectMeta: meta,
		Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}, Status: review}
	who := &authnv1.SelfSubjectReview{ObjectMeta: meta, Status: authnv1.SelfSubjectReviewStatus{
		UserInfo: authnv1.UserInfo{Username: "u", Groups: []string{"g"}}}}
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: "m", Reason: metav1.StatusReasonNotFound, Code: 404, Details: &metav1.StatusDetails{Name: "n", Group: "g", Kind: "k",
			RetryAfterSeconds: 1, Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Message: "m", Field: "f"}}}}
	for _, c := range []struct {
		name     string
		from, to any
	}{
		{"pod", pod, &Pod{}}, {"job", job, &Job{}}, {"lease", lease, &Lease{}}, {"secret", secret, &Secret{}},
		{"namespace", ns, &Namespace{}}, {"service account", &corev1.ServiceAccount{ObjectMeta: meta}, &ServiceAccount{}},
		{"subject access review", sar, &SubjectAccessReview{}}, {"local subject access review", sar, &LocalSubjectAccessReview{}},
		{"self subject access review", self, &SelfSubjectAccessReview{}}, {"self subject review", who, &SelfSubjectReview{}},
		{"status", status, &Status{}},
	} {
		b, err := json.Marshal(c.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, c.to); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, path := range unset(reflect.ValueOf(c.to).Elem(), c.name) {
			t.Errorf("%s is not read from k8s.io/api's JSON", path)
		}
		// encoding/json reads keys whatever their case; the API server
		// does not: what kube writes back must be spelt as it was read.
		mine, err := json.Marshal(c.to)
		if err != nil {
			t.Fatal(err)
		}
		if path := notWithin(wireMeaning(t, mine), wireMeaning(t, b), c.name); path != "" {
			t.Errorf("%s: kube writes what k8s.io/api does not (%s)", path, mine)
		}
	}
	var l Lease
	if b, _ := json.Marshal(lease); json.Unmarshal(b, &l) != nil || !l.Spec.RenewTime.Equal(renew.Time) {
		t.Errorf("renewTime %v, want %v to the microsecond", l.Spec.RenewTime, renew)
	}
}

// unset are the paths of v's fields that hold their zero value (a
// pointer set to a zero is set), the typeMeta aside: k8s.io/api's
// types leave it to the scheme.
func unset(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		if v.Elem().Kind() != reflect.Struct {
			return nil // set, and maybe set to its zero: backoffLimit 0
		}
		return unset(v.Elem(), path)
	case reflect.Struct:
		if _, ok := v.Interface().(Time); ok {
			return unset(reflect.ValueOf(v.Interface().(Time).Time), path)
		}
		if _, ok := v.Interface().(MicroTime); ok {
			return nil
		}
		if v.Type() == reflect.TypeFor[time.Time]() {
			if v.Interface().(time.Time).IsZero() {
				return []string{path}
			}
			return nil
		}
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type == reflect.TypeFor[typeMeta]() {
				continue
			}
			out = append(out, unset(v.Field(i), path+"."+f.Name)...)
		}
		return out
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8 {
			return unset(v.Index(0), path+"[0]")
		}
		return nil
	}
	if v.IsZero() && v.Kind() != reflect.Bool {
		return []string{path}
	}
	if v.Kind() == reflect.Bool && !v.Bool() {
		return []string{path}
	}
	return nil
}

// notWithin is the path of the first value of a not in b ("" when a's
// fields are all b's, with b's values).
func notWithin(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range x {
			if p := notWithin(v, y[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path
		}
		for i := range x {
			if p := notWithin(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return path
	}
	return ""
}

// The bodies and timestamps kube writes outside the manifests are
// k8s.io/api's, byte for byte.
func TestDeleteOptionsAndTimestampsAreTheAPIs(t *testing.T) {
	grace := int64(5)
	got, err := deleteBody(deleteOptions{GracePeriodSeconds: &grace, PropagationPolicy: new(propagateInBackground)})
	if err != nil {
		t.Fatal(err)
	}
	bg := metav1.DeletePropagationBackground
	want, _ := json.Marshal(&metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		GracePeriodSeconds: &grace, PropagationPolicy: &bg})
	if string(got) != string(want) {
		t.Errorf("delete body %s, want %s", got, want)
	}
	empty, _ := deleteBody(deleteOptions{})
	want, _ = json.Marshal(&metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}})
	if string(empty) != string(want) {
		t.Errorf("delete body %s, want %s", empty, want)
	}
	at := time.Date(2026, 12, 2, 13, 4, 5, 123456789, time.FixedZone("x", 3600))
	for _, c := range []struct{ mine, theirs any }{
		{MicroTime{at}, metav1.NewMicroTime(at)}, {Time{at}, metav1.NewTime(at)},
		{MicroTime{}, metav1.MicroTime{}}, {Time{}, metav1.Time{}},
	} {
		m, _ := json.Marshal(c.mine)
		th, _ := json.Marshal(c.theirs)
		if string(m) != string(th) {
			t.Errorf("%T: %s, want %s", c.mine, m, th)
		}
	}
}

// checkQuantity takes what resource.ParseQuantity takes (the forms a
// config gives), and refuses what it refuses.
func TestQuantitiesAreTheAPIs(t *testing.T) {
	for _, q := range []string{"1", "500m", "0.5", ".5", "1.", "+2", "-1", "1Gi", "512Mi", "2k", "1M", "3E", "1e3", "1E-2", "1e+3", "100Ki",
		"", "m", "1.5.5", "1g", "1gi", "1KiB", "1 Gi", "Gi", "1e", "1e1.5", "--1", "1.5x", " 1", "1Ki5", "0x10", "1ei",
		"+m", ".", "+", "-Gi", "-.5", "e3", "1.e3", "1e-", "1e+", "1E", "1Ei", "+-1", "1..", "1.2.", "1e3e3"} {
		_, want := resource.ParseQuantity(q)
		if got := checkQuantity(q); (got == nil) != (want == nil) {
			t.Errorf("%q: checkQuantity %v, resource.ParseQuantity %v", q, got, want)
		}
	}
}
