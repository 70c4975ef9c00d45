package webui

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func TestMetricsAreThePrometheusTextOfTheLane(t *testing.T) {
	f := newFixture(t)
	w := get(t, New(f.options()).Handler(), "/metrics")
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %d %q\n%s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	for _, want := range []string{
		"# TYPE wave_agents gauge\n",
		`wave_agents{lane="main",state="completed",wave="1"} 1` + "\n",
		`wave_waves{lane="main",status="completed"} 1` + "\n",
		`wave_questions_pending{lane="main",mode="wave"} 0` + "\n",
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, w.Body)
		}
	}
}

func TestMetricsNeedTheTokenAsTheAPIDoes(t *testing.T) {
	f := newFixture(t)
	o := f.options()
	o.Token = "s3cret-token"
	h := New(o).Handler()
	if w := get(t, h, "/metrics"); w.Code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", w.Code)
	}
	if w := get(t, h, "/metrics", "Authorization", "Bearer s3cret-token"); w.Code != http.StatusOK {
		t.Errorf("GET /metrics with the token: %d, want 200", w.Code)
	}
}

// A lane whose state cannot be read fails the scrape (Prometheus marks
// the target down) rather than answering figures of nothing.
func TestAScrapeOfAnUnreadableLaneFailsSayingWhy(t *testing.T) {
	f := newFixture(t)
	o := f.options()
	o.State = func(context.Context) (state.Lane, error) { return state.Lane{}, errors.New("state.json: torn record") }
	w := get(t, New(o).Handler(), "/metrics")
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "state.json: torn record") {
		t.Errorf("GET /metrics of an unreadable lane: %d\n%s\nwant 500 naming the reason", w.Code, w.Body)
	}
}
