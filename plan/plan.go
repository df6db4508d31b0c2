package plan

import (
	"fmt"
	"sort"

	"github.com/nuesm/nuesm/lft"
)

// StepKind says what a step does.
type StepKind uint8

const (
	// Write applies the step's LFT, SL and SL2VL writes while traffic
	// flows. The writes land in any order, each 64-entry LFT block
	// atomically, interleaved arbitrarily with packets; the next step
	// starts when every write of this one has been acknowledged.
	Write StepKind = iota
	// Barrier writes nothing and waits until every packet injected before
	// it started has left the fabric: delivered, or discarded by the
	// switches' packet lifetime limit (IBA SwitchLifeTime / HOQLife),
	// which bounds the wait. Injection goes on.
	Barrier
	// Pause stops the listed pairs from injecting and waits until the
	// fabric holds none of their packets (a drain phase begins).
	Pause
	// Resume lets the pairs of the preceding Pause inject again (the
	// drain phase ends).
	Resume
)

var kindNames = [...]string{"write", "barrier", "pause", "resume"}

func (k StepKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// LFTWrite sets one LFT entry: switch's out port for LID, from Old to New.
type LFTWrite struct {
	Switch int32
	LID    int32
	Old    uint8
	New    uint8
}

// Paused names the pairs a Pause stops: the terminals attached to the
// Sources switches sending to destination LID DLID. Pairs counts them
// (source ports × LIDs) for reports.
type Paused struct {
	DLID    int32
	Sources []int32
	Pairs   int64
}

// Step is one step of a plan.
type Step struct {
	Kind  StepKind
	Note  string // what the step is for
	LFT   []LFTWrite
	SL    []lft.SLChange   // path SLs the sources start using during the step
	SL2VL []lft.SL2VLDelta // SL2VL tables written (Table holds the new table)
	// NewDefault is the default SL2VL map written when SL2VL lists switch -1.
	NewDefault [lft.NumSLs]uint8
	Paused     []Paused // Pause and Resume: the pairs stopped or let go
}

// Blocks returns the number of distinct (switch, 64-entry block) pairs
// the step writes: the LinearForwardingTable MADs it takes.
func (s *Step) Blocks() int {
	seen := map[int64]bool{}
	for _, w := range s.LFT {
		seen[int64(w.Switch)<<32|int64(lft.Block(int(w.LID)))] = true
	}
	return len(seen)
}

// PausedPairs sums the pairs the step pauses or resumes.
func (s *Step) PausedPairs() int64 {
	var n int64
	for _, p := range s.Paused {
		n += p.Pairs
	}
	return n
}

// Strategy is how a plan moves one destination LID from old to new.
type Strategy uint8

const (
	// Unchanged: nothing to write.
	Unchanged Strategy = iota
	// Dark: only entries no terminal's path uses change (or SLs of
	// switches without terminals); ordered writes, no path changes.
	Dark
	// InPlace: ordered writes (reverse topological order of the new
	// tree), the SL unchanged; old, new and mixed paths share the VLs.
	InPlace
	// SLLast: ordered writes while the sources keep the old SL; after a
	// barrier the sources switch to the new SL.
	SLLast
	// SLFirst: the sources switch to the new SL first; after a barrier
	// the ordered writes.
	SLFirst
	// FreshSL: the sources switch to a transition SL (its own VL), barrier,
	// ordered writes, barrier, the new SL: old, new and mixed paths of the
	// destination are isolated from the rest of the traffic.
	FreshSL
	// Drained: the pairs whose path or SL changes are paused, drained,
	// rewritten and resumed (two-phase drain).
	Drained
	// Blackout: the changed entries are unrouted first (the switches drop
	// the destination's packets where they would have taken a mixed
	// path), then written (BuildLive's last resort, Plan.Blackout).
	Blackout
)

var strategyNames = [...]string{"unchanged", "dark", "in-place", "sl-last", "sl-first", "fresh-sl", "drained", "blackout"}

func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("strategy(%d)", s)
}

// DestPlan records how the plan treats one destination LID.
type DestPlan struct {
	DLID         int32    `json:"dlid"`
	Strategy     Strategy `json:"strategy"`
	TransitionSL int8     `json:"transition_sl"` // FreshSL: the transition SL; -1 otherwise
	Levels       int      `json:"levels"`        // ordered write levels
	Writes       int      `json:"lft_writes"`    // LFT entries written
	ChangedPairs int64    `json:"changed_pairs"` // pairs whose path, SL or VLs change
	// Why holds, for Drained in relaxed mode, the cycle that ruled out
	// every live strategy, shortened; for strict mode "in-order".
	Why string `json:"why,omitempty"`
}

// Plan is a consistent update from one routing to another: steps applied
// in order. Build makes one; Verify proves one safe. A Plan holds no
// reference to the routings; LFTWrite.Old and SLChange.Old let Verify
// check it against them.
type Plan struct {
	Steps []Step
	Dests []DestPlan // changed destinations, by LID (Build only)

	// Blackout lists destination LIDs whose pairs the plan stops
	// delivering on purpose: it unroutes them (their changed entries lead
	// nowhere until a later plan writes them), which stops their traffic
	// at the switches where a subnet manager cannot stop the hosts.
	// Verify lets their pairs be dropped in any state, never loop, and
	// counts their dependencies.
	Blackout []int32

	// AllowReorder is set when the plan was built without the in-order
	// guarantee for pairs whose path changes (Options.AllowReorder).
	AllowReorder bool
	MaxVLs       int // the VL limit it was built for

	// Analysis of the two routings, filled by Build.
	Pairs        int64 // (source port, destination LID) pairs the fabric connects
	ChangedPairs int64 // pairs whose path, SL or VLs change
	LostPairs    int64 // pairs the old tables no longer deliver on this fabric (failed links)
}

// Metrics summarise a plan.
type Metrics struct {
	Steps        int            `json:"steps"`
	WriteSteps   int            `json:"write_steps"`
	Barriers     int            `json:"barriers"`
	DrainPhases  int            `json:"drain_phases"` // Pause…Resume brackets
	Writes       int            `json:"lft_writes"`
	Blocks       int            `json:"lft_blocks"` // block MADs summed over steps (a block may be written in several steps)
	SLWrites     int            `json:"sl_writes"`
	SL2VLWrites  int            `json:"sl2vl_writes"`
	PausedPairs  int64          `json:"paused_pairs"`
	Pairs        int64          `json:"pairs"`
	ChangedPairs int64          `json:"changed_pairs"`
	LostPairs    int64          `json:"lost_pairs"`
	Strategies   map[string]int `json:"strategies,omitempty"`
	MaxStepBlock int            `json:"max_blocks_per_step"`
}

// Metrics counts steps, writes, blocks and drain phases.
func (p *Plan) Metrics() Metrics {
	m := Metrics{Steps: len(p.Steps), Pairs: p.Pairs, ChangedPairs: p.ChangedPairs, LostPairs: p.LostPairs}
	for i := range p.Steps {
		s := &p.Steps[i]
		switch s.Kind {
		case Write:
			m.WriteSteps++
		case Barrier:
			m.Barriers++
		case Pause:
			m.DrainPhases++
			m.PausedPairs += s.PausedPairs()
		}
		b := s.Blocks()
		m.Writes += len(s.LFT)
		m.Blocks += b
		m.MaxStepBlock = max(m.MaxStepBlock, b)
		m.SLWrites += len(s.SL)
		m.SL2VLWrites += len(s.SL2VL)
	}
	if len(p.Dests) > 0 {
		m.Strategies = map[string]int{}
		for _, d := range p.Dests {
			m.Strategies[d.Strategy.String()]++
		}
	}
	return m
}

// stepBuilder accumulates writes per step while a plan is assembled.
type stepBuilder struct {
	steps []Step
}

func (b *stepBuilder) add(s Step) int {
	b.steps = append(b.steps, s)
	return len(b.steps) - 1
}

// finish sorts every step's writes and drops Write steps with nothing in
// them.
func (b *stepBuilder) finish() []Step {
	var out []Step
	for _, s := range b.steps {
		if s.Kind == Write && len(s.LFT) == 0 && len(s.SL) == 0 && len(s.SL2VL) == 0 {
			continue
		}
		sort.Slice(s.LFT, func(i, j int) bool {
			a, c := s.LFT[i], s.LFT[j]
			if a.Switch != c.Switch {
				return a.Switch < c.Switch
			}
			return a.LID < c.LID
		})
		sort.Slice(s.SL, func(i, j int) bool {
			a, c := s.SL[i], s.SL[j]
			if a.DLID != c.DLID {
				return a.DLID < c.DLID
			}
			if a.Src != c.Src {
				return a.Src < c.Src
			}
			return a.SLID < c.SLID
		})
		sort.Slice(s.Paused, func(i, j int) bool { return s.Paused[i].DLID < s.Paused[j].DLID })
		out = append(out, s)
	}
	// Barriers with nothing before them, or next to another barrier, do
	// nothing.
	var clean []Step
	for i, s := range out {
		if s.Kind == Barrier && (len(clean) == 0 || clean[len(clean)-1].Kind == Barrier || i == len(out)-1) {
			continue
		}
		clean = append(clean, s)
	}
	return clean
}

// OneShot returns the plan an unordered subnet manager follows: every
// changed LFT block, SL and SL2VL table written in one step, in any order
// (OpenSM's behaviour). Verify shows when it is unsafe.
func OneShot(d *lft.Delta) *Plan {
	s := Step{Kind: Write, Note: "all changes at once (unordered)", NewDefault: d.NewDefault}
	for _, sw := range d.Switches {
		for _, e := range sw.Entries {
			s.LFT = append(s.LFT, LFTWrite{Switch: sw.Switch, LID: int32(e.LID), Old: e.Old, New: e.New})
		}
	}
	s.SL = append(s.SL, d.SL...)
	s.SL2VL = append(s.SL2VL, d.SL2VL...)
	p := &Plan{}
	if len(s.LFT)+len(s.SL)+len(s.SL2VL) > 0 {
		p.Steps = []Step{s}
	}
	return p
}
