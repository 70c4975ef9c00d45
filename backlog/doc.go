// Package backlog owns the backlog domain: the Issue and Comment types
// every source reports, an issue's conflict surface (its Files:/Surface:
// globs and area: labels) and the glob intersection that decides whether
// two surfaces collide, the planner that turns a backlog slice into
// dispatch groups — with the needs-input bucket and a reason for every
// issue it does not plan — the rank order, and the grammar of the
// [backlog-result] marker a worker prints last. The backlog state reducer
// (events → status and tally) belongs here too.
//
// It is pure: no I/O, no clock, no randomness. Every result depends only
// on the arguments, so the supervisor can re-plan at any moment and get
// the same answer from the same inputs.
//
// # Globs
//
// A surface glob is a slash-separated, repository-relative path pattern:
//
//   - '*' matches any run of characters within one segment (never '/');
//   - '?' matches one character other than '/';
//   - '[abc]', '[a-z]', '[!a-z]' (or '[^a-z]') match one character of a
//     class, ranges and negation included; a ']' right after '[' or '[!'
//     is a member, '-' first or last is a member;
//   - a segment that is exactly '**' matches zero or more whole segments;
//     '**' inside a segment ("a**b") is the same as '*';
//   - there is no backslash escape ('\' is an ordinary character); write
//     '[*]' for a literal '*';
//   - a pattern ending in '/' names a directory: "internal/" means
//     "internal/**" (which matches "internal" itself too);
//   - a pattern without metacharacters is a path. When its last segment
//     has an extension ("cmd/main.go") it is that file only; otherwise
//     ("internal/gate", "Makefile", ".github") it may be a directory, so
//     it covers everything under it, like "internal/gate/". Guessing
//     "directory" for an ambiguous name can only serialise two issues
//     that could have run side by side, never the reverse;
//   - empty and "." segments are ignored ("a//./b" is "a/b").
//
// Paths are non-empty sequences of non-empty segments. Two globs
// intersect when some such path matches both; Collide decides this for
// each pair of globs exactly, by a product of the two patterns' automata,
// and never by comparing the strings.
package backlog
