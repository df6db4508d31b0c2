package flitsim

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStatistics cross-checks the counters of one run: flits leaving on
// ejection links match the accepted flits, link utilisation matches the
// flits, the busiest links come first, VL occupancy stays within the
// buffers, and latency percentiles are ordered.
func TestStatistics(t *testing.T) {
	n := network(t, torus(t, 4, "dor"), Config{})
	res, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: 0.6}, RunOptions{Seed: 5, Warmup: 1000, Measure: 20000})
	if err != nil {
		t.Fatal(err)
	}
	var eject, inject int64
	for _, l := range res.Links {
		switch l.Kind {
		case "eject":
			eject += l.Flits
		case "inject":
			inject += l.Flits
		}
		if u := float64(l.Flits) / float64(res.WindowCycles); math.Abs(u-l.Utilisation) > 1e-12 || u > 1 {
			t.Fatalf("link %s: %d flits, utilisation %.4f", l.Name, l.Flits, l.Utilisation)
		}
	}
	if d := math.Abs(float64(eject-res.AcceptedFlits)) / float64(res.AcceptedFlits); d > 0.01 {
		t.Errorf("ejected %d flits, accepted %d", eject, res.AcceptedFlits)
	}
	if d := math.Abs(float64(inject-res.OfferedFlits)) / float64(res.OfferedFlits); d > 0.02 {
		t.Errorf("injected %d flits, offered %d", inject, res.OfferedFlits)
	}
	top := res.BusiestLinks(3)
	if len(top) != 3 || top[0].Flits < top[1].Flits || top[1].Flits < top[2].Flits {
		t.Errorf("busiest links %+v", top)
	}
	for _, v := range res.VLStats {
		if v.MeanFlits < 0 || v.MeanFraction > 1 || int(v.MaxFlits) > n.Config().BufferFlits {
			t.Errorf("VL %d occupancy %+v", v.VL, v)
		}
	}
	if res.VLStats[0].MeanFlits <= 0 {
		t.Errorf("VL0 never occupied: %+v", res.VLStats[0])
	}
	l := res.Latency
	if !(float64(l.P50) <= float64(l.P99) && l.P99 <= l.Max && l.Mean > 0 && res.NetworkLatency.Mean <= l.Mean) {
		t.Errorf("latency %+v, network latency %+v", l, res.NetworkLatency)
	}
	if res.Unfinished != 0 || res.AcceptedMin <= 0 || res.AcceptedMin > res.Accepted {
		t.Errorf("unfinished %d, least served source %.4f of mean %.4f", res.Unfinished, res.AcceptedMin, res.Accepted)
	}
}

func TestSummarize(t *testing.T) {
	xs := []int32{9, 1, 5, 3, 7, 2, 8, 4, 6, 10}
	s := summarize(xs)
	if s.Count != 10 || s.Mean != 5.5 || s.P50 != 5 || s.P99 != 10 || s.Max != 10 {
		t.Errorf("summarize = %+v", s)
	}
	if (summarize(nil) != LatencyStats{}) {
		t.Error("empty summary")
	}
}

// TestSummarizeMatchesSort checks the counting pass against the
// nearest-rank definition on sorted data, for narrow and wide spans.
func TestSummarizeMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(300)
		span := int32(1 + rng.IntN(5000))
		if trial%3 == 0 {
			span = 1 << 30
		}
		xs := make([]int32, n)
		for i := range xs {
			xs[i] = rng.Int32N(span)
		}
		ref := append([]int32(nil), xs...)
		slices.Sort(ref)
		var sum int64
		for _, x := range ref {
			sum += int64(x)
		}
		at := func(p float64) int64 {
			return int64(ref[min(max(int(p*float64(n)+0.999999999)-1, 0), n-1)])
		}
		want := LatencyStats{Count: int64(n), Mean: float64(sum) / float64(n), P50: at(0.5), P99: at(0.99), Max: int64(ref[n-1])}
		if got := summarize(xs); got != want {
			t.Fatalf("trial %d (n %d, span %d): summarize = %+v, want %+v", trial, n, span, got, want)
		}
	}
}
