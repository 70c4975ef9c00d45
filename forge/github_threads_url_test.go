package forge

import "testing"

// TestGraphQLEndpointSitsNextToTheRESTBase: api.github.com answers GraphQL
// at /graphql, a GitHub Enterprise server at /api/graphql.
func TestGraphQLEndpointSitsNextToTheRESTBase(t *testing.T) {
	for _, tc := range []struct{ api, want string }{
		{"", "https://api.github.com/graphql"},
		{"https://api.github.com/", "https://api.github.com/graphql"},
		{"https://ghe.example.com", "https://ghe.example.com/api/graphql"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com/api/graphql"},
	} {
		g, err := NewGitHub(GitHubOptions{Owner: "o", Repo: "r", APIURL: tc.api})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := g.graphqlURL(); err != nil || got != tc.want {
			t.Errorf("apiUrl %q: GraphQL at %q (%v), want %q", tc.api, got, err, tc.want)
		}
	}
}
