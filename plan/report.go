package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
)

// Report is the outcome of Verify: per step and per epoch what was
// checked and what was found, and the proof obligations met.
type Report struct {
	Steps  []StepReport
	Epochs []EpochReport
	Shape  []string // malformed-plan findings (ErrPlanShape)

	Pairs     int64 // connected (source port, destination LID) pairs
	LostPairs int64 // pairs the old tables already lose on this fabric
	// BlackoutPairs are pairs of Plan.Blackout destinations: they may be
	// dropped in any state (never loop, and their dependencies count).
	BlackoutPairs int64
	ChangedPairs  int64 // pairs whose path, SL or VLs change
	// ReorderPairs are changed pairs that can inject while their path
	// changes: they may see packets delivered out of order.
	ReorderPairs int64
	OldLoops     int64 // pairs the old tables loop (an unsafe start)
	VLsUsed      int   // highest VL used in any state + 1
	VLsClaimed   int   // highest VL any used SL maps to + 1
	VLLimit      int
	AllowReorder bool

	Obligations []Obligation
}

// StepReport is what Verify found for one step.
type StepReport struct {
	Index       int // 1-based
	Kind        StepKind
	Note        string
	Writes      int
	Blocks      int
	SLWrites    int
	SL2VLWrites int
	Paused      int64
	Units       int   // write units (LFT blocks, per-destination SL changes, SL2VL tables)
	States      int   // states checked one by one (0: by the union argument only)
	Loops       int64 // pairs that loop in some state of the step
	Dropped     int64 // pairs (not lost before) dropped in some state of the step
	// StateFailures counts states of the exhaustive check in which a pair
	// loops or is dropped (the union argument finds the same pairs).
	StateFailures int
	StateCycle    *cdg.CycleError
	Example       string
	exDLID        int // LID of Example (-1: none yet)
}

// EpochReport is the in-flight dependency graph of one epoch: the steps
// From..To (1-based) between barriers.
type EpochReport struct {
	From, To     int
	Dependencies int // edges between virtual channels, over the whole epoch
	At           int // with Cycle: the step at which the cycling packets coexist
	Drops        int64
	Example      string
	Cycle        *cdg.CycleError
	exDLID       int
}

// Obligation is one proof obligation and whether it holds.
type Obligation struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func newReport(p *Plan, sc *schedule, opt Options) *Report {
	rep := &Report{VLLimit: opt.MaxVLs, AllowReorder: p.AllowReorder}
	for i := range p.Steps {
		s := &p.Steps[i]
		rep.Steps = append(rep.Steps, StepReport{Index: i + 1, Kind: s.Kind, Note: s.Note, Writes: len(s.LFT),
			Blocks: s.Blocks(), SLWrites: len(s.SL), SL2VLWrites: len(s.SL2VL), Paused: s.PausedPairs(),
			Units: len(units(s)), exDLID: -1})
	}
	for _, e := range sc.epochs {
		rep.Epochs = append(rep.Epochs, EpochReport{From: int(e.lo), To: int(e.hi), exDLID: -1})
	}
	return rep
}

// merge adds a worker's tallies.
func (r *Report) merge(pt *vpart) {
	g := pt.v.w.g
	r.Pairs += pt.pairs
	r.LostPairs += pt.lost
	r.BlackoutPairs += pt.dark
	r.ChangedPairs += pt.changed
	r.ReorderPairs += pt.reorder
	r.OldLoops += pt.oldLoops
	r.VLsUsed = max(r.VLsUsed, int(pt.vlMax)+1)
	for k := 1; k < len(pt.steps); k++ {
		st, sr := &pt.steps[k], &r.Steps[k-1]
		sr.Loops += st.loops
		sr.Dropped += st.dropped
		// The example of the lowest LID, whichever worker found it.
		if st.ex.valid && (sr.exDLID < 0 || st.exDLID < sr.exDLID) {
			sr.Example, sr.exDLID = describe(g, st.ex, st.exDLID), st.exDLID
		}
	}
	for e := range pt.epoch {
		et, er := &pt.epoch[e], &r.Epochs[e]
		er.Drops += et.drops
		if et.ex.valid && (er.exDLID < 0 || et.exDLID < er.exDLID) {
			er.Example, er.exDLID = describe(g, et.ex, et.exDLID), et.exDLID
		}
	}
}

func describe(g *fabric.Graph, f failure, dlid int) string {
	return fmt.Sprintf("%s -> LID %d in step %d: %s at %q", sourceName(g, f), dlid, f.k, f.why, g.SwitchName(f.at))
}

// finish derives the obligations.
func (r *Report) finish() {
	add := func(name string, ok bool, format string, a ...any) {
		r.Obligations = append(r.Obligations, Obligation{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
	}
	add("shape", len(r.Shape) == 0, "%d problems; writes only in write steps, one write per entry, ends at the new tables", len(r.Shape))
	add("old tables", r.OldLoops == 0, "%d pairs loop in the old tables; %d of %d pairs lost (failed links)", r.OldLoops, r.LostPairs, r.Pairs)
	var loops, dropped int64
	exhaustive, union := 0, 0
	states := 0
	stateCycles := 0
	for _, s := range r.Steps {
		loops += s.Loops
		dropped += s.Dropped
		if s.States > 0 {
			exhaustive++
			states += s.States
		} else if s.Kind == Write {
			union++
		}
		if s.StateCycle != nil || s.StateFailures > 0 {
			stateCycles++
		}
	}
	add("loop freedom", loops == 0, "%d pair-steps can loop (every subset of every step's writes)", loops)
	add("delivery", dropped == 0, "%d pair-steps can be dropped; lost pairs may be until repaired", dropped)
	add("static states", stateCycles == 0, "%d write steps checked state by state (%d states, %d unsafe), %d by the union argument alone", exhaustive, states, stateCycles, union)
	cycles := 0
	var drops int64
	for _, e := range r.Epochs {
		if e.Cycle != nil {
			cycles++
		}
		drops += e.Drops
	}
	add("deadlock freedom", cycles == 0, "%d epochs, %d with a dependency cycle among packets in flight (old, new and mixed paths)", len(r.Epochs), cycles)
	add("in-flight delivery", drops == 0, "%d dead ends reachable by packets in flight", drops)
	add("VL limit", r.VLsUsed <= r.VLLimit, "%d VLs used in transition, limit %d", r.VLsUsed, r.VLLimit)
	inOrder := r.ReorderPairs == 0 || r.AllowReorder
	detail := fmt.Sprintf("%d pairs change path, SL or VLs; %d of them can inject while they change", r.ChangedPairs, r.ReorderPairs)
	if r.AllowReorder && r.ReorderPairs > 0 {
		detail += " (reordering allowed)"
	}
	add("in-order delivery", inOrder, "%s", detail)
}

// OK reports whether every obligation holds.
func (r *Report) OK() bool {
	for _, o := range r.Obligations {
		if !o.OK {
			return false
		}
	}
	return true
}

// Err returns nil for a safe plan, else the failed obligations joined,
// wrapping ErrPlanShape for shape problems and ErrUnsafePlan otherwise,
// with the epoch cycles as *cdg.CycleError.
func (r *Report) Err() error {
	var errs []error
	for _, o := range r.Obligations {
		if o.OK {
			continue
		}
		sentinel := ErrUnsafePlan
		if o.Name == "shape" {
			sentinel = ErrPlanShape
			if len(r.Shape) > 0 {
				o.Detail = r.Shape[0]
			}
		}
		errs = append(errs, fmt.Errorf("plan: %s: %s: %w", o.Name, o.Detail, sentinel))
	}
	for _, e := range r.Epochs {
		if e.Cycle != nil {
			errs = append(errs, fmt.Errorf("plan: steps %d-%d: %w", e.From, e.To, e.Cycle))
			break
		}
	}
	return errors.Join(errs...)
}

// String renders the report.
func (r *Report) String() string {
	var b strings.Builder
	verdict := "SAFE"
	if !r.OK() {
		verdict = "UNSAFE"
	}
	fmt.Fprintf(&b, "verdict:        %s\n", verdict)
	fmt.Fprintf(&b, "pairs:          %d connected, %d change path/SL/VL, %d lost by the old tables\n", r.Pairs, r.ChangedPairs, r.LostPairs)
	for _, s := range r.Steps {
		method := "union"
		if s.States > 0 {
			method = fmt.Sprintf("exhaustive, %d states", s.States)
		}
		switch s.Kind {
		case Write:
			fmt.Fprintf(&b, "step %-3d write  %6d entries %5d blocks %4d SLs %3d SL2VL  [%s] %s\n", s.Index, s.Writes, s.Blocks, s.SLWrites, s.SL2VLWrites, method, s.Note)
		case Pause, Resume:
			fmt.Fprintf(&b, "step %-3d %-6s %d pairs  %s\n", s.Index, s.Kind, s.Paused, s.Note)
		default:
			fmt.Fprintf(&b, "step %-3d %-6s %s\n", s.Index, s.Kind, s.Note)
		}
		if s.Loops > 0 || s.Dropped > 0 {
			fmt.Fprintf(&b, "         %d pairs loop, %d dropped; e.g. %s\n", s.Loops, s.Dropped, s.Example)
		}
		if s.StateCycle != nil {
			fmt.Fprintf(&b, "         a state has a dependency cycle: %v\n", s.StateCycle)
		}
	}
	for _, e := range r.Epochs {
		fmt.Fprintf(&b, "epoch steps %d-%d: %d dependencies in flight", e.From, e.To, e.Dependencies)
		if e.Cycle != nil {
			fmt.Fprintf(&b, ", CYCLE of %d channels among packets alive in step %d:\n", len(e.Cycle.Names), e.At)
			for i, n := range e.Cycle.Names {
				if i == 12 {
					fmt.Fprintf(&b, "    … %d more\n", len(e.Cycle.Names)-i)
					break
				}
				fmt.Fprintf(&b, "    %s\n", n)
			}
		} else {
			b.WriteString(", acyclic\n")
		}
		if e.Drops > 0 {
			fmt.Fprintf(&b, "    %d in-flight dead ends, e.g. %s\n", e.Drops, e.Example)
		}
	}
	for _, s := range r.Shape {
		fmt.Fprintf(&b, "shape:          %s\n", s)
	}
	for _, o := range r.Obligations {
		mark := "ok  "
		if !o.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "[%s] %-18s %s\n", mark, o.Name, o.Detail)
	}
	return b.String()
}
