package placement

import (
	"fmt"
	"io"
)

// FailSummary condenses the failovers of every combination of k failed
// I/O nodes (§5.2.5 fails 1–4 of them; which ones the seed does not say,
// so all combinations are averaged). Each combination fails at once, so
// the result does not depend on an order.
type FailSummary struct {
	Failed       int // k
	Combinations int
	// Mean over the combinations, and the worst one, of the largest
	// distance of a compute node to its I/O node, of the mean distance and
	// of the most compute nodes one healthy I/O node serves.
	MaxDistMean, MeanDistMean, MaxLoadMean float64
	MaxDistWorst, MaxLoadWorst             int
	MeanDistWorst                          float64
	Moved                                  float64 // compute nodes reassigned, mean
}

// maxSweep bounds the combinations FailSweep enumerates.
const maxSweep = 1 << 20

// FailSweep fails every k-subset of a's I/O nodes (simultaneously, by
// Failover) and summarises the outcomes. O(C(|IO|, k)·N·|IO|).
func FailSweep(a *Assignment, k int) (FailSummary, error) {
	io := a.P.IO
	s := FailSummary{Failed: k}
	if k < 1 || k >= len(io) {
		return s, fmt.Errorf("%w: %d failed I/O nodes, expected 1..%d", ErrBadParam, k, len(io)-1)
	}
	if c := binomCap(len(io), k); c > maxSweep {
		return s, fmt.Errorf("%w: C(%d, %d) = %d combinations, more than %d", ErrBadParam, len(io), k, c, maxSweep)
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	failed := make([]int, k)
	for {
		for i, j := range idx {
			failed[i] = io[j]
		}
		b, reg, err := Failover(a, failed)
		if err != nil {
			return s, err
		}
		maxD, maxL := 0, 0
		for i, v := range b.Of {
			if v >= 0 && v != i {
				maxD = max(maxD, b.Dist[i])
			}
		}
		for _, l := range b.Loads() {
			maxL = max(maxL, l)
		}
		md := b.MeanDist()
		s.Combinations++
		s.MaxDistMean += float64(maxD)
		s.MeanDistMean += md
		s.MaxLoadMean += float64(maxL)
		s.Moved += float64(len(reg.Moves))
		s.MaxDistWorst, s.MaxLoadWorst, s.MeanDistWorst = max(s.MaxDistWorst, maxD), max(s.MaxLoadWorst, maxL), max(s.MeanDistWorst, md)
		if !nextCombination(idx, len(io)) {
			break
		}
	}
	n := float64(s.Combinations)
	s.MaxDistMean, s.MeanDistMean, s.MaxLoadMean, s.Moved = s.MaxDistMean/n, s.MeanDistMean/n, s.MaxLoadMean/n, s.Moved/n
	return s, nil
}

// nextCombination advances idx (increasing indices below n) to the next
// k-subset in lexicographic order; false after the last.
func nextCombination(idx []int, n int) bool {
	k := len(idx)
	i := k - 1
	for i >= 0 && idx[i] == n-k+i {
		i--
	}
	if i < 0 {
		return false
	}
	idx[i]++
	for j := i + 1; j < k; j++ {
		idx[j] = idx[j-1] + 1
	}
	return true
}

// binomCap returns C(n, k), or some value above maxSweep once the
// running product passes it (no overflow).
func binomCap(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
		if r > maxSweep {
			return r
		}
	}
	return r
}

// FailSweepHeader is the header of the table WriteFailSweep writes rows of.
const FailSweepHeader = "| torus | method | I/O | failed | combinations | moved (mean) | max dist: mean (worst) | mean dist: mean (worst) | most served: mean (worst) |\n|---|---|---|---|---|---|---|---|---|\n"

// WriteFailSweep writes one Markdown row of s for a's placement.
func WriteFailSweep(w io.Writer, a *Assignment, s FailSummary) error {
	p := a.P
	_, err := fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %.2f | %.2f (%d) | %.3f (%.3f) | %.2f (%d) |\n", p.Torus, p.Method, len(p.IO), s.Failed,
		s.Combinations, s.Moved, s.MaxDistMean, s.MaxDistWorst, s.MeanDistMean, s.MeanDistWorst, s.MaxLoadMean, s.MaxLoadWorst)
	return err
}
