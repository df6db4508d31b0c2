package fabric_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// Node ids of validBase.
const (
	vS0 fabric.NodeID = iota // switch 0x10, 8 ports
	vS1                      // switch 0x11, 8 ports
	vH0                      // CA 0x20, 2 ports, port 1 GUID = node GUID (ConnectX-4 style)
	vH1                      // CA 0x21, 1 port
)

// validBase is a valid fabric for Validate's table to break: two switches
// joined by two parallel cables, one CA on each; h0's port 2 is uncabled
// but has a GUID. LIDs: s0 1, s1 2, h0 3, h1 4.
func validBase(tb testing.TB) *fabric.Fabric {
	tb.Helper()
	b := fabric.NewBuilder()
	s0 := mustAdd(tb, b, fabric.Switch, 0x10, 8, "s0")
	s1 := mustAdd(tb, b, fabric.Switch, 0x11, 8, "s1")
	h0 := mustAdd(tb, b, fabric.CA, 0x20, 2, "h0")
	h1 := mustAdd(tb, b, fabric.CA, 0x21, 1, "h1")
	b.Node(h0).Ports[1].GUID = 0x20
	b.Node(h0).Ports[2].GUID = 0x22
	b.Node(h1).Ports[1].GUID = 0x31
	mustConnect(tb, b, s0, 1, s1, 1)
	mustConnect(tb, b, s0, 2, s1, 2)
	mustConnect(tb, b, h0, 1, s0, 3)
	mustConnect(tb, b, h1, 1, s1, 3)
	f := b.Fabric()
	if err := f.AssignLIDs(0); err != nil {
		tb.Fatal(err)
	}
	for i, want := range []uint16{1, 2} {
		if got := f.Nodes[i].Ports[0].LID; got != want {
			tb.Fatalf("base: switch %d LID %d, want %d", i, got, want)
		}
	}
	if f.Nodes[vH0].Ports[1].LID != 3 || f.Nodes[vH1].Ports[1].LID != 4 {
		tb.Fatal("base: CA LIDs not 3 and 4")
	}
	mustValid(tb, f)
	return f
}

// wantProblem is one expected Validate finding.
type wantProblem struct {
	err  error
	node fabric.NodeID
	port int
}

// validateCase breaks validBase (mutate) and lists what Validate must
// find (none: valid).
type validateCase struct {
	name   string
	mutate func(f *fabric.Fabric)
	want   []wantProblem
}

// vport is port p of node n.
func vport(f *fabric.Fabric, n fabric.NodeID, p uint8) *fabric.Port { return &f.Nodes[n].Ports[p] }

func TestValidate(t *testing.T) {
	for _, g := range []struct {
		name  string
		cases []validateCase
	}{{"valid", validCases()}, {"cabling", cablingCases()}, {"guids", guidCases()}, {"lids", lidCases()}, {"lmc", lmcCases()}} {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) { checkValidate(t, c) })
			}
		})
	}
}

// checkValidate runs Validate and Compile on validBase broken by c.
func checkValidate(t *testing.T, c validateCase) {
	f := validBase(t)
	c.mutate(f)
	err := f.Validate()
	if len(c.want) == 0 {
		if err != nil {
			t.Fatalf("Validate = %v, want nil", err)
		}
		return
	}
	var ve *fabric.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v, want a *ValidationError", err)
	}
	checkProblems(t, ve.Problems, c.want)
	for _, w := range c.want {
		if !errors.Is(err, w.err) {
			t.Errorf("errors.Is(err, %v) = false", w.err)
		}
	}
	// Compile refuses what Validate rejects.
	if _, cerr := fabric.Compile(f); !errors.As(cerr, &ve) {
		t.Errorf("Compile = %v, want the validation error", cerr)
	}
}

// validCases are fabrics Validate accepts: LID 0, the top LMC block, a
// CA port with its node's GUID, LIDs of uncabled ports.
func validCases() []validateCase {
	return []validateCase{
		{"valid", func(*fabric.Fabric) {}, nil},
		{"CA port GUID equals its node GUID", func(f *fabric.Fabric) {
			vport(f, vH1, 1).GUID = 0x21
		}, nil},
		{"highest LMC 7 block", func(f *fabric.Fabric) {
			p := vport(f, vH1, 1)
			p.LID, p.LMC = 0xBF80, 7
		}, nil},
		{"LID 0 is unassigned", func(f *fabric.Fabric) {
			vport(f, vH1, 1).LID = 0
			vport(f, vS1, 0).LID = 0
		}, nil},
		{"uncabled ports' LIDs are not checked", func(f *fabric.Fabric) {
			vport(f, vH0, 2).LID = 1
		}, nil},
	}
}

// cablingCases break cables: asymmetric, to unknown nodes or ports,
// twice, to itself, on port 0.
func cablingCases() []validateCase {
	return []validateCase{
		{"asymmetric peer", func(f *fabric.Fabric) {
			vport(f, vS1, 3).Peer = fabric.NoPeer
		}, []wantProblem{{fabric.ErrAsymmetric, vH1, 1}}},
		{"cabled to an unknown node", func(f *fabric.Fabric) {
			vport(f, vS0, 6).Peer = pr(99, 1)
		}, []wantProblem{{fabric.ErrAsymmetric, vS0, 6}}},
		{"port cabled twice", func(f *fabric.Fabric) {
			vport(f, vS0, 4).Peer = pr(vS1, 1) // s1[1] is cabled to s0[1]
		}, []wantProblem{{fabric.ErrCabledTwice, vS0, 4}}},
		{"port cabled twice, far end dangling", func(f *fabric.Fabric) {
			vport(f, vS0, 6).Peer = pr(vS1, 5)
			vport(f, vS1, 5).Peer = pr(99, 1)
		}, []wantProblem{{fabric.ErrCabledTwice, vS0, 6}, {fabric.ErrAsymmetric, vS1, 5}}},
		{"port cabled to itself", func(f *fabric.Fabric) {
			vport(f, vS0, 5).Peer = pr(vS0, 5)
		}, []wantProblem{{fabric.ErrCabledTwice, vS0, 5}}},
		{"CA port cabled to itself", func(f *fabric.Fabric) {
			vport(f, vH0, 2).Peer = pr(vH0, 2)
		}, []wantProblem{{fabric.ErrCabledTwice, vH0, 2}}},
		{"port beyond the peer's port count", func(f *fabric.Fabric) {
			vport(f, vH1, 1).Peer = pr(vS1, 9)
		}, []wantProblem{{fabric.ErrPortRange, vH1, 1}, {fabric.ErrCabledTwice, vS1, 3}}},
		{"cabled port 0", func(f *fabric.Fabric) {
			vport(f, vS0, 0).Peer = pr(vS1, 4)
			vport(f, vS1, 4).Peer = pr(vS0, 0)
		}, []wantProblem{{fabric.ErrPortRange, vS0, 0}, {fabric.ErrPortRange, vS1, 4}}},
	}
}

// guidCases break node kinds and ports, node and port GUIDs.
func guidCases() []validateCase {
	return []validateCase{
		{"duplicate node GUID", func(f *fabric.Fabric) {
			f.Nodes[vH1].GUID = 0x20
		}, []wantProblem{{fabric.ErrDuplicateGUID, vH1, -1}}},
		{"node GUID 0", func(f *fabric.Fabric) {
			f.Nodes[vH1].GUID = 0
		}, []wantProblem{{fabric.ErrGUID, vH1, -1}}},
		{"unknown kind", func(f *fabric.Fabric) {
			f.Nodes[vH1].Kind = 7
		}, []wantProblem{{fabric.ErrKind, vH1, -1}}},
		{"node without ports", func(f *fabric.Fabric) {
			f.Nodes[vH1].Ports = nil
		}, []wantProblem{{fabric.ErrPortRange, vH1, -1}, {fabric.ErrPortRange, vS1, 3}}},
		{"switch without ports", func(f *fabric.Fabric) {
			f.Nodes[vS1].Ports = nil
		}, []wantProblem{
			{fabric.ErrPortRange, vS1, -1},
			{fabric.ErrPortRange, vS0, 1}, {fabric.ErrPortRange, vS0, 2}, {fabric.ErrPortRange, vH1, 1},
		}},
		{"duplicate port GUID", func(f *fabric.Fabric) {
			vport(f, vS1, 0).GUID = 0x31 // h1[1]'s
		}, []wantProblem{{fabric.ErrDuplicateGUID, vH1, 1}}},
		{"duplicate port GUID on an uncabled port", func(f *fabric.Fabric) {
			vport(f, vH1, 1).GUID = 0x22 // h0[2]'s, uncabled
		}, []wantProblem{{fabric.ErrDuplicateGUID, vH1, 1}}},
		{"two ports with their node's GUID", func(f *fabric.Fabric) {
			vport(f, vH0, 2).GUID = 0x20
		}, []wantProblem{{fabric.ErrDuplicateGUID, vH0, 2}}},
		{"port GUID is another node's GUID", func(f *fabric.Fabric) {
			vport(f, vH1, 1).GUID = 0x10
		}, []wantProblem{{fabric.ErrDuplicateGUID, vH1, 1}}},
		{"switch port 0 GUID is another node's GUID", func(f *fabric.Fabric) {
			vport(f, vS1, 0).GUID = 0x20
		}, []wantProblem{{fabric.ErrDuplicateGUID, vS1, 0}}},
	}
}

// lidCases: duplicate LIDs, overlapping and adjacent LMC ranges, LIDs
// beyond the unicast range.
func lidCases() []validateCase {
	return []validateCase{
		{"duplicate LID", func(f *fabric.Fabric) {
			vport(f, vH1, 1).LID = 3
		}, []wantProblem{{fabric.ErrDuplicateLID, vH1, 1}}},
		{"duplicate LID reported at the higher node id", func(f *fabric.Fabric) {
			vport(f, vS0, 0).LID = 4
		}, []wantProblem{{fabric.ErrDuplicateLID, vH1, 1}}},
		{"two switches share a LID", func(f *fabric.Fabric) {
			vport(f, vS1, 0).LID = 1
		}, []wantProblem{{fabric.ErrDuplicateLID, vS1, 0}}},
		{"overlapping LMC ranges", func(f *fabric.Fabric) {
			p := vport(f, vH0, 1)
			p.LID, p.LMC = 8, 2 // 8..11
			vport(f, vH1, 1).LID = 10
		}, []wantProblem{{fabric.ErrDuplicateLID, vH1, 1}}},
		{"same base LID, wider range later", func(f *fabric.Fabric) {
			vport(f, vH0, 1).LID = 12
			p := vport(f, vH1, 1)
			p.LID, p.LMC = 12, 2
		}, []wantProblem{{fabric.ErrDuplicateLID, vH1, 1}}},
		{"two LIDs inside one LMC range", func(f *fabric.Fabric) {
			p := vport(f, vH0, 1)
			p.LID, p.LMC = 8, 2 // 8..11
			vport(f, vH1, 1).LID = 9
			vport(f, vS1, 0).LID = 10
		}, []wantProblem{{fabric.ErrDuplicateLID, vH1, 1}, {fabric.ErrDuplicateLID, vS1, 0}}},
		{"adjacent LMC ranges", func(f *fabric.Fabric) {
			p := vport(f, vH0, 1)
			p.LID, p.LMC = 8, 2 // 8..11
			vport(f, vH1, 1).LID = 12
			vport(f, vS1, 0).LID = 7
		}, nil},
		{"LID beyond 0xBFFF", func(f *fabric.Fabric) {
			vport(f, vH1, 1).LID = 0xC000
		}, []wantProblem{{fabric.ErrLIDRange, vH1, 1}}},
		{"switch LID beyond 0xBFFF", func(f *fabric.Fabric) {
			vport(f, vS0, 0).LID = 0xFFFF
		}, []wantProblem{{fabric.ErrLIDRange, vS0, 0}}},
		{"LMC range beyond 0xBFFF", func(f *fabric.Fabric) {
			p := vport(f, vH1, 1)
			p.LID, p.LMC = 0xBFF0, 5 // aligned to 16 but not to 32; the range check comes first
		}, []wantProblem{{fabric.ErrLIDRange, vH1, 1}}},
		{"LMC range ends one past 0xBFFF", func(f *fabric.Fabric) {
			p := vport(f, vH1, 1)
			p.LID, p.LMC = 0xBFFF, 1
		}, []wantProblem{{fabric.ErrLIDRange, vH1, 1}}},
	}
}

// lmcCases: LMCs too large or unaligned, and several problems at once.
func lmcCases() []validateCase {
	return []validateCase{
		{"LMC 8", func(f *fabric.Fabric) {
			vport(f, vH1, 1).LMC = 8
		}, []wantProblem{{fabric.ErrLMC, vH1, 1}}},
		{"LMC 255 without LID", func(f *fabric.Fabric) {
			p := vport(f, vH1, 1)
			p.LID, p.LMC = 0, 255
		}, []wantProblem{{fabric.ErrLMC, vH1, 1}}},
		{"unaligned base LID", func(f *fabric.Fabric) {
			p := vport(f, vH1, 1)
			p.LID, p.LMC = 6, 2
		}, []wantProblem{{fabric.ErrLMC, vH1, 1}}},
		{"unaligned switch LID", func(f *fabric.Fabric) {
			p := vport(f, vS0, 0)
			p.LID, p.LMC = 9, 1
		}, []wantProblem{{fabric.ErrLMC, vS0, 0}}},
		{"several problems", func(f *fabric.Fabric) {
			vport(f, vS1, 3).Peer = fabric.NoPeer
			f.Nodes[vS1].GUID = 0x10
			vport(f, vH0, 1).LID = 0xC001
			vport(f, vS0, 0).LMC = 9
		}, []wantProblem{
			{fabric.ErrDuplicateGUID, vS1, -1},
			{fabric.ErrAsymmetric, vH1, 1},
			{fabric.ErrLIDRange, vH0, 1},
			{fabric.ErrLMC, vS0, 0},
		}},
	}
}

// checkProblems asserts that got holds exactly the wanted problems, in any
// order.
func checkProblems(t *testing.T, got []fabric.Problem, want []wantProblem) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, p := range got {
			if !used[i] && p.Node == w.node && p.Port == w.port && errors.Is(p, w.err) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing problem %v at node %d port %d", w.err, w.node, w.port)
		}
	}
	for i, p := range got {
		if !used[i] {
			t.Errorf("unexpected problem at node %d port %d: %v", p.Node, p.Port, p.Err)
		}
	}
}

func TestValidationErrorMessage(t *testing.T) {
	// 12 duplicate LIDs: every CA on LID 3.
	b := fabric.NewBuilder()
	sw := mustAdd(t, b, fabric.Switch, 0x10, 20, "sw")
	for i := 0; i < 13; i++ {
		h := mustAdd(t, b, fabric.CA, 0x100+uint64(i), 1, fmt.Sprintf("h%d", i))
		mustConnect(t, b, h, 1, sw, uint8(i+1))
		b.Node(h).Ports[1].LID = 3
	}
	err := b.Fabric().Validate()
	var ve *fabric.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 12 {
		t.Fatalf("Validate = %v, want 12 problems", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "fabric: 12 problem(s); ") || !strings.HasSuffix(msg, "; … 2 more") {
		t.Errorf("message %q", msg)
	}
	if n := strings.Count(msg, "LID 3 used by"); n != 10 {
		t.Errorf("message lists %d problems, want 10", n)
	}
	p := ve.Problems[0]
	if p.Error() != p.Err.Error() || !errors.Is(p, fabric.ErrDuplicateLID) {
		t.Errorf("Problem.Error/Unwrap inconsistent: %v", p)
	}
}

func TestValidateDuplicateLIDsDeterministic(t *testing.T) {
	// Many ports on a few LIDs, in scrambled order: per LID the first port
	// in node order keeps it and every later one is reported, whatever the
	// sort algorithm does with equal keys.
	b := fabric.NewBuilder()
	sw := mustAdd(t, b, fabric.Switch, 0x10, 200, "sw")
	var want []fabric.NodeID
	first := map[uint16]bool{}
	var byLID [5][]fabric.NodeID
	for i := 0; i < 180; i++ {
		h := mustAdd(t, b, fabric.CA, 0x100+uint64(i), 1, "")
		mustConnect(t, b, h, 1, sw, uint8(i+1))
		k := (i * 37) % 5
		lid := uint16(7 + 2*k)
		b.Node(h).Ports[1].LID = lid
		if first[lid] {
			byLID[k] = append(byLID[k], h)
		}
		first[lid] = true
	}
	for _, ids := range byLID {
		want = append(want, ids...)
	}
	var ve *fabric.ValidationError
	if err := b.Fabric().Validate(); !errors.As(err, &ve) || len(ve.Problems) != len(want) {
		t.Fatalf("Validate = %v, want %d problems", err, len(want))
	}
	for i, p := range ve.Problems {
		if p.Node != want[i] || p.Port != 1 {
			t.Fatalf("problem %d at node %d port %d, want node %d port 1", i, p.Node, p.Port, want[i])
		}
	}
}
