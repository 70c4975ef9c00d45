package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// Sink tells people about one notice. Send returns when the notice is
// delivered or the try failed; its error never carries a secret.
type Sink interface {
	Name() string
	Wants(event string) bool
	Send(ctx context.Context, n Notice) error
}

// Env looks a variable up (os.LookupEnv in production).
type Env func(string) (string, bool)

// Sinks builds the sinks of a config's notify list. dir is where commands
// run (the repository root).
func Sinks(cfg []config.NotifySink, dir string, env Env) []Sink {
	if env == nil {
		env = os.LookupEnv
	}
	var out []Sink
	for _, c := range cfg {
		switch c.Kind {
		case config.SinkCommand:
			out = append(out, &commandSink{cfg: c, dir: dir})
		case config.SinkWebhook:
			// Redirects are not followed: a chat webhook answers in place, and
			// a redirect's errors would quote a URL we did not scrub.
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			out = append(out, &webhookSink{cfg: c, env: env, client: client})
		case config.SinkDesktop:
			out = append(out, &commandSink{cfg: c, desktop: true, dir: dir})
		}
	}
	return out
}

// commandSink runs an argv with the notice's JSON on stdin; the desktop
// sink is notify-send with the summary as its body.
type commandSink struct {
	cfg     config.NotifySink
	dir     string
	desktop bool
}

func (s *commandSink) Name() string            { return s.cfg.Name }
func (s *commandSink) Wants(event string) bool { return s.cfg.Wants(event) }

func (s *commandSink) Send(ctx context.Context, n Notice) error {
	argv := s.cfg.Argv
	var stdin []byte
	if s.desktop {
		bin, err := exec.LookPath("notify-send")
		if err != nil {
			return errors.New("notify-send is not installed (desktop sink)")
		}
		// notify-send reads a little markup in the body: escaped like chat text.
		argv = []string{bin, "--app-name=wave-orchestrator", "wave-orchestrator: " + n.Event, chatText(n.Safe().Summary)}
	} else {
		stdin = append(n.JSON(), '\n')
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = s.dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "WAVE_NOTIFY_EVENT="+n.Event, "WAVE_NOTIFY_ID="+n.ID)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A child that leaves a grandchild holding its output must not hold
	// the try past its deadline.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not finish within %s", argv[0], tryTimeout)
	}
	if err != nil {
		tail := strings.TrimSpace(out.String())
		if len(tail) > 200 {
			tail = tail[len(tail)-200:]
		}
		if tail != "" {
			return fmt.Errorf("%s: %w: %s", argv[0], err, tail)
		}
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}

// webhookSink POSTs the notice. Its URL is read from the environment at
// each try and appears in no error, log or record.
type webhookSink struct {
	cfg    config.NotifySink
	env    Env
	client *http.Client
}

func (s *webhookSink) Name() string            { return s.cfg.Name }
func (s *webhookSink) Wants(event string) bool { return s.cfg.Wants(event) }

func (s *webhookSink) Send(ctx context.Context, n Notice) error {
	raw, ok := s.env(s.cfg.URLEnv)
	if !ok || strings.TrimSpace(raw) == "" {
		return fmt.Errorf("webhook URL variable %s is not set", s.cfg.URLEnv)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook URL in %s is not an http(s) URL", s.cfg.URLEnv)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(n.webhookBody()))
	if err != nil {
		return fmt.Errorf("webhook (URL from %s): cannot build the request", s.cfg.URLEnv)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "wave-orchestrator-notify")
	req.Header.Set("X-Wave-Notice-Id", n.ID)
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook (URL from %s): %s", s.cfg.URLEnv, transportError(ctx, err, raw, u))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook (URL from %s) answered %s", s.cfg.URLEnv, resp.Status)
	}
	return nil
}

// transportError says why a request failed without the URL: *url.Error
// quotes it whole, and the secret of a chat webhook is its path.
func transportError(ctx context.Context, err error, raw string, u *url.URL) string {
	if ctx.Err() != nil {
		return "no answer within " + tryTimeout.String()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	for _, secret := range []string{raw, u.String(), u.RequestURI(), u.Path, u.RawQuery, u.User.String()} {
		if len(secret) > 1 {
			msg = strings.ReplaceAll(msg, secret, "<url>")
		}
	}
	return msg
}
