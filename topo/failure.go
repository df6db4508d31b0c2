package topo

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/nuesm/nuesm/fabric"
)

// Failure injection, after the fail-in-place study of Domke's thesis (§2):
// a failure is critical when it disconnects some pair of CAs that was
// connected before it (every path between the two hosts is gone), and
// non-critical otherwise. Fail-in-place operation repairs critical failures
// only and routes around the others.
//
// Connectivity is host connectivity: switches forward, CAs and routers do
// not (a CA with ports in two parts of the fabric does not join them), and
// a cable between two CAs connects just those two. Routers are neither
// hosts nor forwarders here.

// FailureKind says what failed.
type FailureKind string

// Failure kinds.
const (
	LinkFailure   FailureKind = "link"
	SwitchFailure FailureKind = "switch"
)

// Failure injection errors.
var (
	// ErrFailureSpec marks a spec that cannot be satisfied as given: bad
	// fractions or counts, more failures than candidates.
	ErrFailureSpec = errors.New("invalid failure spec")
	// ErrAllCritical marks a fail-in-place run (SkipCritical) that ran out
	// of non-critical candidates before reaching the requested count.
	ErrAllCritical = errors.New("every remaining candidate failure is critical")
)

// FailureSpec says what to fail. Counts and fractions of one kind are
// alternatives (setting both is an error); a fraction is of the candidates
// of the original fabric and is rounded to the nearest count. The zero
// value fails nothing.
type FailureSpec struct {
	Links          int     // cables to fail
	LinkFraction   float64 // or this fraction of the candidate cables, in [0, 1]
	Switches       int     // switches to fail
	SwitchFraction float64 // or this fraction of the switches, in [0, 1]
	Seed           uint64  // seeds the PCG source that orders the candidates

	// SkipCritical is fail-in-place: a critical pick is repaired (not
	// applied, not reported) and the next candidate drawn instead. When no
	// non-critical candidate is left the run fails with ErrAllCritical.
	SkipCritical bool
	// HostLinks makes every cable a candidate (switch-CA, switch-router,
	// CA-CA); by default only switch-to-switch cables fail. Loopback cables
	// never fail (routing ignores them anyway).
	HostLinks bool
}

// Validate rejects negative counts, fractions outside [0, 1] (and NaN),
// and a count and a fraction given for the same kind.
func (s FailureSpec) Validate() error {
	check := func(kind string, n int, frac float64) error {
		if n < 0 {
			return fmt.Errorf("topo: failures: %d %s, expected >= 0: %w", n, kind, ErrFailureSpec)
		}
		if !(frac >= 0 && frac <= 1) {
			return fmt.Errorf("topo: failures: %s fraction %v, expected 0..1: %w", kind, frac, ErrFailureSpec)
		}
		if n > 0 && frac > 0 {
			return fmt.Errorf("topo: failures: both a count (%d) and a fraction (%v) of %s: %w", n, frac, kind, ErrFailureSpec)
		}
		return nil
	}
	if err := check("links", s.Links, s.LinkFraction); err != nil {
		return err
	}
	return check("switches", s.Switches, s.SwitchFraction)
}

// Failure is one applied failure, in the ids of the original fabric.
type Failure struct {
	Kind   FailureKind
	Link   fabric.Link   // the failed cable; both ends fabric.NoPeer for a switch failure
	Switch fabric.NodeID // the failed switch; fabric.NoNode for a link failure
	// Critical: some CA pair connected before this failure is not after it
	// (judged against the state left by the failures before it).
	Critical bool
	// LostCAs holds the original node ids of the CAs this failure cut off
	// from the main part: of the pieces the affected part of the fabric
	// falls into, the one with the most CAs (ties: the one holding the
	// lowest switch node id) is the main part; a CA that loses a partner and
	// has no port in the main part is lost. Empty (never nil) when the
	// failure is not critical.
	LostCAs *roaring.Bitmap
}

// InjectFailures fails links and switches of a valid fabric as spec says,
// one at a time in an order drawn from spec.Seed, judging each against the
// state the earlier ones left, and returns the resulting fabric and the
// failures in the order applied. The same fabric and spec give the same
// result. f is not modified.
//
// The returned fabric is a new, valid fabric: failed cables are unplugged
// at both ends; a failed switch is removed with its cables, so that
// routing engines see only live switches (a dead switch kept in place would
// make every switch failure look like a disconnected switch graph). Every
// other node stays, in the original order, with its GUIDs, LIDs and
// descriptions: node ids shift down past removed switches only, and
// NodeByGUID maps between the two fabrics. CAs whose cables are gone stay
// as uncabled nodes (keeping their LIDs, which Validate and AssignLIDs then
// ignore): they are no terminals, so engines route around them without
// special cases, while the hosts stay listed for traffic patterns and
// reports that must skip exactly the pairs the failures disconnected. A
// line describing the injection is appended to Header.
//
// Link and switch failures are interleaved in a seeded order. A cable
// whose switch has already failed is no longer a candidate, so asking for
// nearly every cable and many switches may run out (ErrFailureSpec). With
// one kind only, a run asking for k failures yields the first k failures
// of a run with the same seed asking for more, so sweeps over the count
// see growing sets of failures.
//
// Cost: judging a candidate is a breadth-first search that usually stops
// early, O(nodes + cables) at worst, plus the same again for each failure
// applied; a fail-in-place run that runs out has judged every candidate
// once.
func InjectFailures(f *fabric.Fabric, spec FailureSpec) (*fabric.Fabric, []Failure, error) {
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	inj, err := newInjector(f, spec.HostLinks)
	if err != nil {
		return nil, nil, err
	}
	nl, err := resolveCount("links", spec.Links, spec.LinkFraction, len(inj.linkPool))
	if err != nil {
		return nil, nil, err
	}
	ns, err := resolveCount("switches", spec.Switches, spec.SwitchFraction, len(inj.switchPool))
	if err != nil {
		return nil, nil, err
	}
	r := rand.New(rand.NewPCG(spec.Seed, pcgStream))
	inj.shuffle(r)
	mode := applyCritical
	if spec.SkipCritical {
		mode = skipCritical
	}
	fails, err := inj.draw(r, nl, ns, mode)
	if err != nil {
		return nil, nil, err
	}
	out, err := inj.fabric(fmt.Sprintf(" nuesm topo: %d link and %d switch failures injected (seed %d)", nl, ns, spec.Seed))
	if err != nil {
		return nil, nil, err
	}
	return out, fails, nil
}

// FailureYears models fail-in-place operation over years (see FailInPlace)
// and returns just the fabrics and the applied failures: fabs[y-1] is the
// fabric after year y, fails[y-1] every failure up to the end of year y.
func FailureYears(f *fabric.Fabric, linkRate, switchRate float64, years int, seed uint64) ([]*fabric.Fabric, [][]Failure, error) {
	ys, err := FailInPlace(f, linkRate, switchRate, years, seed)
	if err != nil {
		return nil, nil, err
	}
	fabs, fails := make([]*fabric.Fabric, len(ys)), make([][]Failure, len(ys))
	for i, y := range ys {
		fabs[i], fails[i] = y.Fabric, y.Failures
	}
	return fabs, fails, nil
}

// Year is the state of a fail-in-place fabric at the end of one year.
type Year struct {
	Fabric *fabric.Fabric
	// Failures lists every applied (non-critical) failure up to the end of
	// the year, in order; it extends the previous year's list.
	Failures []Failure
	// Repaired lists every critical failure event up to the end of the
	// year (Critical set, LostCAs the CAs it would have cut off): fail-in-
	// place repairs those, so they are not in Fabric. Failures and
	// Repaired together are the year's events.
	Repaired []Failure
}

// FailInPlace models fail-in-place operation over years (seed 001 §2):
// each year failure events hit a further linkRate of the original
// switch-to-switch cables and switchRate of the original switches, drawn
// from the live ones in a seeded order. "Repair critical failures only":
// an event that would disconnect a CA pair is repaired (recorded in
// Year.Repaired, the fabric unchanged); the others stay failed. After year
// y, round(y·rate·n) of the n candidates have had an event, so eight years
// at 0.01 hit 8 % of them even on small fabrics where one year's 1 %
// rounds to nothing. In a direct network every switch holds hosts, so
// every switch event is repaired.
//
// Each year's fabric is independent (mutating one does not affect the
// others). With the same arguments the result is the same.
func FailInPlace(f *fabric.Fabric, linkRate, switchRate float64, years int, seed uint64) ([]Year, error) {
	if years < 1 {
		return nil, fmt.Errorf("topo: failure years: %d years, expected >= 1: %w", years, ErrFailureSpec)
	}
	for _, x := range [...]struct {
		name string
		rate float64
	}{{"link", linkRate}, {"switch", switchRate}} {
		if !(x.rate >= 0 && x.rate*float64(years) <= 1) {
			return nil, fmt.Errorf("topo: failure years: %s rate %v over %d years, expected 0 <= rate and rate·years <= 1: %w",
				x.name, x.rate, years, ErrFailureSpec)
		}
	}
	inj, err := newInjector(f, false)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, pcgStream))
	inj.shuffle(r)
	var (
		out    []Year
		all    []Failure
		nl, ns int
	)
	for y := 1; y <= years; y++ {
		tl := int(math.Round(float64(y) * linkRate * float64(len(inj.linkPool))))
		ts := int(math.Round(float64(y) * switchRate * float64(len(inj.switchPool))))
		got, err := inj.draw(r, tl-nl, ts-ns, repairCritical)
		if err != nil {
			return nil, fmt.Errorf("topo: failure years: year %d: %w", y, err)
		}
		nl, ns = tl, ts
		all = append(all, got...)
		fab, err := inj.fabric(fmt.Sprintf(" nuesm topo: fail-in-place year %d of %d: %d link and %d switch failures (seed %d)", y, years, nl, ns, seed))
		if err != nil {
			return nil, err
		}
		out = append(out, Year{Fabric: fab, Failures: append([]Failure(nil), all...), Repaired: append([]Failure(nil), inj.repaired...)})
	}
	return out, nil
}

// pcgStream is the second PCG word; the seed is the first.
const pcgStream = 0x6e7565736d2d6661 // "nuesm-fa"

// resolveCount turns a count or fraction into a count and checks it
// against the candidates available.
func resolveCount(kind string, n int, frac float64, avail int) (int, error) {
	if frac > 0 {
		n = int(math.Round(frac * float64(avail)))
	}
	if n > avail {
		return 0, fmt.Errorf("topo: failures: %d %s requested, only %d candidates: %w", n, kind, avail, ErrFailureSpec)
	}
	return n, nil
}

// How draw treats a critical candidate.
type criticalMode uint8

const (
	applyCritical  criticalMode = iota // apply it (and report it critical)
	skipCritical                       // repair it and draw another in its place
	repairCritical                     // repair it: the event happened, nothing fails
)

// draw makes nl link and ns switch failure events, the kinds interleaved
// in a random order, each the next live candidate of its shuffled pool,
// and returns the failures applied; mode says what a critical one does.
func (inj *injector) draw(r *rand.Rand, nl, ns int, mode criticalMode) ([]Failure, error) {
	kinds := make([]FailureKind, 0, nl+ns)
	for i := 0; i < nl; i++ {
		kinds = append(kinds, LinkFailure)
	}
	for i := 0; i < ns; i++ {
		kinds = append(kinds, SwitchFailure)
	}
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	out := make([]Failure, 0, len(kinds))
	for _, k := range kinds {
		fl, applied, err := inj.next(k, mode)
		if err != nil {
			return nil, err
		}
		if applied {
			out = append(out, fl)
		}
	}
	return out, nil
}

// next draws the next failure of kind k and applies it unless it is
// critical and mode repairs it (recorded in inj.repaired).
func (inj *injector) next(k FailureKind, mode criticalMode) (Failure, bool, error) {
	for {
		var x cand
		if k == LinkFailure {
			if inj.nextLink == len(inj.linkPool) {
				return Failure{}, false, inj.exhausted("link", mode == skipCritical)
			}
			x = cand{cable: inj.linkPool[inj.nextLink], sw: fabric.NoNode}
			inj.nextLink++
			if !inj.cableLive(x.cable) {
				continue
			}
		} else {
			if inj.nextSwitch == len(inj.switchPool) {
				return Failure{}, false, inj.exhausted("switch", mode == skipCritical)
			}
			x = cand{cable: -1, sw: inj.switchPool[inj.nextSwitch]}
			inj.nextSwitch++
		}
		critical, lost, after := inj.evaluate(x)
		fl := Failure{Kind: k, Link: fabric.Link{A: fabric.NoPeer, B: fabric.NoPeer}, Switch: x.sw, Critical: critical, LostCAs: lost}
		if x.cable >= 0 {
			fl.Link = inj.cables[x.cable]
		}
		if critical && mode != applyCritical {
			// Repaired. Every later state of a fail-in-place run connects
			// the same CA pairs, so this candidate stays critical for good.
			inj.repaired = append(inj.repaired, fl)
			if mode == repairCritical {
				return fl, false, nil
			}
			continue
		}
		inj.apply(x, critical, after)
		return fl, true, nil
	}
}

func (inj *injector) exhausted(kind string, skip bool) error {
	if skip {
		return fmt.Errorf("topo: failures: no non-critical %s failure left after %d link and %d switch failures: %w",
			kind, inj.doneLinks, inj.doneSwitches, ErrAllCritical)
	}
	return fmt.Errorf("topo: failures: no live %s left to fail after %d link and %d switch failures: %w",
		kind, inj.doneLinks, inj.doneSwitches, ErrFailureSpec)
}
