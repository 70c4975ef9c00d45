package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The list+watch cache holds what the API server has (of the selected
// objects only) and hears each change after holding it.
func TestWatchedCacheFollowsTheServer(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "cache")
	c := testClient(t, kc.AdminConfig())
	leases := kc.AdminClient().CoordinationV1().Leases(ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mk := func(name string, labels map[string]string) {
		if _, err := leases.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("before", map[string]string{"app": "x"})
	var mu sync.Mutex
	deleted := map[string]bool{}
	w := newWatched(c.leases(ns), "app=x", nil, func(l *coordv1.Lease, gone bool) {
		mu.Lock()
		defer mu.Unlock()
		deleted[l.Name] = gone
	}, nil)
	go w.run(ctx)
	if !w.waitSynced(ctx) {
		t.Fatal("never synced")
	}
	if _, ok := w.get(ns, "before"); !ok {
		t.Error("the listed lease is not in the cache")
	}
	mk("after", map[string]string{"app": "x"})
	mk("other", map[string]string{"app": "y"})
	eventually(t, "the new lease cached", func() bool { _, ok := w.get(ns, "after"); return ok })
	if err := leases.Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted lease gone", func() bool {
		mu.Lock()
		defer mu.Unlock()
		_, ok := w.get(ns, "before")
		return !ok && deleted["before"]
	})
	if _, ok := w.get(ns, "other"); ok {
		t.Error("the cache holds a lease its selector does not match")
	}
}

// When a watch says its version is gone (410), the cache lists again and
// replaces what it held: what the new list lacks is heard as deleted.
// (A stand-in server, without streaming lists: a real one says 410 only
// after etcd compacts.)
func TestWatchedCacheListsAgainWhenTheVersionIsGone(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	lists, watches := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		q := r.URL.Query()
		if q.Get("sendInitialEvents") == "true" {
			// A server without streaming lists: the cache lists instead.
			mu.Unlock()
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,"message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`)
			return
		}
		if q.Get("watch") == "true" {
			watches++
			n := watches
			mu.Unlock()
			if n == 1 && q.Get("resourceVersion") == "5" {
				_, _ = io.WriteString(w, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old resource version: 5 (40)"}}`+"\n")
				return
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		lists++
		name, rv := "a", "5"
		if lists > 1 {
			name, rv = "b", "41"
		}
		mu.Unlock()
		_, _ = io.WriteString(w, `{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":"`+rv+`"},"items":[{"metadata":{"name":"`+name+`","namespace":"ns"}}]}`)
	}))
	defer srv.Close()
	c := testClient(t, &rest.Config{Host: srv.URL})
	heard := make(chan string, 10)
	w := newWatched(c.leases("ns"), "", nil, func(l *coordv1.Lease, gone bool) {
		heard <- fmt.Sprintf("%s gone=%v", l.Name, gone)
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.run(ctx)
	var got []string
	for len(got) < 3 {
		select {
		case h := <-heard:
			got = append(got, h)
		case <-testCtx(t).Done():
			t.Fatalf("heard only %v", got)
		}
	}
	if want := "a gone=false,a gone=true,b gone=false"; strings.Join(got, ",") != want {
		t.Errorf("heard %v, want %s", got, want)
	}
	if _, ok := w.get("ns", "a"); ok {
		t.Error("the lease the second list lacks is still cached")
	}
	if _, ok := w.get("ns", "b"); !ok {
		t.Error("the second list's lease is not cached")
	}
}
