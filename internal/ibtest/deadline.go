package ibtest

import (
	"testing"
	"time"
)

// noDeadline is the budget of a wait in a test run without -timeout.
const noDeadline = 30 * time.Minute

// cleanupReserve is kept back from a test's deadline so that a wait that
// runs out still leaves time to fail cleanly: stop processes, print logs.
const cleanupReserve = 20 * time.Second

// Deadline returns when waits in t must give up: the test binary's
// deadline (go test -timeout) less a reserve for cleanup, or 30 minutes
// from now when there is none. Readiness waits use it instead of fixed
// limits, so that a slow, busy machine delays a test without failing it
// while a tool that never comes up still fails it before the binary is
// killed.
func Deadline(t testing.TB) time.Time {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			end := dl.Add(-cleanupReserve)
			if left := time.Until(dl); left < 2*cleanupReserve {
				end = time.Now().Add(left / 2) // little left: split it
			}
			return end
		}
	}
	return time.Now().Add(noDeadline)
}

// Budget returns the time left until Deadline(t).
func Budget(t testing.TB) time.Duration { return time.Until(Deadline(t)) }

// WaitFor polls cond (every 20 ms at first, backing off to once a second)
// until it returns true, returns an error, or Deadline(t) passes; the
// last two fail t, naming what and how long it waited.
func WaitFor(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	start, end := time.Now(), Deadline(t)
	pause := 20 * time.Millisecond
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v (after %v)", what, err, time.Since(start).Round(time.Millisecond))
		}
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not reached after %v (the test's deadline is near)", what, time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
	}
}

// Returns runs f and returns its error, failing t (as WaitFor does) when
// f has not returned by Deadline(t): for calls that must not hang, such
// as reads of a named pipe or a device.
func Returns(t testing.TB, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	var err error
	WaitFor(t, what+" returns", func() (bool, error) {
		select {
		case err = <-done:
			return true, nil
		default:
			return false, nil
		}
	})
	return err
}
