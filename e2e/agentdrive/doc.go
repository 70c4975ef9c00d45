// Package agentdrive tests the binary as an agent drives it: `wave-orchestrator
// mcp` spoken to by the MCP SDK's own client and by the real Claude Code CLI
// (CLAUDETEST_BIN, against the fake model API, which asks for the tools by
// name and records what Claude Code sends back), the write tools refused
// without --allow-write, a malformed line and a client leaving mid-wait
// survived, and `skill install` seen by Claude Code (its MCP server listed,
// its skill offered to the model).
package agentdrive
