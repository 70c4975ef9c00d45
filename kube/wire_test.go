package kube

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// serve answers every request with code, content type and body.
func serve(t *testing.T, code int, ctype, body string) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return testClient(t, &rest.Config{Host: srv.URL})
}

// A watch stream's events decode in order: objects added, modified and
// deleted, bookmarks, and an ERROR event as the Status it carries (410:
// list again); the end of the stream ends the watch, as does a stream
// cut mid-event (the cache then watches again from the last version),
// and an event of an unknown type is an error naming it.
func TestWatchStreamDecodesEventsBookmarksAndGone(t *testing.T) {
	t.Parallel()
	const pod = `"kind":"Pod","apiVersion":"v1",`
	stream := `{"type":"ADDED","object":{` + pod + `"metadata":{"name":"a","namespace":"ns","resourceVersion":"10"}}}
{"type":"MODIFIED","object":{` + pod + `"metadata":{"name":"a","namespace":"ns","resourceVersion":"11"},"status":{"phase":"Running"}}}` +
		`{"type":"BOOKMARK","object":{` + pod + `"metadata":{"resourceVersion":"15"}}}
{"type":"DELETED","object":{` + pod + `"metadata":{"name":"a","namespace":"ns","resourceVersion":"16"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (16)","reason":"Expired","code":410}}
`
	w := watchOf(t, stream)
	want := []struct {
		typ watch.EventType
		rv  string
	}{{watch.Added, "10"}, {watch.Modified, "11"}, {watch.Bookmark, "15"}, {watch.Deleted, "16"}}
	for _, x := range want {
		ev := <-w.ResultChan()
		p, ok := ev.Object.(*corev1.Pod)
		if ev.Type != x.typ || !ok || p.ResourceVersion != x.rv {
			t.Fatalf("event %+v, want %s at %s", ev, x.typ, x.rv)
		}
	}
	ev := <-w.ResultChan()
	if err := apierrors.FromObject(ev.Object); ev.Type != watch.Error || !apierrors.IsResourceExpired(err) || apierrors.IsNotFound(err) {
		t.Errorf("ERROR event: %+v, want 410 Expired", ev)
	}
	if ev, open := <-w.ResultChan(); open {
		t.Errorf("end: %+v, want the watch over", ev)
	}
	cut := watchOf(t, `{"type":"ADDED","object":{`+pod+`"metadata":{"na`)
	if ev, open := <-cut.ResultChan(); open {
		t.Errorf("cut stream: %+v, want the watch over", ev)
	}
	odd := watchOf(t, `{"type":"SOMETHING","object":{`+pod+`"metadata":{"name":"a"}}}`)
	if ev := <-odd.ResultChan(); ev.Type != watch.Error || !strings.Contains(apierrors.FromObject(ev.Object).Error(), "SOMETHING") {
		t.Errorf("unknown type: %+v", ev)
	}
}

func watchOf(t *testing.T, stream string) watch.Interface {
	t.Helper()
	c := serve(t, http.StatusOK, "application/json", stream)
	w, err := c.pods("ns").Watch(testCtx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// The API's refusals are *StatusError, which IsNotFound and its
// siblings read: the Status the server sent, else one made from the HTTP
// code, with a short text body in its message but never an HTML page,
// naming the request's resource and object.
func TestAPIErrorsDecodeAsStatusErrors(t *testing.T) {
	t.Parallel()
	status := func(reason metav1.StatusReason, code int) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"` + string(reason) + `","code":` + strconv.Itoa(code) + `}`
	}
	gone := func(err error) bool { return apierrors.IsGone(err) || apierrors.IsResourceExpired(err) }
	for _, c := range []struct {
		name  string
		code  int
		ctype string
		body  string
		is    func(error) bool
		msg   string
	}{
		{"not found", 404, "application/json", status(metav1.StatusReasonNotFound, 404), apierrors.IsNotFound, "m"},
		{"conflict", 409, "application/json", status(metav1.StatusReasonConflict, 409), apierrors.IsConflict, "m"},
		{"already exists", 409, "application/json", status(metav1.StatusReasonAlreadyExists, 409), apierrors.IsAlreadyExists, "m"},
		{"forbidden", 403, "application/json", status(metav1.StatusReasonForbidden, 403), apierrors.IsForbidden, "m"},
		{"gone", 410, "application/json", status(metav1.StatusReasonExpired, 410), gone, "m"},
		{"status without code", 404, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound"}`, apierrors.IsNotFound, ""},
		{"text 401", 401, "text/plain", "Unauthorized\n", apierrors.IsUnauthorized, "provide credentials (get jobs.batch j)"},
		{"html 502 from a proxy", 502, "text/html", "<html>bad gateway</html>", func(err error) bool { return !apierrors.IsNotFound(err) && apierrors.IsInternalError(err) }, ""},
		{"429", 429, "text/plain", "slow down", apierrors.IsTooManyRequests, "too many requests"},
		{"500 text", 500, "text/plain", "boom", apierrors.IsInternalError, "boom"},
	} {
		_, err := serve(t, c.code, c.ctype, c.body).jobs("ns").Get(testCtx(t), "j", metav1.GetOptions{})
		var se *apierrors.StatusError
		// A Status without a code keeps none; the rest carry the HTTP one.
		if !errors.As(err, &se) || !c.is(err) || (int(se.ErrStatus.Code) != c.code && c.name != "status without code") {
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
	t.Parallel()
	c := testClient(t, &rest.Config{Host: "https://127.0.0.1:1"})
	for _, name := range []string{"..", "a/b", "a%2Fb"} {
		if _, err := c.pods("ns").Get(testCtx(t), name, metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "invalid resource name") {
			t.Errorf("%q: %v, want it refused as a name", name, err)
		}
	}
	u := c.api.core.Get().Namespace("ns").Resource("pods").Name("p-\x1b[2J").URL()
	if got := u.String(); got != "https://127.0.0.1:1/api/v1/namespaces/ns/pods/p-%1B%5B2J" {
		t.Errorf("URL %s", got)
	}
}
