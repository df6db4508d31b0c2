package deploy

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// watcher wakes its reader when a file in the watched directories is
// written, created or renamed into place (inotify), so that the deployer
// sees OpenSM's log and dumps change within a scheduling delay instead of
// a poll period. Where inotify is not available the reader wakes only
// at the periods it passes to wait.
type watcher struct {
	f *os.File      // the inotify descriptor (nil: no inotify)
	c chan struct{} // one pending wake-up
}

// watchDirs watches dirs until ctx ends.
func watchDirs(ctx context.Context, dirs ...string) *watcher {
	w := &watcher{c: make(chan struct{}, 1)}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return w
	}
	n := 0
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if _, err := unix.InotifyAddWatch(fd, d, unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO|unix.IN_CREATE); err == nil {
			n++
		}
	}
	if n == 0 {
		_ = unix.Close(fd)
		return w
	}
	w.f = os.NewFile(uintptr(fd), "inotify")
	go w.read()
	go func() { <-ctx.Done(); _ = w.f.Close() }()
	return w
}

// read turns inotify events into wake-ups until the descriptor closes.
func (w *watcher) read() {
	buf := make([]byte, 64<<10)
	for {
		if _, err := w.f.Read(buf); err != nil {
			return
		}
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
}

// wait returns when a watched file changed since the last wait, after
// at most period, or when ctx ends (its error). A nil watcher waits the
// period.
func (w *watcher) wait(ctx context.Context, period time.Duration) error {
	if w == nil {
		return sleep(ctx, period)
	}
	t := time.NewTimer(period)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-w.c:
		return nil
	case <-t.C:
		return nil
	}
}
