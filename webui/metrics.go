package webui

import (
	"net/http"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/promtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanemetrics"
)

// ledgerEvery bounds how often a scrape asks git for the base branch's
// reverts (the outcome ledger); the other figures are read every scrape.
const ledgerEvery = 30 * time.Second

// metricsHandler is GET /metrics: the lane's figures in the Prometheus
// text format, behind the same guard as the API (a Bearer token off
// loopback). Read-only.
func (s *Server) metricsHandler() http.HandlerFunc {
	src := &lanemetrics.Source{Layout: s.opt.Layout, LedgerEvery: ledgerEvery, Now: s.opt.Now}
	return func(w http.ResponseWriter, r *http.Request) {
		l, err := s.opt.State(r.Context())
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		w.Header().Set("Content-Type", promtext.ContentType)
		if err := promtext.Write(w, lanemetrics.Families(src.Gather(r.Context(), l))); err != nil {
			s.opt.Logger.Warn("serve: write metrics", "err", err)
		}
	}
}
