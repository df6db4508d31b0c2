package deploy

import (
	"context"
	"testing"
	"time"
)

// TestFullScan: one full discovery at a time beside the watch; a request
// made meanwhile runs after it; a trap (abandon) drops the queued one and
// turns the gate of the one in progress off without stopping it; stop
// (the watch's end) cancels the one in progress, drops the queued one and
// waits for the first to end.
func TestFullScan(t *testing.T) {
	ctx := context.Background()
	var f fullScan
	started := make(chan string, 4)
	cancelled := make(chan string, 4)
	release, hold := make(chan struct{}), make(chan struct{})
	scan := func(name string, release chan struct{}) func(context.Context, *scanGate) {
		return func(c context.Context, _ *scanGate) {
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
	g := f.gate
	f.start(ctx, scan("x", hold))
	f.abandon()
	if f.pending != nil || !g.off || f.done == nil {
		t.Fatalf("abandon: queued scan kept %v, gate off %v, scan in progress dropped %v", f.pending != nil, g.off, f.done == nil)
	}
	select {
	case got := <-cancelled:
		t.Fatalf("abandon cancelled scan %s", got)
	default:
	}
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
