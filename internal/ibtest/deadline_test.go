package ibtest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeT is a testing.TB with a chosen deadline whose Fatalf panics with
// the message, so that a test can see a wait give up.
type fakeT struct {
	testing.TB
	deadline time.Time
	has      bool
}

func (f fakeT) Deadline() (time.Time, bool) { return f.deadline, f.has }
func (f fakeT) Helper()                     {}
func (f fakeT) Fatalf(format string, args ...any) {
	panic(fatal(fmt.Sprintf(format, args...)))
}

type fatal string

func TestDeadline(t *testing.T) {
	now := time.Now()
	far := fakeT{TB: t, deadline: now.Add(time.Hour), has: true}
	if d := Deadline(far); d.After(now.Add(time.Hour-cleanupReserve)) || d.Before(now.Add(59*time.Minute)) {
		t.Errorf("an hour left: wait until %v from now", d.Sub(now))
	}
	near := fakeT{TB: t, deadline: now.Add(10 * time.Second), has: true}
	if d := Deadline(near); d.After(now.Add(6*time.Second)) || d.Before(now) {
		t.Errorf("10 s left: wait until %v from now, want about half", d.Sub(now))
	}
	if d := Deadline(fakeT{TB: t}); d.Before(now.Add(noDeadline - time.Minute)) {
		t.Errorf("no deadline: wait until %v from now", d.Sub(now))
	}
	if dl, ok := t.Deadline(); ok && !Deadline(t).Before(dl) {
		t.Errorf("Deadline(t) %v is not before the test's own %v", Deadline(t), dl)
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, "third poll", func() (bool, error) { n++; return n == 3, nil })
	if n != 3 {
		t.Errorf("polled %d times", n)
	}
	msg := func(cond func() (bool, error)) (m string) {
		defer func() { m = string(recover().(fatal)) }()
		WaitFor(fakeT{TB: t, deadline: time.Now().Add(400 * time.Millisecond), has: true}, "never", cond)
		return ""
	}
	if m := msg(func() (bool, error) { return false, nil }); !strings.HasPrefix(m, "never: not reached after") {
		t.Errorf("a wait that runs out: %q", m)
	}
	if m := msg(func() (bool, error) { return false, fmt.Errorf("tool died") }); !strings.HasPrefix(m, "never: tool died") {
		t.Errorf("a failing condition: %q", m)
	}
}
