package progress

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// buffer is a concurrency-safe io.Writer.
type buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor waits until the output holds want.
func waitFor(t *testing.T, b *buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-5 * time.Second)
	}
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", want, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPlainLines: off a terminal, whole lines at the interval, phases and
// counts in them, no carriage return, and a last line with the time.
func TestPlainLines(t *testing.T) {
	var b buffer
	off := false
	r := New(&b, "route", Options{Delay: time.Millisecond, Interval: 5 * time.Millisecond, Terminal: &off})
	r.Phase("routing")
	r.Update(3, 12)
	waitFor(t, &b, "route: routing 3/12 (25%), ")
	r.Phase("verifying")
	waitFor(t, &b, "route: verifying, ")
	r.Stop()
	out := b.String()
	if strings.Contains(out, "\r") || !strings.HasSuffix(out, "\n") || !strings.Contains(out, "route: done in ") {
		t.Fatalf("%q", out)
	}
}

// TestQuickWorkSilent: work that ends before the delay prints nothing.
func TestQuickWorkSilent(t *testing.T) {
	var b buffer
	r := New(&b, "route", Options{Delay: time.Hour})
	r.Update(1, 2)
	r.Stop()
	if b.String() != "" {
		t.Fatalf("%q", b.String())
	}
}

// TestTerminalBar: on a terminal, a bar redrawn in place with the count.
func TestTerminalBar(t *testing.T) {
	var b buffer
	on := true
	r := New(&b, "fip", Options{Delay: time.Millisecond, Terminal: &on})
	r.Update(5, 40)
	waitFor(t, &b, "5/40")
	r.Stop()
	out := b.String()
	if !strings.Contains(out, "\r") || !strings.Contains(out, "fip") || !strings.Contains(out, "fip: done in ") {
		t.Fatalf("%q", out)
	}
}

// TestStopTwice: a second Stop does nothing.
func TestStopTwice(t *testing.T) {
	var b buffer
	off := false
	r := New(&b, "x", Options{Delay: time.Millisecond, Interval: time.Millisecond, Terminal: &off})
	waitFor(t, &b, "x, ")
	r.Stop()
	n := len(b.String())
	r.Stop()
	if len(b.String()) != n || strings.Count(b.String(), "done in") != 1 {
		t.Fatalf("%q", b.String())
	}
}
