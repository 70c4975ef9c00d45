package runtime

import (
	"strings"
	"testing"
)

// Output the agent wrote that the runner has not read yet counts as
// output: a descheduled reader must not make a printing agent look silent.
func TestUnreadSeesOutputWaitingInThePty(t *testing.T) {
	t.Parallel()
	master, slave, err := openPty()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	if n := unread(master); n != 0 {
		t.Fatalf("unread before any output = %d", n)
	}
	if _, err := slave.Write([]byte("still working\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bytes written to the pty to show as unread", func() bool { return unread(master) > 0 })
	buf := make([]byte, 256)
	var got strings.Builder
	for !strings.Contains(got.String(), "still working") {
		n, err := master.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(buf[:n])
	}
	if n := unread(master); n != 0 {
		t.Fatalf("unread after reading everything = %d", n)
	}
}
