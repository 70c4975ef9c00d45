package kube

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// A watch stream's events decode in order: objects added, modified and
// deleted, bookmarks, and an ERROR event as the Status it carries (410:
// list again); the end of the stream is io.EOF, a cut one an error.
func TestWatchStreamDecodesEventsBookmarksAndGone(t *testing.T) {
	stream := `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"10"}}}
{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"11"},"status":{"phase":"Running"}}}` +
		`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"15"}}}
{"type":"DELETED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"16"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (16)","reason":"Expired","code":410}}
`
	w := newWatchStream[Pod](io.NopCloser(strings.NewReader(stream)))
	want := []struct{ typ, rv string }{{"ADDED", "10"}, {"MODIFIED", "11"}, {"BOOKMARK", "15"}, {"DELETED", "16"}}
	for _, x := range want {
		ev, err := w.next()
		if err != nil || ev.Type != x.typ || ev.Object.ResourceVersion != x.rv {
			t.Fatalf("event %+v %v, want %s at %s", ev, err, x.typ, x.rv)
		}
	}
	if _, err := w.next(); !isGone(err) || IsNotFound(err) {
		t.Errorf("ERROR event: %v, want 410 Expired", err)
	}
	if _, err := w.next(); !errors.Is(err, io.EOF) {
		t.Errorf("end: %v, want io.EOF", err)
	}
	cut := newWatchStream[Pod](io.NopCloser(strings.NewReader(`{"type":"ADDED","object":{"metadata":{"na`)))
	if _, err := cut.next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("cut stream: %v, want an error that is not io.EOF", err)
	}
	odd := newWatchStream[Pod](io.NopCloser(strings.NewReader(`{"type":"SOMETHING","object":{}}`)))
	if _, err := odd.next(); err == nil || !strings.Contains(err.Error(), "SOMETHING") {
		t.Errorf("unknown type: %v", err)
	}
}

// The API's refusals are *StatusError, which IsNotFound and its
// siblings read: the Status the server sent, else one made from the HTTP
// code, with a short text body in its message but never an HTML page,
// naming the request's resource and object.
func TestAPIErrorsDecodeAsStatusErrors(t *testing.T) {
	status := func(reason string, code int) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"` + string(reason) + `","code":` + strconv.Itoa(code) + `}`
	}
	req := apiRequest{method: "GET", resource: groupResource{Group: "batch", Resource: "jobs"}, name: "j"}
	for _, c := range []struct {
		name  string
		code  int
		ctype string
		body  string
		is    func(error) bool
		msg   string
	}{
		{"not found", 404, "application/json", status(ReasonNotFound, 404), IsNotFound, "m"},
		{"conflict", 409, "application/json", status(ReasonConflict, 409), IsConflict, "m"},
		{"already exists", 409, "application/json", status(ReasonAlreadyExists, 409), IsAlreadyExists, "m"},
		{"forbidden", 403, "application/json", status(ReasonForbidden, 403), IsForbidden, "m"},
		{"gone", 410, "application/json", status(ReasonExpired, 410), isGone, "m"},
		{"status without code", 404, "application/json", `{"kind":"Status","status":"Failure","reason":"NotFound"}`, IsNotFound, ""},
		{"text 401", 401, "text/plain", "Unauthorized\n", IsUnauthorized, "provide credentials: Unauthorized (get jobs.batch j)"},
		{"html 502 from a proxy", 502, "text/html", "<html>bad gateway</html>", func(err error) bool { return !IsNotFound(err) && IsInternalError(err) }, ""},
		{"429", 429, "text/plain", "slow down", IsTooManyRequests, "too many requests"},
		{"500 text", 500, "text/plain", "boom", IsInternalError, "boom"},
	} {
		err := decodeError(c.code, c.ctype, []byte(c.body), req, 0)
		var se *StatusError
		if !errors.As(err, &se) || !c.is(err) || int(se.Status.Code) != c.code {
			t.Errorf("%s: %v (%T, code %v)", c.name, err, err, se)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "<html>") {
			t.Errorf("%s: message %q, want %q and no HTML", c.name, err, c.msg)
		}
	}
}

// A name that is no path segment is refused before any request; one
// with control characters is sent escaped (and not found).
func TestObjectNamesAreOnePathSegment(t *testing.T) {
	c := testClient(t, &rest.Config{Host: "https://127.0.0.1:1"})
	for _, name := range []string{"..", "a/b", "a%2Fb"} {
		if _, err := c.pods("ns").get(testCtx(t), name); err == nil || !strings.Contains(err.Error(), "invalid pods name") {
			t.Errorf("%q: %v, want it refused as a name", name, err)
		}
	}
	u := c.api.url(c.pods("ns").request("GET", "p-\x1b[2J"))
	if got := u.String(); got != "https://127.0.0.1:1/api/v1/namespaces/ns/pods/p-%1B%5B2J" {
		t.Errorf("URL %s", got)
	}
}
