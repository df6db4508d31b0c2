package sm

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// gate is an engine (registered under a name of its own per test) that
// routes with Nue, but while closed holds every routing until it opens:
// a reroute the test can catch in the middle. A stubborn gate ignores
// cancellation, as a hung engine would.
type gate struct {
	mu       sync.Mutex
	open     chan struct{} // nil: open
	stubborn bool
	waiting  atomic.Int32 // routings held now
}

var gateCount atomic.Int32

// newGate registers a gate engine and returns its name.
func newGate(t *testing.T) (string, *gate) {
	t.Helper()
	g := &gate{}
	name := fmt.Sprintf("sm-test-gate-%d", gateCount.Add(1))
	routing.Register(name, func() routing.Engine { return gateEngine{g: g, name: name} })
	return name, g
}

// close makes routings wait until reopen.
func (g *gate) close(stubborn bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open, g.stubborn = make(chan struct{}), stubborn
}

// reopen lets held and later routings through.
func (g *gate) reopen() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open != nil {
		close(g.open)
		g.open = nil
	}
}

// awaitHeld waits until a routing is held at the gate.
func (g *gate) awaitHeld(t *testing.T) {
	t.Helper()
	poll(t, "a routing held at the gate", func() bool { return g.waiting.Load() > 0 })
}

type gateEngine struct {
	g    *gate
	name string
}

func (e gateEngine) Name() string       { return e.name }
func (e gateEngine) DeadlockFree() bool { return true }

func (e gateEngine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	e.g.mu.Lock()
	open, stubborn := e.g.open, e.g.stubborn
	e.g.mu.Unlock()
	if open != nil {
		e.g.waiting.Add(1)
		var cancelled <-chan struct{}
		if !stubborn {
			cancelled = ctx.Done()
		}
		select {
		case <-open:
		case <-cancelled:
		}
		e.g.waiting.Add(-1)
		if err := ctx.Err(); err != nil && !stubborn {
			return nil, err
		}
	}
	nue, err := routing.Lookup("nue")
	if err != nil {
		return nil, err
	}
	r, err := nue.Route(context.WithoutCancel(ctx), g, opt)
	if r != nil {
		r.Engine = e.name
	}
	return r, err
}

// testDeadline is how long a wait in a test may take: until shortly
// before the test's own deadline, or two minutes without one.
func testDeadline(t *testing.T) time.Time {
	if d, ok := t.Deadline(); ok {
		return d.Add(-5 * time.Second)
	}
	return time.Now().Add(2 * time.Minute)
}

// poll waits until cond holds, failing the test at testDeadline.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := testDeadline(t)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timeout waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logBuffer is a log safe for concurrent writes and reads.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *logBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *logBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// logger logs text into w.
func (w *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
