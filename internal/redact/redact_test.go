package redact

import (
	"strings"
	"testing"
)

func TestJSONHidesEverySecretAndKeepsTheRest(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a secret member's string", `{"ANTHROPIC_API_KEY":"sk-ant-1","MODE":"fast"}`,
			`{"ANTHROPIC_API_KEY":"<redacted>","MODE":"fast"}`},
		{"at any depth, in key order", `{"z":1,"claude":{"codex":{"env":{"GH_TOKEN":"ghp_1","X":"y"}}},"a":[{"apiKey":"k"}]}`,
			`{"z":1,"claude":{"codex":{"env":{"GH_TOKEN":"<redacted>","X":"y"}}},"a":[{"apiKey":"<redacted>"}]}`},
		{"a claude settings' env whatever its names", `{"settingsJson":{"env":{"PROXY":"p","N":{"x":"y"}},"model":"m"},"env":{"MODE":"m"}}`,
			`{"settingsJson":{"env":{"PROXY":"<redacted>","N":{"x":"<redacted>"}},"model":"m"},"env":{"MODE":"m"}}`},
		{"everything below a secret member", `{"secrets":{"a":"1","b":["2",3,true,null]}}`,
			`{"secrets":{"a":"<redacted>","b":["<redacted>",3,true,null]}}`},
		{"an OTLP exporter's header list", `{"env":{"OTEL_EXPORTER_OTLP_HEADERS":"authorization=Bearer%20t","OTEL_EXPORTER_OTLP_ENDPOINT":"http://c:4318"}}`,
			`{"env":{"OTEL_EXPORTER_OTLP_HEADERS":"<redacted>","OTEL_EXPORTER_OTLP_ENDPOINT":"http://c:4318"}}`},
		{"credential headers", `{"headers":{"Authorization":"Bearer x","Cookie":"c","Accept":"json"}}`,
			`{"headers":{"Authorization":"<redacted>","Cookie":"<redacted>","Accept":"json"}}`},
		{"a URL's password", `{"base":"https://me:pa55@proxy.example/v1","git":"ssh://git@host/x"}`,
			`{"base":"https://me:xxxxx@proxy.example/v1","git":"ssh://git@host/x"}`},
		{"names of variables are no secrets", `{"tokenEnv":"GITHUB_TOKEN","urlEnv":"HOOK","keepSecrets":["ANTHROPIC_API_KEY"],"scrubSecrets":true}`,
			`{"tokenEnv":"GITHUB_TOKEN","urlEnv":"HOOK","keepSecrets":["ANTHROPIC_API_KEY"],"scrubSecrets":true}`},
		{"numbers and HTML characters unchanged", `{"inputTokens":12345678901234567890,"prompt":"a <b> & c"}`,
			`{"inputTokens":12345678901234567890,"prompt":"a <b> & c"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if compact(string(got)) != tt.want {
				t.Errorf("got  %s\nwant %s", compact(string(got)), tt.want)
			}
		})
	}
}

func TestJSONKeepsTheLayout(t *testing.T) {
	got, err := JSON([]byte("{\n  \"a\": {\n    \"token\": \"t\"\n  }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": {\n    \"token\": \"<redacted>\"\n  }\n}\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := JSON([]byte(`{"a":`)); err == nil {
		t.Error("a torn document was accepted")
	}
}

// compact drops the indentation JSON adds.
func compact(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' && (i == 0 || s[i-1] != '\\'):
			in = !in
		case !in && (c == ' ' || c == '\n'):
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
