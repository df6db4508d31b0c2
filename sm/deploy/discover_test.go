package deploy

import (
	"context"
	"testing"
	"time"
)

// TestFullScan: one full discovery at a time beside the watch; a request
// made meanwhile runs after it; a trap (stop) cancels the one in
// progress, drops the queued one and waits for the first to end.
func TestFullScan(t *testing.T) {
	ctx := context.Background()
	var f fullScan
	started := make(chan string, 4)
	cancelled := make(chan string, 4)
	release, hold := make(chan struct{}), make(chan struct{})
	scan := func(name string, release chan struct{}) func(context.Context) {
		return func(c context.Context) {
			started <- name
			select {
			case <-c.Done():
				cancelled <- name
			case <-release:
			}
		}
	}
	wait := func(ch chan string, want, what string) {
		t.Helper()
		select {
		case got := <-ch:
			if got != want {
				t.Fatalf("%s: %s, want %s", what, got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: nothing, want %s", what, want)
		}
	}
	f.start(ctx, scan("a", release))
	wait(started, "a", "first scan started")
	f.start(ctx, scan("b", release))
	select {
	case got := <-started:
		t.Fatalf("scan %s started while a ran", got)
	default:
	}
	close(release) // a ends by itself
	for deadline := time.Now().Add(time.Minute); ; {
		f.reap(ctx)
		if len(started) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	wait(started, "b", "queued scan started after the first ended")
	f.stop() // b ends by itself (release is closed), or is cancelled
	f.start(ctx, scan("c", hold))
	wait(started, "c", "scan after stop")
	f.start(ctx, scan("d", hold))
	f.stop()
	wait(cancelled, "c", "stop cancels the scan in progress")
	if f.done != nil || f.pending != nil {
		t.Fatal("stop left a scan in progress or queued")
	}
	f.reap(ctx)
	select {
	case got := <-started:
		t.Fatalf("scan %s started after stop dropped it", got)
	default:
	}
}
