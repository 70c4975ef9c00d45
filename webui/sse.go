package webui

import (
	"fmt"
	"net/http"
	"time"
)

// handleEvents is the Server-Sent Events stream: a "hello" first (the
// page loads everything then), every new line of the lane's logs as it is
// appended, "change" when other state moved, "resync" when this client
// fell behind.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	sub := s.hub.subscribe()
	if sub == nil {
		w.Header().Set("Retry-After", "10")
		httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("%d event streams are open already; close a page", s.lim.streams))
		return
	}
	defer s.hub.unsubscribe(sub)
	// A stream lasts as long as the page: the server's read and write
	// deadlines are for requests, not for it. (A recorder in tests has
	// no deadlines to lift.)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	seq := 0
	send := func(m message) bool {
		seq++
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", seq, m.event, m.data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if _, err := fmt.Fprint(w, "retry: 2000\n"); err != nil {
		return
	}
	if !send(message{event: "hello", data: []byte("{}")}) {
		return
	}
	// The heartbeat keeps idle streams open through proxies and lets a
	// closed client be noticed.
	tick := time.NewTicker(s.lim.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.hub.done:
			return
		case m := <-sub.ch:
			if sub.lagged.Swap(false) {
				m = message{event: evResync, data: []byte("{}")}
				drain(sub.ch)
			}
			if !send(m) {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func drain(ch chan message) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
