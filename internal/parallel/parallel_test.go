package parallel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
)

// workerCounts are the pool sizes every test compares: one worker (the
// calling goroutine), fewer workers than processors, more than units.
var workerCounts = []int{1, 2, 3, 8, 0, 1000}

// TestForResultsByIndex: results written by index and per-worker integer
// accumulators come out the same for every number of workers, every unit
// runs exactly once, and w stays within Workers(n, workers).
func TestForResultsByIndex(t *testing.T) {
	const n = 2000
	var want []uint64
	for _, workers := range workerCounts {
		out := make([]uint64, n)
		runs := make([]atomic.Int32, n)
		nw := Workers(n, workers)
		sums := make([]int64, nw)
		err := For(context.Background(), n, workers, func(w, i int) error {
			if w < 0 || w >= nw {
				return fmt.Errorf("worker %d of %d", w, nw)
			}
			runs[i].Add(1)
			out[i] = uint64(i)*0x9E3779B97F4A7C15 ^ uint64(i>>3)
			sums[w] += int64(i)
			return nil
		})
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		var sum int64
		for i := range runs {
			if runs[i].Load() != 1 {
				t.Fatalf("%d workers: unit %d ran %d times", workers, i, runs[i].Load())
			}
		}
		for _, s := range sums {
			sum += s
		}
		if sum != n*(n-1)/2 {
			t.Fatalf("%d workers: sum %d", workers, sum)
		}
		if want == nil {
			want = out
		} else if !slices.Equal(out, want) {
			t.Fatalf("%d workers: results differ from one worker's", workers)
		}
	}
}

// TestForLowestError: the error returned is the lowest failing unit's,
// whatever the workers and the order units finish in.
func TestForLowestError(t *testing.T) {
	for _, workers := range workerCounts {
		for _, first := range []int{0, 3, 517, 999} {
			err := For(context.Background(), 1000, workers, func(_, i int) error {
				if i >= first && i%7 == first%7 {
					if i == first {
						runtime.Gosched() // let higher failures finish first
					}
					return fmt.Errorf("unit %d", i)
				}
				return nil
			})
			if want := fmt.Sprintf("unit %d", first); err == nil || err.Error() != want {
				t.Fatalf("%d workers: err %v, want %s", workers, err, want)
			}
		}
	}
}

// TestForProgress: progress counts every unit, one call at a time, done
// increasing, ending at n.
func TestForProgress(t *testing.T) {
	for _, workers := range workerCounts {
		var calls, inside atomic.Int32
		last := 0
		err := ForProgress(context.Background(), 1000, workers, func(done, total int) {
			if inside.Add(1) != 1 {
				t.Error("progress calls overlap")
			}
			if total != 1000 || done <= last {
				t.Errorf("progress(%d, %d) after %d", done, total, last)
			}
			last = done
			calls.Add(1)
			inside.Add(-1)
		}, func(_, _ int) error { return nil })
		if err != nil || last != 1000 || calls.Load() < 2 {
			t.Fatalf("%d workers: err %v, progress reached %d in %d calls", workers, err, last, calls.Load())
		}
	}
}

// TestForCancel: a cancelled context stops the handing out and is
// returned; an empty range returns at once.
func TestForCancel(t *testing.T) {
	for _, workers := range workerCounts {
		ctx, cancel := context.WithCancel(context.Background())
		var ran atomic.Int32
		err := For(ctx, 100000, workers, func(_, i int) error {
			if ran.Add(1) == 10 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) || ran.Load() >= 100000 {
			t.Fatalf("%d workers: err %v after %d units", workers, err, ran.Load())
		}
		if err := Ordered(ctx, 10, workers, func(_, _ int) { t.Error("work after cancel") }, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("Ordered on a cancelled context: %v", err)
		}
	}
	if err := For(context.Background(), 0, 4, nil); err != nil {
		t.Fatal(err)
	}
}

// TestOrdered: merges run in unit order on the worker that did the work,
// so a floating-point sum of per-unit results (which rounding makes
// order-dependent) is the same to the bit for every number of workers;
// cancelling midway still merges every unit handed out, in order.
func TestOrdered(t *testing.T) {
	const n = 3000
	var want float64
	for _, workers := range workerCounts {
		nw := Workers(n, workers)
		scratch := make([]float64, nw)
		var sum float64
		next := 0
		err := Ordered(context.Background(), n, workers, func(w, i int) {
			x := math.Sqrt(float64(i)) * 1e-3 * float64(1+i%5)
			if i%4 == 0 { // a slow unit: later ones finish first
				for k := 0; k < 2000; k++ {
					x = math.Sqrt(x*x + 1e-300)
				}
				runtime.Gosched()
			}
			scratch[w] = x
		}, func(w, i int) {
			if i != next {
				t.Errorf("merge %d, want %d", i, next)
			}
			next++
			sum += scratch[w]
		})
		if err != nil || next != n {
			t.Fatalf("%d workers: err %v, %d merges", workers, err, next)
		}
		if workers == workerCounts[0] {
			want = sum
		} else if sum != want {
			t.Fatalf("%d workers: sum %v, one worker %v", workers, sum, want)
		}

		ctx, cancel := context.WithCancel(context.Background())
		var worked atomic.Int32
		merged := 0
		err = Ordered(ctx, n, workers, func(_, i int) {
			if worked.Add(1) == 50 {
				cancel()
			}
		}, func(_, i int) {
			if i != merged {
				t.Errorf("merge %d, want %d", i, merged)
			}
			merged++
		})
		if !errors.Is(err, context.Canceled) || merged != int(worked.Load()) || merged >= n {
			t.Fatalf("%d workers: err %v, %d worked, %d merged", workers, err, worked.Load(), merged)
		}
	}
}
