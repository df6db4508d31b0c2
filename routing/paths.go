package routing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// Shared scaffolding of the per-destination engines (MinHop, Up*/Down*,
// fat-tree, and whoever else wants it): the destination list, hop
// distances on the CSR switch graph, switch components and root
// resolution.

// Dest is one destination LID and where it is delivered.
type Dest struct {
	LID    int32 // the destination LID
	Base   int32 // base LID of the port that answers LID; the 2^LMC LIDs of one port share it
	Switch int32 // switch the LID is delivered at
	Port   uint8 // LFT entry at Switch: the terminal's port on it, 0 for the switch's own LID
	Term   int32 // index into g.Terms, -1 for a switch LID
}

// Destinations lists every LID a routing must cover, in increasing LID
// order: each of the 2^LMC LIDs of every terminal cabled to a switch and of
// every switch. LIDs nobody answers and terminals cabled only to CAs are
// left out (no switch can reach them). It is the destination set cdg.Verify
// checks. O(MaxLID); the slice belongs to the caller.
func Destinations(g *fabric.Graph) []Dest {
	out := make([]Dest, 0, g.MaxLID())
	for lid := 1; lid <= g.MaxLID(); lid++ {
		sw, term := g.Owner(lid)
		switch {
		case term >= 0:
			t := &g.Terms[term]
			if t.Switch < 0 {
				continue
			}
			out = append(out, Dest{LID: int32(lid), Base: int32(t.LID), Switch: t.Switch, Port: t.SwitchPort, Term: term})
		case sw >= 0:
			out = append(out, Dest{LID: int32(lid), Base: int32(g.SwitchLID(sw)), Switch: sw, Term: -1})
		}
	}
	return out
}

// ErrUnknownSwitch is wrapped by ResolveSwitch errors: the name matches no
// switch (nor a CA cabled to one), or several.
var ErrUnknownSwitch = errors.New("unknown switch")

// ResolveSwitch finds the switch spec names: a node GUID ("0x0002c9…",
// also a port GUID of a CA or router) or a node description. A CA or
// router stands for the switch its first cabled port is attached to, as
// OpenSM treats CA GUIDs in a root GUID file. GUIDs are matched before
// descriptions; a description shared by several switches is an error. It
// reads the graph only (no fabric index), so it is safe for concurrent use.
// O(nodes + ports).
func ResolveSwitch(g *fabric.Graph, spec string) (int32, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return -1, fmt.Errorf("routing: empty switch name: %w", ErrUnknownSwitch)
	}
	f := g.F
	if low := strings.ToLower(spec); strings.HasPrefix(low, "0x") {
		if guid, err := strconv.ParseUint(low[2:], 16, 64); err == nil {
			for s, id := range g.Switches {
				if f.Nodes[id].GUID == guid {
					return int32(s), nil
				}
			}
			for i := range g.Terms {
				t := &g.Terms[i]
				if t.Switch >= 0 && (f.Nodes[t.Node].GUID == guid || f.Nodes[t.Node].Ports[t.Port].GUID == guid) {
					return t.Switch, nil
				}
			}
		}
	}
	found, n := int32(-1), 0
	for s, id := range g.Switches {
		if f.Nodes[id].Desc == spec {
			if n == 0 {
				found = int32(s)
			}
			n++
		}
	}
	if n > 1 {
		return -1, fmt.Errorf("routing: %d switches are described %q, name one by GUID: %w", n, spec, ErrUnknownSwitch)
	}
	if n == 1 {
		return found, nil
	}
	for i := range g.Terms {
		if t := &g.Terms[i]; t.Switch >= 0 && f.Nodes[t.Node].Desc == spec {
			return t.Switch, nil
		}
	}
	return -1, fmt.Errorf("routing: no switch or cabled CA has GUID or description %q: %w", spec, ErrUnknownSwitch)
}
