package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ErrNoThreadAccess is wrapped by UnresolvedThreads when the token may not
// read review threads through GraphQL (HTTP 403, or a FORBIDDEN or
// INSUFFICIENT_SCOPES GraphQL error): a token without that scope.
var ErrNoThreadAccess = errors.New("the token may not read review threads (GraphQL)")

// Thread is an unresolved, current review thread on a pull request. Its
// path, line and comments are the reviewers' text: untrusted.
type Thread struct {
	ID       string // GraphQL node id: stable, so a thread is answered once
	Path     string
	Line     int
	Comments []ThreadComment
}

// ThreadComment is one comment of a review thread.
type ThreadComment struct {
	ID     int64
	Author string
	Body   string
}

// threadsQuery asks for a pull request's review threads; the shape is
// what forgetest serves.
const threadsQuery = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100) {
        nodes { id isResolved isOutdated path line comments(first: 20) { nodes { databaseId author { login } authorAssociation body } } }
      }
    }
  }
}`

type threadsAnswer struct {
	Data *struct {
		Repository *struct {
			PullRequest *struct {
				ReviewThreads struct {
					Nodes []struct {
						ID         string `json:"id"`
						IsResolved bool   `json:"isResolved"`
						IsOutdated bool   `json:"isOutdated"`
						Path       string `json:"path"`
						Line       *int   `json:"line"`
						Comments   struct {
							Nodes []struct {
								DatabaseID int64 `json:"databaseId"`
								Author     *struct {
									Login string `json:"login"`
								} `json:"author"`
								Association string `json:"authorAssociation"`
								Body        string `json:"body"`
							} `json:"nodes"`
						} `json:"comments"`
					} `json:"nodes"`
				} `json:"reviewThreads"`
			} `json:"pullRequest"`
		} `json:"repository"`
	} `json:"data"`
	Errors []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"errors"`
}

// UnresolvedThreads returns pull request n's review threads that are
// neither resolved nor outdated and carry a comment by someone with write
// access other than the token's own login, in GitHub's order. The REST API has no resolved
// flag, so this asks GraphQL, through the same client, retries and
// transient classification as every other request. Every review comment
// belongs to a review, so a pull request ChangesRequested found without
// any review moments ago (listedFresh) has no thread: GraphQL is not
// asked.
func (g *GitHub) UnresolvedThreads(ctx context.Context, n int) ([]Thread, error) {
	if g.recent.takeUnreviewed(n, g.now()) {
		return nil, nil
	}
	self, err := g.self(ctx)
	if err != nil {
		return nil, err
	}
	u, err := g.graphqlURL()
	if err != nil {
		return nil, err
	}
	body := map[string]any{"query": threadsQuery,
		"variables": map[string]any{"owner": g.owner, "name": g.repo, "number": n}}
	what := fmt.Sprintf("read review threads of PR #%d (GraphQL)", n)
	var ans threadsAnswer
	err = g.do(ctx, what, true, func(ctx context.Context) error {
		req, err := g.c.NewRequest(http.MethodPost, u, body)
		if err != nil {
			return err
		}
		ans = threadsAnswer{}
		_, err = g.c.Do(ctx, req, &ans)
		return err
	})
	if st := statusOf(err); st == http.StatusForbidden {
		return nil, fmt.Errorf("%w: %w", ErrNoThreadAccess, err)
	}
	if err != nil {
		return nil, err
	}
	if len(ans.Errors) > 0 {
		e := ans.Errors[0]
		if e.Type == "FORBIDDEN" || e.Type == "INSUFFICIENT_SCOPES" {
			return nil, fmt.Errorf("github: %s: %w: %s", what, ErrNoThreadAccess, e.Message)
		}
		if e.Type == "NOT_FOUND" {
			return nil, fmt.Errorf("github: %s: %w: %s", what, ErrNotFound, e.Message)
		}
		return nil, fmt.Errorf("github: %s: GraphQL error %s: %s", what, e.Type, e.Message)
	}
	if ans.Data == nil || ans.Data.Repository == nil || ans.Data.Repository.PullRequest == nil {
		return nil, fmt.Errorf("github: %s: %w", what, ErrNotFound)
	}
	var out []Thread
	for _, t := range ans.Data.Repository.PullRequest.ReviewThreads.Nodes {
		if t.IsResolved || t.IsOutdated {
			continue
		}
		th := Thread{ID: t.ID, Path: t.Path}
		if t.Line != nil {
			th.Line = *t.Line
		}
		others := false
		for _, c := range t.Comments.Nodes {
			who := ""
			if c.Author != nil {
				who = c.Author.Login
			}
			// A stranger's comment (anyone may comment on a public
			// repository's PR) must not hold a merge, as with reviews.
			others = others || (!strings.EqualFold(who, self) && slices.Contains(reviewerRoles, c.Association))
			th.Comments = append(th.Comments, ThreadComment{ID: c.DatabaseID, Author: who, Body: c.Body})
		}
		if others {
			out = append(out, th)
		}
	}
	return out, nil
}

// graphqlURL is the GraphQL endpoint next to the REST base: /graphql on
// api.github.com, /api/graphql on GitHub Enterprise (REST at /api/v3/).
func (g *GitHub) graphqlURL() (string, error) {
	base := g.c.BaseURL
	if base == nil {
		return "", errors.New("github: no API base URL")
	}
	rel := "graphql"
	if strings.HasSuffix(base.Path, "/api/v3/") {
		rel = "../graphql"
	}
	ref, err := url.Parse(rel)
	if err != nil {
		return "", err
	}
	return base.ResolveReference(ref).String(), nil
}
