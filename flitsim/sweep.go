package flitsim

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/nuesm/nuesm/internal/parallel"
)

// Point is one run of a sweep: an engine's network, an offered load and a
// seed. Index numbers the points of a sweep from 0 in the order
// SweepPoints lists them; a SLURM array task runs the point of its index.
type Point struct {
	Index  int     `json:"index"`
	Engine string  `json:"engine"`
	Load   float64 `json:"load"`
	Seed   uint64  `json:"seed"`
}

// SweepPoints lists engines × loads × seeds, engines outermost.
func SweepPoints(engines []string, loads []float64, seeds []uint64) []Point {
	var ps []Point
	for _, e := range engines {
		for _, l := range loads {
			for _, s := range seeds {
				ps = append(ps, Point{Index: len(ps), Engine: e, Load: l, Seed: s})
			}
		}
	}
	return ps
}

// Row is the outcome of one point: the columns of the sweep's CSV, plus
// the channel loads for heat maps (JSON only). Fractions are of the link
// bandwidth, latencies in cycles.
type Row struct {
	Point
	Pattern         string  `json:"pattern"`
	Offered         float64 `json:"offered"`
	Accepted        float64 `json:"accepted"`
	AcceptedMin     float64 `json:"accepted_min"`
	Bound           float64 `json:"bound"`
	LatencyMean     float64 `json:"latency_mean"`
	LatencyP50      int64   `json:"latency_p50"`
	LatencyP99      int64   `json:"latency_p99"`
	NetLatencyMean  float64 `json:"net_latency_mean"`
	Completion      int64   `json:"completion_cycles"`
	CompletionBound float64 `json:"completion_bound"`
	PhaseBound      float64 `json:"phase_bound"` // Bound.PhaseSaturation (shift)
	Unfinished      int64   `json:"unfinished"`
	Deadlock        string  `json:"deadlock"` // the error text, "" when none
	// Error says why the point was not simulated (its engine failed to
	// route or verify); the other fields are then zero.
	Error    string `json:"error"`
	FlitHops int64  `json:"flit_hops"`
	Cycles   int64  `json:"cycles"`
	// Verdict is Result.Verdict ("" when not simulated).
	Verdict string `json:"verdict"`
	// Channels are the switch-to-switch links with their utilisation in
	// the measurement window.
	Channels []ChannelLoad `json:"channels,omitempty"`
}

// ChannelLoad is the utilisation of the channel from switch From to
// switch To (fabric.Graph switch indices).
type ChannelLoad struct {
	From int32   `json:"from"`
	To   int32   `json:"to"`
	Util float64 `json:"util"`
}

// RunPoint simulates point p on n (traffic t at the point's load, options
// opt with the point's seed) and summarises it; b is n's bound for t (nil
// to skip). A deadlock is recorded in the row, not returned.
func RunPoint(ctx context.Context, n *Network, b *Bound, t Traffic, opt RunOptions, p Point) (Row, error) {
	if t.Pattern != Shift {
		t.Load = p.Load
	}
	opt.Seed = p.Seed
	res, err := n.Run(ctx, t, opt)
	var dl *DeadlockError
	if err != nil && !errors.As(err, &dl) {
		return Row{}, fmt.Errorf("flitsim: %s at load %g, seed %d: %w", p.Engine, p.Load, p.Seed, err)
	}
	r := Row{
		Point: p, Pattern: res.Pattern, Offered: res.OfferedFraction, Accepted: res.AcceptedFraction,
		AcceptedMin: res.AcceptedMin / n.cfg.LinkBandwidth,
		LatencyMean: res.Latency.Mean, LatencyP50: res.Latency.P50, LatencyP99: res.Latency.P99,
		NetLatencyMean: res.NetworkLatency.Mean, Completion: res.Completion, Unfinished: res.Unfinished,
		FlitHops: res.FlitHops, Cycles: res.Cycles, Verdict: res.Verdict,
	}
	if b != nil {
		r.Bound, r.CompletionBound, r.PhaseBound = b.Saturation, b.CompletionCycles, b.PhaseSaturation
	}
	if dl != nil {
		r.Deadlock = dl.Error()
	}
	for l := int32(0); l < n.nChan; l++ {
		r.Channels = append(r.Channels, ChannelLoad{From: n.lkSrcSw[l], To: n.lkDstSw[l], Util: res.Links[l].Utilisation})
	}
	return r, nil
}

// SweepNet is the network of one engine in a sweep.
type SweepNet struct {
	Net   *Network
	Bound *Bound // may be nil
}

// Sweep runs points on a pool of workers (0 = GOMAXPROCS) and returns the
// rows in point order; the rows do not depend on the number of workers.
// nets maps every point's engine to its network. The first error cancels
// the remaining points; a cancelled ctx returns its error.
func Sweep(ctx context.Context, nets map[string]SweepNet, t Traffic, opt RunOptions, points []Point, workers int) ([]Row, error) {
	for _, p := range points {
		if nets[p.Engine].Net == nil {
			return nil, fmt.Errorf("flitsim: sweep point %d: no network for engine %q: %w", p.Index, p.Engine, ErrConfig)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make([]Row, len(points))
	errs := make([]error, len(points))
	stopped := parallel.For(ctx, len(points), workers, func(_, i int) error {
		sn := nets[points[i].Engine]
		if rows[i], errs[i] = RunPoint(ctx, sn.Net, sn.Bound, t, opt, points[i]); errs[i] != nil {
			cancel()
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if stopped != nil {
		return nil, stopped
	}
	return rows, nil
}

// SaturationLoad returns the lowest offered load at which some run of
// engine was unstable (Result.Verdict) or deadlocked: where the engine
// saturates. ok is false when every load was stable.
func SaturationLoad(rows []Row, engine string) (load float64, ok bool) {
	for _, r := range rows {
		if r.Engine != engine || (r.Verdict != VerdictUnstable && r.Verdict != VerdictDeadlock) {
			continue
		}
		if !ok || r.Load < load {
			load, ok = r.Load, true
		}
	}
	return load, ok
}

// MergeRows sorts rows by point index and checks that they are exactly the
// points 0..total-1, each once (the outputs of a SLURM array).
func MergeRows(rows []Row, total int) ([]Row, error) {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b Row) int { return a.Index - b.Index })
	var missing []int
	k := 0
	for i := 0; i < total; i++ {
		switch {
		case k < len(rows) && rows[k].Index == i:
			k++
			if k < len(rows) && rows[k].Index == i {
				return nil, fmt.Errorf("flitsim: merge: point %d appears twice: %w", i, ErrConfig)
			}
		default:
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("flitsim: merge: %d of %d points missing (first: %d): %w", len(missing), total, missing[0], ErrConfig)
	}
	if k != len(rows) {
		return nil, fmt.Errorf("flitsim: merge: point %d beyond the sweep's %d points: %w", rows[k].Index, total, ErrConfig)
	}
	return rows, nil
}

// csvHeader are the columns WriteCSV writes.
var csvHeader = []string{"index", "engine", "pattern", "load", "seed", "offered", "accepted", "accepted_min", "bound",
	"latency_mean", "latency_p50", "latency_p99", "net_latency_mean", "completion_cycles", "completion_bound", "phase_bound",
	"unfinished", "deadlock", "flit_hops", "cycles", "error", "verdict"}

// WriteCSV writes rows as CSV with a header. Numbers use the shortest
// exact representation, so equal rows give equal bytes.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	i := func(x int64) string { return strconv.FormatInt(x, 10) }
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.Index), r.Engine, r.Pattern, f(r.Load), strconv.FormatUint(r.Seed, 10),
			f(r.Offered), f(r.Accepted), f(r.AcceptedMin), f(r.Bound),
			f(r.LatencyMean), i(r.LatencyP50), i(r.LatencyP99), f(r.NetLatencyMean), i(r.Completion), f(r.CompletionBound), f(r.PhaseBound),
			i(r.Unfinished), r.Deadlock, i(r.FlitHops), i(r.Cycles), r.Error, r.Verdict}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
