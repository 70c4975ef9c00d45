package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// StatusError is the API server's refusal of a request: the Status it
// answered with, or one made from the HTTP answer when it sent none.
// Find it with errors.As; IsNotFound and its siblings read it.
type StatusError struct {
	Status Status
}

func (e *StatusError) Error() string { return e.Status.Message }

// Status is the API's account of a request that failed.
type Status struct {
	typeMeta
	Status  string         `json:"status,omitempty"`
	Message string         `json:"message,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Details *StatusDetails `json:"details,omitempty"`
	Code    int32          `json:"code,omitempty"`
}

// StatusDetails names the object a Status is about.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one reason a request failed (a field that is invalid).
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// The Status values of the API.
const (
	statusSuccess = "Success"
	statusFailure = "Failure"
)

// The reasons of the API's Status this package tells apart, and the
// ones it makes from an HTTP code (reasonFor).
const (
	ReasonUnauthorized     = "Unauthorized"
	ReasonForbidden        = "Forbidden"
	ReasonNotFound         = "NotFound"
	ReasonAlreadyExists    = "AlreadyExists"
	ReasonConflict         = "Conflict"
	ReasonGone             = "Gone"
	ReasonExpired          = "Expired"
	ReasonInvalid          = "Invalid"
	ReasonBadRequest       = "BadRequest"
	ReasonTooManyRequests  = "TooManyRequests"
	ReasonInternalError    = "InternalError"
	ReasonServiceUnavail   = "ServiceUnavailable"
	ReasonTimeout          = "Timeout"
	ReasonServerTimeout    = "ServerTimeout"
	ReasonMethodNotAllowed = "MethodNotAllowed"
	ReasonUnknown          = "Unknown"
)

// knownReason reports whether reason is one the API documents: a Status
// with one is read by its reason alone; any other (or none) by its code.
func knownReason(reason string) bool {
	switch reason {
	case ReasonUnauthorized, ReasonForbidden, ReasonNotFound, ReasonAlreadyExists, ReasonConflict,
		ReasonGone, ReasonExpired, ReasonInvalid, ReasonBadRequest, ReasonTooManyRequests,
		ReasonInternalError, ReasonServiceUnavail, ReasonTimeout, ReasonServerTimeout,
		ReasonMethodNotAllowed, "NotAcceptable", "UnsupportedMediaType", "RequestEntityTooLarge", "StoreReadError":
		return true
	}
	return false
}

// serverStatus is the API server's Status in err, if any.
func serverStatus(err error) *Status {
	var se *StatusError
	if errors.As(err, &se) {
		return &se.Status
	}
	return nil
}

// is reports whether err is the API's refusal for reason, or, when it
// gives no reason the API knows, one with the HTTP code.
func is(err error, reason string, code int) bool {
	st := serverStatus(err)
	if st == nil {
		return false
	}
	if knownReason(st.Reason) {
		return st.Reason == reason
	}
	return int(st.Code) == code
}

// IsNotFound: the object (or resource) does not exist.
func IsNotFound(err error) bool { return is(err, ReasonNotFound, http.StatusNotFound) }

// IsAlreadyExists: a create found the object there.
func IsAlreadyExists(err error) bool { return is(err, ReasonAlreadyExists, http.StatusConflict) }

// IsConflict: an update lost to another (its resourceVersion is old).
func IsConflict(err error) bool { return is(err, ReasonConflict, http.StatusConflict) }

// IsForbidden: this user may not do it.
func IsForbidden(err error) bool { return is(err, ReasonForbidden, http.StatusForbidden) }

// IsUnauthorized: the server did not accept the credentials.
func IsUnauthorized(err error) bool { return is(err, ReasonUnauthorized, http.StatusUnauthorized) }

// IsTooManyRequests: the server asks the client to come back later.
func IsTooManyRequests(err error) bool {
	return is(err, ReasonTooManyRequests, http.StatusTooManyRequests)
}

// IsInternalError: the server failed.
func IsInternalError(err error) bool {
	return is(err, ReasonInternalError, http.StatusInternalServerError)
}

// isGone: the resourceVersion a watch or list asked for is compacted
// away (410, Gone or Expired): list again.
func isGone(err error) bool {
	return is(err, ReasonGone, http.StatusGone) || is(err, ReasonExpired, http.StatusGone)
}

// decodeError is the API's refusal as a *StatusError: the Status it
// sent, else one made from the HTTP code (with a short text body in
// its message, never an HTML page), naming what the request was about.
func decodeError(code int, contentType string, body []byte, r apiRequest, retryAfter int) error {
	var st Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Status != statusSuccess {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		return &StatusError{Status: st}
	}
	text := ""
	if strings.HasPrefix(contentType, "text/plain") || strings.HasPrefix(contentType, "application/json") {
		text = strings.TrimSpace(string(body))
		if len(text) > 512 {
			text = text[:512] + "…"
		}
	}
	reason, msg := reasonFor(code, r.method)
	if text != "" {
		msg += ": " + text
	}
	if what := r.resource.String(); what != "" {
		about := strings.ToLower(r.method) + " " + what
		if r.name != "" {
			about += " " + r.name
		}
		msg += " (" + about + ")"
	}
	return &StatusError{Status: Status{Status: statusFailure, Code: int32(code), Reason: reason, Message: msg,
		Details: &StatusDetails{Group: r.resource.Group, Kind: r.resource.Resource, Name: r.name, RetryAfterSeconds: int32(retryAfter),
			Causes: []StatusCause{{Type: "UnexpectedServerResponse", Message: text}}}}}
}

// reasonFor is the reason and message of an HTTP code the server sent
// without a Status.
func reasonFor(code int, method string) (string, string) {
	switch code {
	case http.StatusBadRequest:
		return ReasonBadRequest, "the server refused the request as malformed"
	case http.StatusUnauthorized:
		return ReasonUnauthorized, "the server wants the client to provide credentials"
	case http.StatusForbidden:
		return ReasonForbidden, "the server forbids the request"
	case http.StatusNotFound:
		return ReasonNotFound, "the server has no such resource"
	case http.StatusMethodNotAllowed:
		return ReasonMethodNotAllowed, "the server allows no such request on the resource"
	case http.StatusConflict:
		if method == "POST" {
			return ReasonAlreadyExists, "the server says the object exists already"
		}
		return ReasonConflict, "the server reports a conflict"
	case http.StatusUnprocessableEntity:
		return ReasonInvalid, "the server finds the request invalid"
	case http.StatusTooManyRequests:
		return ReasonTooManyRequests, "the server has had too many requests: try again later"
	case http.StatusServiceUnavailable:
		return ReasonServiceUnavail, "the server cannot handle the request now"
	case http.StatusGatewayTimeout:
		return ReasonTimeout, "the server did not answer in time (the request may still be carried out)"
	}
	if code >= 500 {
		return ReasonInternalError, fmt.Sprintf("the server failed with status %d", code)
	}
	return ReasonUnknown, fmt.Sprintf("the server answered with status %d and said no more", code)
}

// groupResource names a resource for messages: "jobs.batch", "pods".
type groupResource struct{ Group, Resource string }

func (g groupResource) String() string {
	if g.Group == "" {
		return g.Resource
	}
	return g.Resource + "." + g.Group
}
