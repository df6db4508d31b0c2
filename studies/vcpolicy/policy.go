// Package vcpolicy describes virtual-channel (VC) assignment policies as
// data: a policy says, for every hop of a packet, which VC it takes, from
// counters the packet carries (hops so far, local and global hops, hops in
// the current group, the misroute phase bit). The policies of the seed
// papers are presets: the RSI rule of seed 000 §IV-B (Fig. 5), a
// phase-based rule, Gunther's total-hop rule (seed 000 ref. [7]), and the
// Dragonfly and flattened-butterfly rules of seed 002 §V-E.
//
// A policy only assigns VCs; whether the result is deadlock-free depends
// on the routing too and is judged by package vcaudit. The package is
// deterministic, does no I/O, and its values are safe for concurrent use.
package vcpolicy

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/flitsim"
)

// Counter is what a rule counts to pick a VC.
type Counter int

// Counters. All counts are taken before the hop being assigned.
const (
	Zero        Counter = iota // always 0
	Hops                       // hops taken (Gunther's total-hop rule)
	LocalHops                  // hops inside groups taken
	GlobalHops                 // hops between groups taken
	HopsInGroup                // hops taken since entering the current group (0 at the source)
	Phase                      // the phase bit on this hop: 1 from the misroute hop on
	IntoDest                   // 1 if the hop ends in the destination's group
)

var counterNames = []string{"zero", "hops", "local-hops", "global-hops", "hops-in-group", "phase", "into-dest"}

func (c Counter) String() string {
	if c >= 0 && int(c) < len(counterNames) {
		return counterNames[c]
	}
	return "Counter(" + strconv.Itoa(int(c)) + ")"
}

// Hop is what a policy sees of one hop of a packet: whether the channel
// joins two groups, the hops taken before it (all, local, global, in the
// current group), the phase bit (1 once the packet has misrouted, this hop
// included) and whether the hop ends in the destination's group. It is
// the simulator's flitsim.VCHop, so the VC rules serve flitsim unchanged.
type Hop = flitsim.VCHop

// count is the value of counter c on hop h.
func count(h Hop, c Counter) int {
	switch c {
	case Hops:
		return h.Hops
	case LocalHops:
		return h.LocalHops
	case GlobalHops:
		return h.GlobalHops
	case HopsInGroup:
		return h.HopsInGroup
	case Phase:
		return h.Phase
	case IntoDest:
		if h.IntoDest {
			return 1
		}
	}
	return 0
}

// Rule gives VC = Offset + the counter's value.
type Rule struct {
	Count  Counter
	Offset int
}

// Policy assigns VCs to the hops of local (intra-group) and global
// (inter-group) channels. A topology without groups has local hops only.
type Policy struct {
	Name   string
	Doc    string // one line: what it is and where it comes from
	VCs    int    // VCs per channel, >= 1
	Local  Rule
	Global Rule
	// Clamp makes a hop whose rule asks for VC >= VCs use VCs−1 (the top
	// VC saturates); otherwise VC returns ErrOverflow for it.
	Clamp bool
}

// ErrOverflow is returned by VC when a hop needs a VC the policy lacks.
var ErrOverflow = errors.New("vcpolicy: hop needs more VCs than the policy has")

// Validate checks the policy.
func (p Policy) Validate() error {
	if p.VCs < 1 || p.VCs > 16 {
		return fmt.Errorf("vcpolicy: %s: %d VCs, expected 1..16", p.Name, p.VCs)
	}
	for _, r := range []Rule{p.Local, p.Global} {
		if r.Count < Zero || r.Count > IntoDest || r.Offset < 0 || r.Offset >= p.VCs {
			return fmt.Errorf("vcpolicy: %s: rule %v+%d outside 0..%d VCs", p.Name, r.Count, r.Offset, p.VCs)
		}
	}
	return nil
}

// Want returns the VC the rule asks for, before clamping.
func (p Policy) Want(h Hop) int {
	r := p.Local
	if h.Global {
		r = p.Global
	}
	return r.Offset + count(h, r.Count)
}

// VC returns the VC of hop h: Want(h), clamped to VCs−1 when Clamp is
// set; ErrOverflow (with the clamped VC) otherwise.
func (p Policy) VC(h Hop) (int, error) {
	v := p.Want(h)
	if v < p.VCs {
		return v, nil
	}
	if p.Clamp {
		return p.VCs - 1, nil
	}
	return p.VCs - 1, fmt.Errorf("%w: %s wants VC %d of %d", ErrOverflow, p.Name, v, p.VCs)
}

// String prints the policy in the syntax Parse reads.
func (p Policy) String() string {
	s := fmt.Sprintf("vcs=%d,local=%s", p.VCs, ruleString(p.Local))
	s += ",global=" + ruleString(p.Global)
	if p.Clamp {
		s += ",clamp"
	}
	return s
}

func ruleString(r Rule) string {
	if r.Offset == 0 {
		return r.Count.String()
	}
	return fmt.Sprintf("%s+%d", r.Count, r.Offset)
}

// Presets returns the named policies, sorted by name (HopsPolicy gives
// the total-hop rule for any VC count).
func Presets() []Policy {
	ps := []Policy{
		{Name: "one-vc", Doc: "a single VC for every hop (the baseline without deadlock avoidance)",
			VCs: 1, Local: Rule{Count: Zero}, Global: Rule{Count: Zero}},
		{Name: "rsi-paper", Doc: "seed 000 §IV-B, Fig. 5: local VC = hops taken in the current super node, global VC = global hops taken; 2 VCs",
			VCs: 2, Local: Rule{Count: HopsInGroup}, Global: Rule{Count: GlobalHops}},
		{Name: "phase", Doc: "phase-based (SEEDS.md §000): VC = the LAR phase bit, 0 before the misroute and 1 from it on; 2 VCs",
			VCs: 2, Local: Rule{Count: Phase}, Global: Rule{Count: Phase}},
		{Name: "global-hops", Doc: "VC = global hops taken, for every hop (Dragonfly-style ascending VCs per group crossed)",
			VCs: 3, Local: Rule{Count: GlobalHops}, Global: Rule{Count: GlobalHops}},
		{Name: "df-2vc", Doc: "seed 002 §V-E, our reading: VC 1 from the hop that enters the destination group on, VC 0 before; 2 VCs",
			VCs: 2, Local: Rule{Count: IntoDest}, Global: Rule{Count: IntoDest}},
		{Name: "df-per-class", Doc: "seed 002 §V-E, other reading: k-th local hop on local VC k, k-th global hop on global VC k; 2 VCs",
			VCs: 2, Local: Rule{Count: LocalHops}, Global: Rule{Count: GlobalHops}},
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// HopsPolicy is Gunther's total-hop rule with n VCs (seed 000 ref. [7];
// seed 002 §V-E: n VCs for n-dimensional flattened butterflies): VC =
// hops taken, saturating at n−1.
func HopsPolicy(n int) Policy {
	return Policy{Name: fmt.Sprintf("hops:%d", n), Doc: fmt.Sprintf("Gunther total-hop rule: VC = hops taken, %d VCs (top VC saturates)", n),
		VCs: n, Local: Rule{Count: Hops}, Global: Rule{Count: Hops}, Clamp: true}
}

// Parse reads a preset name, "hops:N", or a spec
// "vcs=N,local=COUNTER[+K],global=COUNTER[+K][,clamp]".
func Parse(s string) (Policy, error) {
	s = strings.TrimSpace(s)
	for _, p := range Presets() {
		if p.Name == s {
			return p, nil
		}
	}
	if n, ok := strings.CutPrefix(s, "hops:"); ok {
		v, err := strconv.Atoi(n)
		if err != nil {
			return Policy{}, fmt.Errorf("vcpolicy: %q: expected hops:N", s)
		}
		p := HopsPolicy(v)
		return p, p.Validate()
	}
	if !strings.Contains(s, "=") {
		var names []string
		for _, p := range Presets() {
			names = append(names, p.Name)
		}
		return Policy{}, fmt.Errorf("vcpolicy: unknown policy %q, expected one of %s, hops:N or vcs=N,local=…,global=…", s, strings.Join(names, ", "))
	}
	p := Policy{Name: s, Doc: "custom"}
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		seen[k] = true
		var err error
		switch k {
		case "vcs":
			p.VCs, err = strconv.Atoi(v)
		case "local":
			p.Local, err = parseRule(v)
		case "global":
			p.Global, err = parseRule(v)
		case "clamp":
			p.Clamp = true
		default:
			err = fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return Policy{}, fmt.Errorf("vcpolicy: %q: %v", s, err)
		}
	}
	if !seen["vcs"] || !seen["local"] || !seen["global"] {
		return Policy{}, fmt.Errorf("vcpolicy: %q: needs vcs=, local= and global=", s)
	}
	return p, p.Validate()
}

func parseRule(s string) (Rule, error) {
	name, off, hasOff := strings.Cut(s, "+")
	r := Rule{}
	found := false
	for i, n := range counterNames {
		if n == name {
			r.Count, found = Counter(i), true
		}
	}
	if !found {
		return r, fmt.Errorf("counter %q, expected one of %s", name, strings.Join(counterNames, ", "))
	}
	if hasOff {
		v, err := strconv.Atoi(off)
		if err != nil {
			return r, fmt.Errorf("offset %q", off)
		}
		r.Offset = v
	}
	return r, nil
}
