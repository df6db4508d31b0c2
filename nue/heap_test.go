package nue

import (
	"math/rand/v2"
	"testing"
)

// TestRadixHeapMatchesNodeHeap drives both queues with the searches' kind
// of operations (pushes at or above the last minimum, lower keys for
// queued switches, equal re-pushes, pops, resets, and a push below the
// last minimum, queue empty or not) and wants the same pops.
func TestRadixHeapMatchesNodeHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for round := 0; round < 300; round++ {
		n := 1 + rng.IntN(300)
		nh, rh := newNodeHeap(n), newRadixHeap(n)
		queued := make([]bool, n)
		last := int64(0)
		for op := 0; op < 2000; op++ {
			v := int32(rng.IntN(n))
			switch x := rng.IntN(100); {
			case x < 55:
				k := last + rng.Int64N(50)
				if queued[v] {
					// The searches only lower a queued key, or repeat it.
					if k > nh.key[v] {
						k = nh.key[v] - rng.Int64N(2)
						if k < last {
							k = last
						}
					}
				}
				nh.push(v, k)
				rh.push(v, k)
				queued[v] = true
			case x < 97:
				a, okA := nh.pop()
				b, okB := rh.pop()
				if a != b || okA != okB {
					t.Fatalf("round %d op %d: node heap pops %d %v, radix heap %d %v", round, op, a, okA, b, okB)
				}
				if okA {
					queued[a] = false
					last = nh.key[a]
				}
			case x < 98:
				nh.reset()
				rh.reset()
				clear(queued)
				last = 0
			default:
				// Below the last minimum (a backtracking restart).
				if !queued[v] && last > 0 {
					k := rng.Int64N(last)
					nh.push(v, k)
					rh.push(v, k)
					queued[v] = true
					last = k
				}
			}
		}
	}
}

func TestRadixFits(t *testing.T) {
	if !radixFits(512, 1<<53) || radixFits(512, 1<<54) || !radixFits(1, 1<<61) || radixFits(1, 1<<62) {
		t.Error("radixFits bounds")
	}
}
