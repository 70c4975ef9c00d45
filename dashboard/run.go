package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// debounce coalesces bursts of file events (a run writing its log) into
// one reload.
const debounce = 150 * time.Millisecond

// fps caps redraws. bubbletea's default 60 wakes the process 60 times a
// second even when nothing changes, most of an idle dashboard's CPU;
// 15 still answers a key within ~70 ms.
const fps = 15

// Run shows the interactive dashboard on in/out until the user quits or
// ctx is done (the command cancels ctx on SIGTERM/SIGHUP, so a dashboard
// in a tmux pane exits cleanly when its session is killed or respawned).
// It keeps running after the lane's launcher exits: the final frame and
// the result line stay until the user quits.
func Run(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	l, err := cfg.Load(ctx)
	if err != nil {
		return err
	}
	m := NewModel(cfg, l)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithAltScreen(), tea.WithFPS(fps), tea.WithInput(in), tea.WithOutput(out))
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	werr := make(chan error, 1)
	go func() {
		werr <- Watch(wctx, cfg.StateDir, debounce, func() {
			l, err := cfg.Load(wctx)
			p.Send(StateMsg{Lane: l, Err: err})
		})
	}()
	final, err := p.Run()
	stop()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // stopped by a signal: a clean exit
	}
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	if e := <-werr; e != nil {
		return e
	}
	if fm, ok := final.(Model); ok && fm.UserQuit() && cfg.EndSession != nil {
		cfg.EndSession(context.WithoutCancel(ctx))
	}
	return nil
}

// RunPlain is --watch without a terminal (a pipe, a CI log): it prints a
// frame at start and after every change of the lane state, until ctx is
// done.
func RunPlain(ctx context.Context, cfg Config, width int, out io.Writer) error {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return plainFrames(ctx, cfg.StateDir, out, func() (string, error) {
		l, err := cfg.Load(ctx)
		if err != nil {
			return "", err
		}
		o := Options{Width: width, Color: cfg.Color, Now: cfg.Now(), Wave: cfg.Wave, Selected: -1}
		return Render(l, o), nil
	})
}

// RunPlainBacklog is RunPlain for the backlog view: a BacklogFrame at
// start and after every change under the lane state dir.
func RunPlainBacklog(ctx context.Context, cfg Config, load BacklogLoader, width int, out io.Writer) error {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return plainFrames(ctx, cfg.StateDir, out, func() (string, error) {
		st, ok, err := load(ctx)
		if err != nil {
			return "", err
		}
		return BacklogFrame(st, ok, width, cfg.Color, cfg.Now()), nil
	})
}

// plainFrames prints frame() now and after every change under stateDir.
func plainFrames(ctx context.Context, stateDir string, out io.Writer, frame func() (string, error)) error {
	emit := func() error {
		s, err := frame()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, s)
		return err
	}
	if err := emit(); err != nil {
		return err
	}
	var ferr error
	err := Watch(ctx, stateDir, debounce, func() {
		if e := emit(); e != nil && ferr == nil {
			ferr = e
		}
	})
	return errors.Join(err, ferr)
}

// Frame is the one-frame mode (`dashboard` without --watch): the latest
// (or cfg.Wave) wave of l, with log last lines, nothing selected.
func Frame(l state.Lane, wave, width int, color bool, now time.Time) string {
	return Render(l, Options{Width: width, Color: color, Now: now, Wave: wave, Selected: -1})
}

// ColorFor reports whether output to f gets colour: a terminal, NO_COLOR
// unset, TERM not dumb.
func ColorFor(f *os.File) bool {
	return IsTerminal(f) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Width is f's terminal width, or def when f is not a terminal.
func Width(f *os.File, def int) int {
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	return def
}

// InsideLaneTmux reports whether tmuxEnv (the value of $TMUX:
// "<socket path>,<pid>,<session>") names a client of the lane's server,
// where switch-client works; inside any other tmux server the lane's
// session must be attached instead.
func InsideLaneTmux(tmuxEnv, socket string) bool {
	if tmuxEnv == "" {
		return false
	}
	path, _, _ := strings.Cut(tmuxEnv, ",")
	return filepath.Base(path) == socket
}

// AttachCommand wraps an attach argv (tmuxadapter's AttachArgv) for an
// interactive run. Outside the lane's server $TMUX and $TMUX_PANE are
// dropped: tmux refuses to attach from inside another server while they
// are set. switch-client keeps them, as tmux finds the current client
// through them.
func AttachCommand(argv []string, insideLane bool) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	if !insideLane {
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
	}
	return cmd
}
