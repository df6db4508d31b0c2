package plan

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/nuesm/nuesm/lft"
)

// DefaultMaxVLs is the VL limit when Options.MaxVLs is 0: the eight data
// VLs most InfiniBand switches offer (routing.DefaultMaxVLs).
const DefaultMaxVLs = 8

// DefaultMaxExhaustive is Options.MaxExhaustive's default: steps of up to
// 8 write units (256 states) are checked state by state.
const DefaultMaxExhaustive = 8

// Options configure Build and Verify. The zero value is valid: the
// strongest guarantees (in-order delivery for every pair), drain phases
// allowed, eight VLs.
type Options struct {
	// MaxVLs is the number of data VLs the fabric offers during the
	// transition, 1..15 (0 = DefaultMaxVLs). Transition SLs must map to
	// VLs below it.
	MaxVLs int
	// AllowReorder gives up in-order delivery for pairs whose path or SL
	// changes (their transport tolerates it, e.g. RC retransmits): such
	// destinations move without pausing whenever loop and deadlock
	// freedom can be proven. Pairs whose path does not change stay in
	// order either way. Without it every changed pair is paused across
	// its change.
	AllowReorder bool
	// NoPause forbids Pause/Resume steps. When a destination needs one,
	// Build returns the plan with the drain phase and a *DrainError.
	NoPause bool
	// SwitchDelivery also proves that every switch's own packets (LID-
	// routed management traffic, VL15) are delivered without loops in
	// every state; their dependencies are not counted, as in cdg.
	SwitchDelivery bool
	// MaxExhaustive bounds the write units (LFT blocks, per-destination
	// SL changes, SL2VL tables) of a step that Verify checks state by
	// state, all 2^n subsets; larger steps are proven by the union
	// argument alone. 0 = DefaultMaxExhaustive, < 0 = never.
	MaxExhaustive int
	// Workers bounds the goroutines (0 = GOMAXPROCS). Results do not
	// depend on it.
	Workers int
	// levelBarriers puts a barrier after each level of ordered LFT
	// writes (BuildLive's second try, see there).
	levelBarriers bool
}

// Validate rejects out-of-range values.
func (o Options) Validate() error {
	if o.MaxVLs < 0 || o.MaxVLs > lft.MaxVLs {
		return fmt.Errorf("plan: max VLs %d, expected 1..%d", o.MaxVLs, lft.MaxVLs)
	}
	if o.MaxExhaustive > 20 {
		return fmt.Errorf("plan: exhaustive limit %d would enumerate 2^%d states, expected at most 20", o.MaxExhaustive, o.MaxExhaustive)
	}
	if o.Workers < 0 {
		return fmt.Errorf("plan: %d workers, expected >= 0", o.Workers)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MaxVLs == 0 {
		o.MaxVLs = DefaultMaxVLs
	}
	if o.MaxExhaustive == 0 {
		o.MaxExhaustive = DefaultMaxExhaustive
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Errors callers branch on.
var (
	// ErrNeedsDrain is wrapped by DrainError.
	ErrNeedsDrain = errors.New("no live update plan: destinations need a drain phase")
	// ErrUnsafeTables marks old or new tables that are unsafe on their
	// own (a loop, a dependency cycle, undelivered pairs in the new
	// tables): no plan between them can be safe.
	ErrUnsafeTables = errors.New("tables unsafe on their own")
	// ErrPlanShape marks a plan Verify cannot judge: writes in a barrier,
	// an entry written twice, an unmatched Pause, a plan that does not
	// end at the new tables.
	ErrPlanShape = errors.New("malformed plan")
	// ErrUnsafePlan is wrapped by Report.Err for a plan with an unsafe
	// state.
	ErrUnsafePlan = errors.New("update plan is unsafe")
)

// DrainError reports destinations that no live strategy moves safely
// within the VL limit (or, without AllowReorder, whose changed pairs need
// pausing for in-order delivery) when Options.NoPause forbids drain
// phases. Fallback is the safe plan with the drain phase: stop injection
// of the listed pairs, wait until they drained, write, resume.
type DrainError struct {
	Dests    []int32 // destination LIDs that need the drain phase
	Pairs    int64   // pairs the drain phase pauses
	Reason   string  // why the first of them could not move live
	Fallback *Plan
}

func (e *DrainError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %d destination LIDs need a drain phase (%d pairs paused)", len(e.Dests), e.Pairs)
	for i, d := range e.Dests {
		if i == 8 {
			fmt.Fprintf(&b, " … (%d more)", len(e.Dests)-i)
			break
		}
		if i == 0 {
			b.WriteString(": LID ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, d)
	}
	if e.Reason != "" {
		b.WriteString("; first: " + e.Reason)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNeedsDrain) true.
func (e *DrainError) Is(target error) bool { return target == ErrNeedsDrain }
