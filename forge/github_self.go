package forge

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v84/github"
)

// self is the login the token acts as: the author of every comment this
// source posts, and so the only author whose marker comments count. It is
// asked of GitHub once (GET /user) and kept; a failure is not kept, so the
// next write asks again.
func (g *GitHub) self(ctx context.Context) (string, error) {
	g.loginMu.Lock()
	defer g.loginMu.Unlock()
	if g.login != "" {
		return g.login, nil
	}
	var u *github.User
	err := g.do(ctx, "read the token's own login (GET /user)", true, func(ctx context.Context) error {
		var err error
		u, _, err = g.c.Users.Get(ctx, "")
		return err
	})
	if st := statusOf(err); st == http.StatusForbidden || st == http.StatusNotFound {
		return "", fmt.Errorf("%w; a GitHub App or Actions token cannot read it: set github.login to the login "+
			"its comments appear under (e.g. github-actions[bot])", err)
	}
	if err != nil {
		return "", err
	}
	login := strings.TrimSpace(u.GetLogin())
	if login == "" {
		return "", fmt.Errorf("github: GET /user answered without a login")
	}
	g.login = login
	return login, nil
}

// Self is the login the token acts as (github.login when set): whose
// comments are the supervisor's own.
func (g *GitHub) Self(ctx context.Context) (string, error) { return g.self(ctx) }
