// Package parallel runs independent units of work on a pool of goroutines
// so that the results do not depend on the number of workers: units write
// their results by index, or add them into per-worker accumulators whose
// merge does not depend on the order (integer sums, OR, min, max), or are
// merged one at a time in unit order (Ordered). Every engine, verifier,
// planner and simulation sweep of nuesm uses it (DESIGN.md, "Hot paths").
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns the number of goroutines For runs for n units: workers,
// or GOMAXPROCS when workers <= 0, at most n and at least 1.
func Workers(n, workers int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(workers, n))
}

// For calls fn(w, i) for every i in [0, n) on Workers(n, workers)
// goroutines; w in [0, Workers(n, workers)) names the calling goroutine so
// that fn can keep per-worker scratch. Units are handed out in increasing
// order, one at a time; one worker runs them on the calling goroutine.
//
// When units fail, For stops handing out new ones and returns the error of
// the lowest failing unit, which does not depend on the scheduling: every
// unit below it was handed out earlier and runs to completion. ctx is
// checked between units; cancellation returns ctx.Err().
func For(ctx context.Context, n, workers int, fn func(w, i int) error) error {
	return ForProgress(ctx, n, workers, nil, fn)
}

// ForProgress is For that calls progress(done, n), when non-nil, after
// every unit that completes a 1/256 share and after the last one, one call
// at a time and with done increasing.
func ForProgress(ctx context.Context, n, workers int, progress func(done, total int), fn func(w, i int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	workers = Workers(n, workers)
	var p pool
	p.n, p.step, p.progress = n, max(1, n/256), progress
	p.errIdx = n
	p.run(workers, func(w int) {
		for !p.stop.Load() {
			i := int(p.next.Add(1) - 1)
			if i >= n {
				return
			}
			if err := ctx.Err(); err != nil {
				p.stop.Store(true)
				return
			}
			if err := fn(w, i); err != nil {
				p.fail(i, err)
				return
			}
			p.done()
		}
	})
	if p.firstErr != nil {
		return p.firstErr
	}
	return ctx.Err()
}

// Ordered calls work(w, i) for every i in [0, n) on Workers(n, workers)
// goroutines and merge(w, i) in increasing i: merge(w, i) runs on the
// worker that ran work(w, i), after the merges of all lower units and
// before that worker takes another unit, so work may leave its result in
// per-worker scratch. Merges that add floating-point numbers thus give the
// same sums to the bit whatever the workers. ctx is checked between units;
// cancellation returns ctx.Err() once the units handed out are merged.
func Ordered(ctx context.Context, n, workers int, work, merge func(w, i int)) error {
	if n <= 0 {
		return ctx.Err()
	}
	workers = Workers(n, workers)
	// Each worker holds at most one unit not merged yet, so the units in
	// flight are consecutive, fewer than workers, and unit i's turn can be
	// signalled in slot i mod workers (buffered: the signal may come
	// first).
	turn := make([]chan struct{}, workers)
	for k := range turn {
		turn[k] = make(chan struct{}, 1)
	}
	var p pool
	p.run(workers, func(w int) {
		// A unit handed out is always worked and merged, so no worker
		// waits for a turn that never comes; cancellation stops the
		// handing out.
		for ctx.Err() == nil {
			i := int(p.next.Add(1) - 1)
			if i >= n {
				return
			}
			work(w, i)
			if i > 0 {
				<-turn[i%workers]
			}
			merge(w, i)
			turn[(i+1)%workers] <- struct{}{}
		}
	})
	return ctx.Err()
}

// pool is the shared state of one For or Ordered run.
type pool struct {
	next      atomic.Int64
	stop      atomic.Bool
	n, step   int
	progress  func(done, total int)
	mu        sync.Mutex // guards what follows
	completed int
	errIdx    int
	firstErr  error
}

// run starts workers goroutines on body (the calling goroutine alone for
// one) and waits for them.
func (p *pool) run(workers int, body func(w int)) {
	if workers == 1 {
		body(0)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() { body(w) })
	}
	wg.Wait()
}

// fail records unit i's error and stops handing out units.
func (p *pool) fail(i int, err error) {
	p.mu.Lock()
	if i < p.errIdx {
		p.errIdx, p.firstErr = i, err
	}
	p.mu.Unlock()
	p.stop.Store(true)
}

// done counts a completed unit and reports progress.
func (p *pool) done() {
	if p.progress == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.completed++
	if p.completed%p.step == 0 || p.completed == p.n {
		p.progress(p.completed, p.n)
	}
}
