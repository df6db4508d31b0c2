package umad

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeDev is a umad device whose answers a test scripts: answer decides,
// for each MAD sent (with the umad header's timeout), whether the answer
// comes at once, is held until the next send (so that it comes after its
// try gave up; with keep, until release) or is a status.
type fakeDev struct {
	answer func(n int, timeoutMS int) (hold bool, status uint32)

	mu    sync.Mutex
	sends []int // each send's header timeout
	held  []fakeMAD
	keep  bool // hold the answers held until release, not the next send
	open  bool // release was called: every answer comes at once
	out   chan fakeMAD
}

type fakeMAD struct {
	mad    [MADSize]byte
	status uint32
}

func newFakeDev(answer func(n, timeoutMS int) (bool, uint32)) *fakeDev {
	return &fakeDev{answer: answer, out: make(chan fakeMAD, 1024)}
}

func (f *fakeDev) send(mad *[MADSize]byte, timeoutMS int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.sends)
	f.sends = append(f.sends, timeoutMS)
	for i := len(f.held) - 1; i >= 0 && !f.keep; i-- {
		f.out <- f.held[i] // the latest first
	}
	if !f.keep {
		f.held = nil
	}
	a := fakeMAD{mad: *mad}
	a.mad[offMethod] = MethodGetResp
	binary.BigEndian.PutUint16(a.mad[offStatus:], directionBit)
	a.mad[offData] = uint8(n) // which send this answers
	hold, status := f.answer(n, timeoutMS)
	a.status = status
	if hold && !f.open {
		f.held = append(f.held, a)
	} else {
		f.out <- a
	}
	return nil
}

func (f *fakeDev) recv(mad *[MADSize]byte, timeoutMS int) (uint32, bool, error) {
	select {
	case a := <-f.out:
		*mad = a.mad
		return a.status, true, nil
	case <-time.After(time.Duration(timeoutMS) * time.Millisecond):
		return 0, false, nil
	}
}

func (f *fakeDev) close() error { return nil }

// release sends the answers held and every later one at once.
func (f *fakeDev) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.held {
		f.out <- h
	}
	f.held, f.open = nil, true
}

func (f *fakeDev) sent() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.sends...)
}

func lftGet(block uint32) Request {
	return Request{Method: MethodGet, AttrID: AttrLinearForwardTable, AttrMod: block, Path: Path{1, 2}}
}

// TestPortRetryTimeoutGrows: a switch that answers only tries given at
// least 80 ms (a busy SMA) is reached on the try whose timeout has grown
// to that; the answers to the earlier tries come after those gave up and
// are dropped, not taken for the later try's (each try has its own TID).
func TestPortRetryTimeoutGrows(t *testing.T) {
	dev := newFakeDev(func(_, timeoutMS int) (bool, uint32) { return timeoutMS < 80, 0 })
	p := newPort(dev, 0x10000)
	defer p.Close()
	var late atomic.Int32
	p.trace = func(ev string, _ uint32) {
		if ev == "late" {
			late.Add(1)
		}
	}
	r, err := p.Do(context.Background(), lftGet(3), Options{Timeout: 20 * time.Millisecond, Retries: 3})
	if err != nil {
		t.Fatalf("%v (header timeouts sent: %v)", err, dev.sent())
	}
	// A stall of the machine may cost the 80 ms try its answer: the
	// fourth waits as long.
	sends := dev.sent()
	if len(sends) < 3 || sends[0] != 20 || sends[1] != 40 || sends[2] != 80 {
		t.Errorf("header timeouts of the tries %v, want 20, 40, 80 (and 80)", sends)
	}
	if int(r.Data[0]) < 2 || r.AttrMod != 3 {
		t.Errorf("answer to send %d (block %d), want the third or fourth try's (block 3)", r.Data[0], r.AttrMod)
	}
	if n := late.Load(); n < 2 {
		t.Errorf("%d late answers dropped, want the first two tries'", n)
	}
	if got := (Options{Timeout: 10 * time.Millisecond}).tryTimeout(9); got != maxBackoff*10*time.Millisecond {
		t.Errorf("try 9 waits %v, want the cap %v", got, maxBackoff*10*time.Millisecond)
	}
}

// TestPortDropped: a port that answers every try "timed out" at once
// (ibsim, when a link on the route is down) fails the SMP after its
// tries with an error that says it was dropped on its route; one that
// answers "timed out" when the time is up (the kernel) is a plain
// timeout.
func TestPortDropped(t *testing.T) {
	dev := newFakeDev(func(int, int) (bool, uint32) { return false, uint32(syscall.ETIMEDOUT) })
	p := newPort(dev, 0)
	defer p.Close()
	_, err := p.Do(context.Background(), lftGet(1), Options{Timeout: time.Minute, Retries: 2})
	if !errors.Is(err, ErrDropped) || !errors.Is(err, ErrTimeout) {
		t.Errorf("error %v, want ErrDropped and ErrTimeout", err)
	}
	if n := len(dev.sent()); n != 3 {
		t.Errorf("%d tries, want 3", n)
	}
	if err := statusErr(uint32(syscall.ETIMEDOUT), 190*time.Millisecond, 200*time.Millisecond); errors.Is(err, ErrDropped) || !errors.Is(err, ErrTimeout) {
		t.Errorf("a kernel timeout: %v, want ErrTimeout only", err)
	}
}

// TestPortConcurrent: SMPs in flight together, answered in the reverse
// order of their sends, each get their own answer.
func TestPortConcurrent(t *testing.T) {
	const n = 16
	dev := newFakeDev(func(k, _ int) (bool, uint32) { return k < n-1, 0 })
	p := newPort(dev, 0xfffffff0) // the TIDs wrap around
	defer p.Close()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.Do(context.Background(), lftGet(uint32(i)), Options{Timeout: time.Minute})
			if err == nil && r.AttrMod != uint32(i) {
				err = errors.New("another SMP's answer")
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("SMP %d: %v", i, err)
		}
	}
}

// TestPortWindow: while no answer comes, retries stop at maxOutstanding
// SMPs sent and unanswered (given up on included) instead of piling up;
// once the answers come (late for the tries given up on) the calls end
// and the port works on.
func TestPortWindow(t *testing.T) {
	dev := newFakeDev(func(int, int) (bool, uint32) { return true, 0 })
	dev.keep = true
	p := newPort(dev, 0)
	defer p.Close()
	var expired atomic.Int32 // slots freed by the grace (a stall of a second or more)
	p.trace = func(ev string, _ uint32) {
		if ev == "expired" {
			expired.Add(1)
		}
	}
	const calls = 40 // 4 tries each: 160 SMPs without the window
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.Do(context.Background(), lftGet(uint32(i)), Options{Timeout: 5 * time.Millisecond, Retries: 3})
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for len(dev.sent()) < maxOutstanding && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the tries given up on stay within the grace
	if n, e := len(dev.sent()), int(expired.Load()); n < maxOutstanding || n > maxOutstanding+e {
		t.Errorf("%d SMPs sent without an answer (%d tries' grace ran out), want the window's %d", n, e, maxOutstanding)
	}
	dev.release()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("calls still blocked a minute after the answers came")
	}
	if _, err := p.Do(context.Background(), lftGet(1), Options{Timeout: time.Minute}); err != nil {
		t.Errorf("after the window drained: %v", err)
	}
}
