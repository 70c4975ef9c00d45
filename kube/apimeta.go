package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The API objects' common parts, as the package reads and writes them.
// These are kube's own types with only the fields it uses, named as the
// Kubernetes API names them on the wire; the binary links no k8s.io
// package (see api.go). Unset optional fields are pointers or omitted:
// the API server defaults what is absent, and a zero that was meant
// (backoffLimit 0, enableServiceLinks false) must be sent.

// typeMeta is an object's apiVersion and kind.
type typeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

func (t *typeMeta) types() *typeMeta { return t }

// ObjectMeta is an object's metadata.
type ObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	CreationTimestamp Time              `json:"creationTimestamp,omitzero"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	OwnerReferences   []OwnerReference  `json:"ownerReferences,omitempty"`
}

func (m *ObjectMeta) meta() *ObjectMeta { return m }

// OwnerReference makes an object a dependent of its owner: the garbage
// collector deletes it with the owner.
type OwnerReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

// apiObject is a pointer to one of the API types here.
type apiObject interface {
	meta() *ObjectMeta
	types() *typeMeta
}

// metaOf is the object metadata of p (a pointer to an API type).
func metaOf(p any) *ObjectMeta {
	o, ok := p.(apiObject)
	if !ok {
		panic(fmt.Sprintf("kube: %T has no object metadata", p))
	}
	return o.meta()
}

func key(m *ObjectMeta) string { return m.Namespace + "/" + m.Name }

// listMeta is a list's metadata: the resourceVersion to watch from.
type listMeta struct {
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Continue        string `json:"continue,omitempty"`
}

// Time is a timestamp of the API, to the second (RFC 3339); zero is
// null on the wire.
type Time struct{ time.Time }

// MicroTime is a timestamp of the API to the microsecond, as a Lease's
// renewTime is: the server parses exactly six digits of fraction.
type MicroTime struct{ time.Time }

const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

func (t Time) MarshalJSON() ([]byte, error) { return marshalTime(t.Time, time.RFC3339) }

func (t *Time) UnmarshalJSON(b []byte) error { return unmarshalTime(b, &t.Time) }

func (t MicroTime) MarshalJSON() ([]byte, error) { return marshalTime(t.Time, rfc3339Micro) }

func (t *MicroTime) UnmarshalJSON(b []byte) error { return unmarshalTime(b, &t.Time) }

func marshalTime(t time.Time, layout string) ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(layout))
}

// unmarshalTime reads a timestamp in local time, as the records that
// take it (runtime.json's finishedAt) are written.
func unmarshalTime(b []byte, t *time.Time) error {
	if string(b) == "null" {
		*t = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		*t = time.Time{}
		return nil
	}
	p, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	*t = p.Local()
	return nil
}

// deleteOptions is the body of a DELETE.
type deleteOptions struct {
	typeMeta
	GracePeriodSeconds *int64  `json:"gracePeriodSeconds,omitempty"`
	PropagationPolicy  *string `json:"propagationPolicy,omitempty"`
}

// propagateInBackground deletes an object's dependents after it.
const propagateInBackground = "Background"

// listOptions are a list's or watch's URL parameters (the ones this
// package sets).
type listOptions struct {
	LabelSelector       string
	FieldSelector       string
	ResourceVersion     string
	Continue            string
	Watch               bool
	AllowWatchBookmarks bool
	TimeoutSeconds      *int64
	Limit               int64
}

// mergePatch is the content type of a JSON merge patch (RFC 7386).
const mergePatch = "application/merge-patch+json"

// versionInfo is the API server's /version.
type versionInfo struct {
	GitVersion string `json:"gitVersion"`
}

// selectLabels is the label selector matching every label of set:
// "k1=v1,k2=v2", keys sorted. The values are label values already
// (LabelValue, Instance).
func selectLabels(set map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(set)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + set[k])
	}
	return b.String()
}

// checkQuantity reports whether s is a Kubernetes quantity: a decimal
// number with an optional sign, then a binary suffix (Ki … Ei), a
// decimal one (m, k, M … E) or an exponent (e3, E-2). As the API server
// reads it, the number may be empty ("Gi" is 0). This refuses at config
// time what the server would refuse at every launch.
func checkQuantity(s string) error {
	if s == "" {
		return errors.New("not a quantity: empty")
	}
	num, suffix := splitNumber(s)
	digits := strings.TrimLeft(num, "+-")
	if _, frac, _ := strings.Cut(digits, "."); len(num)-len(digits) > 1 || strings.Contains(frac, ".") {
		return fmt.Errorf("not a quantity: %q is not a number", num)
	}
	switch suffix {
	case "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "k", "M", "G", "T", "P", "E":
		return nil
	}
	if exp, ok := strings.CutPrefix(suffix, "e"); ok && signedDigits(exp) {
		return nil
	}
	if exp, ok := strings.CutPrefix(suffix, "E"); ok && signedDigits(exp) {
		return nil
	}
	return fmt.Errorf("not a quantity: unknown suffix %q (use m, k, M, G…, Ki, Mi, Gi… or an exponent)", suffix)
}

// splitNumber cuts s after its leading sign, digits and point.
func splitNumber(s string) (num, suffix string) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], s[i:]
}

// signedDigits: s is digits after an optional sign.
func signedDigits(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
