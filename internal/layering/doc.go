// Package layering holds the test that keeps the package graph pointing
// down: a package nested in another's directory depends on nothing that
// depends on that parent again; views import no loop; test harnesses
// (packages named …test) are imported only by tests and other harnesses;
// the queue of submitted runs imports no loop or backend; and only
// package runtime signals processes.
package layering
