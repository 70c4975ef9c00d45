package kube

import (
	"errors"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// What client-go logs through klog's global logger (an exec plugin's
// refresh that failed, a response cut by a cancelled request) never
// reaches stderr, where it would write over the dashboard or over an
// attach's raw terminal.
func TestClientGoLogsNeverReachStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	klog.ErrorS(errors.New("boom"), "refreshing credentials")
	klog.Warning("a warning")
	klog.Flush()
	os.Stderr = stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) > 0 {
		t.Errorf("klog wrote to stderr: %q", out)
	}
}
