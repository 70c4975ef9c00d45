// Package redact owns the one rule for what counts as a secret in what
// wave-orchestrator writes or prints: which variable names hold one
// (Name) and how a JSON document is shown without them (JSON). Package
// config builds its SecretEnvNames on Name; launch.json, dry-run
// previews and manifests go through these.
package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"regexp"
)

// Value stands in for a secret value.
const Value = "<redacted>"

// secretWords are the parts of a name that say it holds a credential:
// ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD,
// GOOGLE_APPLICATION_CREDENTIALS, apiKey. Matched anywhere in the name,
// case-insensitively: a name wrongly taken for a secret is only kept from
// agents and shown redacted, while one missed is handed to every worker.
var secretWords = regexp.MustCompile(`(?i)token|secret|key|passw(or)?d|credential`)

// otlpHeaders are the OpenTelemetry exporters' header lists
// (OTEL_EXPORTER_OTLP_HEADERS and each signal's own, _TRACES_HEADERS,
// _METRICS_HEADERS, _LOGS_HEADERS): where a collector's token goes
// (authorization=Bearer …), though the names say nothing of it.
var otlpHeaders = regexp.MustCompile(`(?i)^OTEL_EXPORTER_OTLP_([A-Z]+_)?HEADERS$`)

// Name reports whether a variable's (or a JSON member's) name says it
// holds a secret.
func Name(name string) bool { return secretWords.MatchString(name) || otlpHeaders.MatchString(name) }

// jsonKey reports whether a JSON member named k holds a secret: its name
// says so (Name, or an HTTP credential header), unless it names
// variables rather than holding a value (tokenEnv, urlEnv, keepSecrets).
func jsonKey(k string) bool {
	switch strings.ToLower(k) {
	case "authorization", "proxy-authorization", "cookie", "x-api-key":
		return true
	case "keepsecrets", "scrubsecrets":
		return false
	}
	return Name(k) && !strings.HasSuffix(k, "Env")
}

// JSON rewrites a JSON document with every string held by a secret
// member (see jsonKey) or by a Claude Code settings' env (settingsJson.env:
// its documented place for keys, whatever their names), at any depth
// below it, replaced by Value, and the password of any URL in a string
// masked. Key order, numbers and
// indentation (two spaces, as Write uses) are kept; the result ends in a
// newline when b did.
func JSON(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	r := rewriter{out: &out}
	if err := r.value(dec, "", false); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("redact: more than one JSON value")
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, out.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		ind.WriteByte('\n')
	}
	return ind.Bytes(), nil
}

type rewriter struct{ out *bytes.Buffer }

// value copies one JSON value from dec, the value of member key ("" in an
// array or at the top); secret says it sits below a secret member.
func (r rewriter) value(dec *json.Decoder, key string, secret bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return r.object(dec, key, secret)
		case '[':
			return r.array(dec, secret)
		}
		return fmt.Errorf("unexpected %v", t)
	case string:
		if secret {
			t = Value
		}
		return r.str(maskURL(t))
	case json.Number:
		r.out.WriteString(t.String())
	case bool:
		fmt.Fprint(r.out, t)
	case nil:
		r.out.WriteString("null")
	}
	return nil
}

func (r rewriter) object(dec *json.Decoder, key string, secret bool) error {
	r.out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		if i > 0 {
			r.out.WriteByte(',')
		}
		if err := r.str(k); err != nil {
			return err
		}
		r.out.WriteByte(':')
		if err := r.value(dec, k, secret || jsonKey(k) || key == "settingsJson" && k == "env"); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	r.out.WriteByte('}')
	return err
}

func (r rewriter) array(dec *json.Decoder, secret bool) error {
	r.out.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			r.out.WriteByte(',')
		}
		if err := r.value(dec, "", secret); err != nil {
			return err
		}
	}
	_, err := dec.Token() // ']'
	r.out.WriteByte(']')
	return err
}

// str writes s as a JSON string without HTML escaping, as the documents
// it rewrites were written.
func (r rewriter) str(s string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	r.out.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return nil
}

// maskURL masks the password of a URL with one (https://u:p@host).
func maskURL(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); !ok {
		return s
	}
	return u.Redacted()
}
