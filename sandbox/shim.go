package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ShimCommand is the hidden subcommand of our binary a sandbox runs
// first (dispatched by Main before any command tree is built).
const ShimCommand = "sandbox-shim"

// Main runs the sandbox subcommand args names, if it is one.
func Main(args []string) (code int, ok bool) {
	if len(args) > 0 && args[0] == ShimCommand {
		return Shim(args[1:]), true
	}
	return 0, false
}

// StopSignals are what a stop, a closed terminal or a typed ^C or ^\
// sends a run's process group. A sandbox's bwrap must be started with
// them ignored (an ignored signal stays ignored across exec): then a
// stop sent to the group reaches the agent inside, which has its grace
// to end, and not bwrap, whose death would kill everything inside at
// once. The shim gives the agent their defaults back.
var StopSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

// shimArgs is the shim's command line: `--socket PATH` (the proxy),
// `--forward ADDR` (repeated) and, after `--`, the agent.
type shimArgs struct {
	socket  string
	forward []string
	argv    []string
}

func parseShim(args []string) (shimArgs, error) {
	var s shimArgs
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			s.argv = args[i+1:]
			if len(s.argv) == 0 {
				return s, errors.New("no command after --")
			}
			return s, nil
		case (a == "--socket" || a == "--forward") && i+1 < len(args):
			i++
			if a == "--socket" {
				s.socket = args[i]
			} else {
				s.forward = append(s.forward, args[i])
			}
		default:
			return s, fmt.Errorf("unknown argument %q", a)
		}
	}
	return s, errors.New("no command (want -- argv...)")
}

func shimCommand(self, socket string, forward, argv []string) []string {
	c := []string{self, ShimCommand}
	if socket != "" {
		c = append(c, "--socket", socket)
		for _, f := range forward {
			c = append(c, "--forward", f)
		}
	}
	return append(append(c, "--"), argv...)
}

// Shim is the first process inside a sandbox. With a proxy socket it
// listens in the sandbox's network namespace — a proxy port whose
// connections it relays to the socket as they are, and each allowed
// loopback endpoint's own port, tunnelled there — and gives the agent the
// proxy port as HTTP(S)_PROXY. It then runs the agent in its own process
// group (the run's: a stop reaches the agent directly) and exits with its
// code, 128+n for a death by signal n.
func Shim(args []string) int {
	sa, err := parseShim(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-shim:", err)
		return 2
	}
	// What bwrap was handed (copies of home files) is not the agent's.
	unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	env := agentTerm(os.Environ())
	if sa.socket != "" {
		port, err := listenShim(sa.socket, sa.forward)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox-shim:", err)
			return 126
		}
		env = proxyEnv(env, "http://127.0.0.1:"+strconv.Itoa(port))
	}
	// Handled here, so the agent starts with every signal at its default
	// (bwrap was started with them ignored); the shim itself outlives a
	// stop, relaying until the agent ends.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, StopSignals...)
	go func() {
		for range sigs {
		}
	}()
	cmd := exec.Command(sa.argv[0], sa.argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: cannot start %s: %v\n", sa.argv[0], err)
		return 127
	}
	cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// listenShim starts the forwarders and the proxy port; it returns the
// proxy port.
func listenShim(socket string, forward []string) (int, error) {
	for _, addr := range forward {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return 0, fmt.Errorf("forward %s: %w", addr, err)
		}
		go serve(ln, func(c net.Conn) {
			up, err := connectVia(socket, addr)
			if err != nil {
				c.Close()
				return
			}
			splice(c, up)
		})
		if host, port, _ := net.SplitHostPort(addr); host == "127.0.0.1" {
			// localhost may resolve to ::1 first; best effort.
			if ln6, err := net.Listen("tcp", net.JoinHostPort("::1", port)); err == nil {
				go serve(ln6, func(c net.Conn) {
					up, err := connectVia(socket, addr)
					if err != nil {
						c.Close()
						return
					}
					splice(c, up)
				})
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("proxy port: %w", err)
	}
	go serve(ln, func(c net.Conn) {
		up, err := net.Dial("unix", socket)
		if err != nil {
			c.Close()
			return
		}
		splice(c, up)
	})
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func serve(ln net.Listener, handle func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go handle(c)
	}
}

// proxyEnv points every proxy variable clients read at proxy and drops
// the bypass lists: with no route out, a bypassed host fails anyway, and
// through the proxy a refusal is recorded.
func proxyEnv(env []string, proxy string) []string {
	names := []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"}
	out := make([]string, 0, len(env)+2*len(names))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if u := strings.ToUpper(k); u == "NO_PROXY" || slices.Contains(names, u) {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range names {
		out = append(out, k+"="+proxy, strings.ToLower(k)+"="+proxy)
	}
	return out
}
