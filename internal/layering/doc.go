// Package layering holds the test that keeps the package graph pointing
// down: a package nested in another's directory depends on nothing that
// depends on that parent again; views import no loop; test harnesses
// (packages named …test) are imported only by tests and other harnesses;
// the decision packages (wave, roles, gate, retry) reach no outside system;
// the queue of submitted runs imports no loop or backend; only package
// runtime signals processes; the MCP server reaches the lane only
// through the CLI's commands; and a backlog worker's checkout
// (supervisor/checkout) reaches its files through git only and is
// driven by the supervisor alone.
package layering
