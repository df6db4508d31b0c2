package topo

import (
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// GUID bases of generated fabrics (see the package comment).
const (
	SwitchGUIDBase uint64 = 0x0002c90000000000
	CAGUIDBase     uint64 = 0x0002c90100000000
)

// Default link parameters of generated fabrics.
const (
	DefaultWidth = fabric.Width4x
	DefaultSpeed = fabric.EDR
)

// Topology is a generated fabric with what its generator knows about it.
type Topology struct {
	Fabric *fabric.Fabric
	Kind   string // generator name, e.g. "torus"
	Params string // canonical parameters, e.g. "dims=4x4x4 hosts=1"
	Radix  int    // ports per switch

	// Bisection is the number of cables crossing the generator's known
	// minimum bisection, 0 when the generator does not know it.
	Bisection int
	// Coords gives per switch (in switch order, i.e. fabric order of
	// switches) its coordinates for grid-like kinds; nil otherwise.
	Coords [][]int
	// Group gives per switch its group (Dragonfly group, RSI super node,
	// fat-tree level…); nil when the kind has no groups.
	Group []int
}

// cable is one switch-to-switch cable of a spec; port 0 means "next free".
type cable struct {
	a, b   int
	pa, pb int
}

// spec is the abstract shape a generator produces before it becomes a
// fabric: switches with labels and host counts, and cables between them.
type spec struct {
	kind, params string
	radix        int
	labels       []string
	hosts        []int
	cables       []cable
	coords       [][]int
	group        []int
	bisection    int
	// hostsLast puts hosts on the highest-numbered ports after the cables
	// (default: hosts take ports 1..h, cables the next free ports).
	hostsLast bool
}

func newSpec(kind, params string, radix int) *spec {
	return &spec{kind: kind, params: params, radix: radix}
}

// addSwitch adds a switch and returns its index.
func (s *spec) addSwitch(label string, hosts int) int {
	s.labels = append(s.labels, label)
	s.hosts = append(s.hosts, hosts)
	return len(s.labels) - 1
}

// link adds a cable between switches a and b on their next free ports.
func (s *spec) link(a, b int) { s.cables = append(s.cables, cable{a: a, b: b}) }

// linkPorts adds a cable on given ports (1-based).
func (s *spec) linkPorts(a, pa, b, pb int) { s.cables = append(s.cables, cable{a, b, pa, pb}) }

// build turns the spec into a validated fabric with LIDs.
func (s *spec) build() (*Topology, error) {
	n := len(s.labels)
	if n == 0 {
		return nil, fmt.Errorf("topo: %s: no switches", s.kind)
	}
	if s.radix < 1 || s.radix > fabric.MaxPorts {
		return nil, fmt.Errorf("topo: %s: radix %d, expected 1..%d", s.kind, s.radix, fabric.MaxPorts)
	}
	used := make([][]bool, n)
	next := make([]int, n)
	for i := range used {
		used[i] = make([]bool, s.radix+1)
		next[i] = 1
	}
	take := func(sw, want int) (int, error) {
		if want > 0 {
			if want > s.radix {
				return 0, fmt.Errorf("topo: %s: switch %s: port %d beyond radix %d", s.kind, s.labels[sw], want, s.radix)
			}
			if used[sw][want] {
				return 0, fmt.Errorf("topo: %s: switch %s: port %d used twice", s.kind, s.labels[sw], want)
			}
			used[sw][want] = true
			return want, nil
		}
		for next[sw] <= s.radix && used[sw][next[sw]] {
			next[sw]++
		}
		if next[sw] > s.radix {
			return 0, fmt.Errorf("topo: %s: switch %s needs more than its %d ports (radix too small for these parameters)", s.kind, s.labels[sw], s.radix)
		}
		used[sw][next[sw]] = true
		return next[sw], nil
	}
	// Explicit ports first so that "next free" never steals them.
	for _, c := range s.cables {
		for _, e := range [2][2]int{{c.a, c.pa}, {c.b, c.pb}} {
			if e[1] > 0 {
				if _, err := take(e[0], e[1]); err != nil {
					return nil, err
				}
			}
		}
	}
	hostPorts := make([][]int, n)
	if !s.hostsLast {
		for sw := 0; sw < n; sw++ {
			for h := 0; h < s.hosts[sw]; h++ {
				p, err := take(sw, 0)
				if err != nil {
					return nil, err
				}
				hostPorts[sw] = append(hostPorts[sw], p)
			}
		}
	}
	cablePorts := make([][2]int, len(s.cables))
	for i, c := range s.cables {
		if c.a == c.b {
			return nil, fmt.Errorf("topo: %s: cable from switch %s to itself", s.kind, s.labels[c.a])
		}
		pa, pb := c.pa, c.pb
		var err error
		if pa == 0 {
			if pa, err = take(c.a, 0); err != nil {
				return nil, err
			}
		}
		if pb == 0 {
			if pb, err = take(c.b, 0); err != nil {
				return nil, err
			}
		}
		cablePorts[i] = [2]int{pa, pb}
	}
	if s.hostsLast {
		for sw := 0; sw < n; sw++ {
			for h := 0; h < s.hosts[sw]; h++ {
				p, err := take(sw, 0)
				if err != nil {
					return nil, err
				}
				hostPorts[sw] = append(hostPorts[sw], p)
			}
		}
	}

	totalHosts := 0
	for _, h := range s.hosts {
		totalHosts += h
	}
	digits := max(4, len(fmt.Sprint(totalHosts)))
	b := fabric.NewBuilder()
	swID := make([]fabric.NodeID, n)
	for i := 0; i < n; i++ {
		id, err := b.AddNode(fabric.Switch, SwitchGUIDBase+uint64(i)+1, s.radix, s.kind+" "+s.labels[i])
		if err != nil {
			return nil, err
		}
		nd := b.Node(id)
		nd.VendorID, nd.DeviceID = 0x2c9, 0xcb20
		nd.SysImageGUID = nd.GUID
		nd.Enhanced = true
		swID[i] = id
	}
	host := 0
	for sw := 0; sw < n; sw++ {
		for _, p := range hostPorts[sw] {
			host++
			guid := CAGUIDBase + 2*uint64(host)
			id, err := b.AddNode(fabric.CA, guid, 1, fmt.Sprintf("node%0*d HCA-1", digits, host))
			if err != nil {
				return nil, err
			}
			nd := b.Node(id)
			nd.VendorID, nd.DeviceID = 0x2c9, 0x1017
			nd.SysImageGUID = guid
			nd.Ports[1].GUID = guid + 1
			if err := b.Connect(fabric.PortRef{Node: id, Port: 1}, fabric.PortRef{Node: swID[sw], Port: uint8(p)}); err != nil {
				return nil, err
			}
		}
	}
	for i, c := range s.cables {
		pa, pb := cablePorts[i][0], cablePorts[i][1]
		if err := b.Connect(fabric.PortRef{Node: swID[c.a], Port: uint8(pa)}, fabric.PortRef{Node: swID[c.b], Port: uint8(pb)}); err != nil {
			return nil, fmt.Errorf("topo: %s: %w", s.kind, err)
		}
	}
	f := b.Fabric()
	for i := range f.Nodes {
		for p := 1; p < len(f.Nodes[i].Ports); p++ {
			if pt := &f.Nodes[i].Ports[p]; pt.Cabled() {
				pt.Width, pt.Speed = DefaultWidth, DefaultSpeed
			}
		}
	}
	if err := f.AssignLIDs(0); err != nil {
		return nil, fmt.Errorf("topo: %s: %w", s.kind, err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("topo: %s: generated an invalid fabric (a bug): %w", s.kind, err)
	}
	f.Header = []string{fmt.Sprintf(" Generated by nuesm topo: %s %s", s.kind, s.params)}
	return &Topology{
		Fabric: f, Kind: s.kind, Params: s.params, Radix: s.radix,
		Bisection: s.bisection, Coords: s.coords, Group: s.group,
	}, nil
}

// coordLabel formats coordinates as "(1,2,3)".
func coordLabel(c []int) string {
	parts := make([]string, len(c))
	for i, x := range c {
		parts[i] = fmt.Sprint(x)
	}
	return "(" + strings.Join(parts, ",") + ")"
}

// paramError reports an invalid generator parameter.
func paramError(kind, format string, args ...any) error {
	return fmt.Errorf("topo: %s: %s", kind, fmt.Sprintf(format, args...))
}
