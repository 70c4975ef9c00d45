package webui

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wave-orchestrator/wave-orchestrator/lanemetrics"
)

// ledgerEvery bounds how often a scrape asks git for the base branch's
// reverts (the outcome ledger); the other figures are read every scrape.
const ledgerEvery = 30 * time.Second

// metricsHandler is GET /metrics: the lane's figures in the Prometheus
// exposition format the scraper asks for, from a registry of this
// server's own (nothing of the process's, no other collector), behind
// the same guard as the API (a Bearer token off loopback). Read-only.
// A lane that cannot be read answers 500, saying why.
func (s *Server) metricsHandler() http.Handler {
	src := &lanemetrics.Source{Layout: s.opt.Layout, LedgerEvery: ledgerEvery, Now: s.opt.Now}
	reg := prometheus.NewRegistry()
	reg.MustRegister(lanemetrics.NewCollector(src, s.opt.State))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      errorLog{s.opt.Logger},
		ErrorHandling: promhttp.HTTPErrorOnError,
	})
}

// errorLog is promhttp's Logger on the server's log.
type errorLog struct{ l *slog.Logger }

func (e errorLog) Println(v ...any) { e.l.Warn("serve: metrics", "err", fmt.Sprint(v...)) }
