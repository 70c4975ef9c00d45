package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A kubeconfig's proxy-url carries every request, with the credentials
// and our user agent on it.
func TestRequestsGoThroughTheProxyURL(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String()+" "+r.Header.Get("Authorization")+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"gitVersion":"v1.34.4"}`))
	}))
	defer proxy.Close()
	c, err := NewClientFromConfig(&Config{Host: "http://api.cluster.invalid:8080", ProxyURL: proxy.URL, BearerToken: "t0ken"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.serverVersion(testCtx(t)); err != nil || v.GitVersion != "v1.34.4" {
		t.Fatalf("version through the proxy: %+v %v", v, err)
	}
	if len(seen) != 1 || seen[0] != "http://api.cluster.invalid:8080/version Bearer t0ken wave-orchestrator" {
		t.Errorf("the proxy saw %q", seen)
	}
	if _, err := NewClientFromConfig(&Config{Host: "https://x", ProxyURL: "::not a url", Source: "kubeconfig k"}, ""); err == nil {
		t.Error("a bad proxy-url is no error")
	}
}

// The limiter lets a burst through at once and makes the next request
// wait (here: until its context ends, at a rate far too low to refill).
func TestRateLimiterHoldsRequestsOverTheBurst(t *testing.T) {
	b := newTokenBucket(0.0001, 3)
	for i := range 3 {
		if err := b.wait(context.Background()); err != nil {
			t.Fatalf("request %d of the burst: %v", i, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("the request over the burst: %v, want it held until its context ended", err)
	}
}
