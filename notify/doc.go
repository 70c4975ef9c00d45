// Package notify owns telling people: the sinks they are told through
// (a command reading the event's JSON on stdin, a webhook taking a JSON
// POST with a top-level text, the desktop's notify-send), the mapping of
// the lane's and the backlog runs' event logs to the events people care
// about, and delivery exactly once per event and sink.
//
// A Follower lives inside the process that owns the log (the launcher for
// the lane's events.jsonl, the supervisor for its backlog run's log) and
// reads the log as it is appended. Before it tells a sink about an event it
// records the intent in that same log, and after it the outcome, so a
// follower started after a kill -9 delivers what was intended and never
// confirmed (with the same notice id, for a receiver to drop a repeat) and
// never what was confirmed. Delivery runs beside the loop, never in it:
// each try has a 5 s deadline, a failing sink is retried 3 times with
// backoff, and a final failure is recorded for doctor and status to show.
package notify
