package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// costlyAgent is an agent CLI that reports $0.25 and 500 tokens (an
// opencode step event, which the runner meters), waits for a release
// file, then does the built-in local agent's work.
const costlyAgent = `#!/bin/sh
release=$1; shift
printf '%s\n' '{"type":"step_finish","part":{"id":"s1","type":"step-finish","cost":0.25,"tokens":{"input":400,"output":100,"reasoning":0,"cache":{"read":0,"write":0}}}}'
while [ ! -e "$release" ]; do sleep 0.05; done
exec "$@"
`

// prometheusBin is Debian's prometheus server, or a skip saying why
// (a failure under PROMTEST_REQUIRED=1, as in CI).
func prometheusBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("PROMTEST_REQUIRED") == "1" {
			t.Fatalf("PROMTEST_REQUIRED=1 but no prometheus on PATH: %v (apt-get install prometheus)", err)
		}
		t.Skipf("no prometheus on PATH (apt-get install prometheus; PROMTEST_REQUIRED=1 makes this fail): %v", err)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// promServer is a real Prometheus scraping target every 500 ms.
type promServer struct {
	url string
	log *e2etest.LockedBuffer
}

func startPrometheus(t *testing.T, target string) *promServer {
	t.Helper()
	bin := prometheusBin(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  - job_name: wave\n    static_configs:\n      - targets: ['%s']\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &promServer{url: "http://" + addr, log: e2etest.NewLockedBuffer()}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	e2etest.WaitFor(t, "prometheus ready", 60*time.Second, func() bool {
		resp, err := http.Get(p.url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// query answers a PromQL instant query through the HTTP API with the
// value of its one series, or false when it has none.
func (p *promServer) query(t *testing.T, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, body.Status, body.Error)
	}
	if len(body.Data.Result) != 1 {
		return 0, false
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

func (p *promServer) waitValue(t *testing.T, q string, want float64, timeout time.Duration) {
	t.Helper()
	last := "no series"
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if v, ok := p.query(t, q); ok {
			if v == want {
				return
			}
			last = strconv.FormatFloat(v, 'g', -1, 64)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("prometheus: %s is %s after %s, want %v\nprometheus log:\n%s", q, last, timeout, want, tail(p.log.String(), 2000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// A real Prometheus scrapes serve's /metrics while a wave runs, sees its
// agent running, and once the wave ends answers PromQL for the lane's
// runs and what they cost.
func TestPrometheusScrapesTheLanesRunsAndCostDuringAWave(t *testing.T) {
	t.Parallel()
	prometheusBin(t)
	r := e2etest.NewRepo(t)
	script := filepath.Join(t.TempDir(), "costly.sh")
	if err := os.WriteFile(script, []byte(costlyAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(t.TempDir(), "release")
	a1 := e2etest.ImplAgent("A1", "id: shell", fmt.Sprintf("shell.command: %s %s %s local --prompt-file {prompt_file}", script, release, e2etest.Bin()))
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	serve := r.Serve(t)
	prom := startPrometheus(t, strings.TrimSuffix(strings.TrimPrefix(serve, "http://"), "/"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	launch := r.Start(ctx, "launch", "--lane", "main", "--no-dashboard")
	prom.waitValue(t, `wave_agents{lane="main",wave="0",state="running"}`, 1, 60*time.Second)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := launch.Wait(t, "launch", 90*time.Second); res.Code != 0 {
		t.Fatalf("launch: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	agents := float64(1 + len(e2etest.ClosureAgents()))
	prom.waitValue(t, `sum(wave_agent_runs{lane="main",mode="wave",outcome="completed"})`, agents, 30*time.Second)
	prom.waitValue(t, `sum(wave_agent_cost_usd{lane="main"})`, 0.25, 30*time.Second)
	prom.waitValue(t, `wave_agent_tokens{lane="main",mode="wave",kind="input"}`, 400, 30*time.Second)
	prom.waitValue(t, `wave_waves{lane="main",status="completed"}`, 1, 30*time.Second)
}
