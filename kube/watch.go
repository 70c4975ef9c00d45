package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// The event types of a watch stream.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
	eventBookmark = "BOOKMARK"
	eventError    = "ERROR"
)

// watchEvent is one event of a watch: an object of T that was added,
// modified or deleted, a bookmark (an object holding only the
// resourceVersion reached), or an error Status.
type watchEvent[T any] struct {
	Type   string
	Object *T
}

// watchStream decodes a watch's answer: JSON objects
// {"type":…,"object":…}, one after another.
type watchStream[T any] struct {
	body io.ReadCloser
	dec  *json.Decoder
}

func newWatchStream[T any](body io.ReadCloser) *watchStream[T] {
	return &watchStream[T]{body: body, dec: json.NewDecoder(body)}
}

// next is the next event; io.EOF when the server ended the watch; a
// *StatusError for an ERROR event (410 Gone: the
// resourceVersion is too old, list again).
func (w *watchStream[T]) next() (watchEvent[T], error) {
	var raw struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := w.dec.Decode(&raw); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return watchEvent[T]{}, fmt.Errorf("watch stream cut: %w", err)
		}
		return watchEvent[T]{}, err
	}
	switch raw.Type {
	case eventAdded, eventModified, eventDeleted, eventBookmark:
		o := new(T)
		if err := json.Unmarshal(raw.Object, o); err != nil {
			return watchEvent[T]{}, fmt.Errorf("watch event %s: %w", raw.Type, err)
		}
		return watchEvent[T]{Type: raw.Type, Object: o}, nil
	case eventError:
		var st Status
		if err := json.Unmarshal(raw.Object, &st); err != nil {
			return watchEvent[T]{}, fmt.Errorf("watch error event: %w", err)
		}
		if st.Code == 0 {
			st.Code = http.StatusInternalServerError
		}
		return watchEvent[T]{}, &StatusError{Status: st}
	}
	return watchEvent[T]{}, fmt.Errorf("watch event of unknown type %q", raw.Type)
}

func (w *watchStream[T]) close() error { return w.body.Close() }

// watch starts watching r's objects from opts.ResourceVersion.
func (r listable[T]) watch(ctx context.Context, opts listOptions) (*watchStream[T], error) {
	opts.Watch = true
	q := r.request("GET", "")
	q.query = listQuery(opts)
	resp, err := r.rc.send(ctx, q)
	if err != nil {
		return nil, err
	}
	return newWatchStream[T](resp.Body), nil
}
