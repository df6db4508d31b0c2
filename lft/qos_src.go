package lft

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// WriteQoSPolicyPaths writes every path SL of r as an OpenSM QoS policy,
// including SLs that depend on the source (SLTable.BySrc, SLTable.Pair),
// which WriteQoSPolicy refuses. OpenSM's SA answers a PathRecord query
// with the level of the first qos-match-rule whose source and destination
// port groups hold the path's ends (QoS_management_in_OpenSM.txt), so the
// policy lists, in this order:
//
//   - per-pair rules: for each (source port, SL) of SLTable.Pair entries
//     that differ from what the rules below give, the destinations;
//   - per-source rules: for each source switch and SL, the destinations
//     whose SL from that switch's ports (its terminals and port 0) differs
//     from the destination's base SL;
//   - per-destination rules: the base SL of each destination, the SL most
//     sources use (ByDest when the SLs are per destination), as
//     WriteQoSPolicy writes them.
//
// For per-destination SLs the output equals WriteQoSPolicy's. It fails
// with ErrUnwritable when the LIDs of one port (LMC > 0) have different
// SLs from one source, or a port with a non-zero SL has no GUID.
func WriteQoSPolicyPaths(w io.Writer, g *fabric.Graph, r *Routing) error {
	if err := r.CheckShape(g); err != nil {
		return err
	}
	if r.SL.PerDest() {
		return WriteQoSPolicy(w, g, r)
	}
	q, err := newPolicyPaths(g, r)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "# OpenSM QoS policy written by nuesm: the path SLs of a %q routing (%d VLs),\n", r.Engine, r.NumVLs)
	bw.WriteString("# per source and per destination. Load with: opensm -Q -Y <this file>\n")
	bw.WriteString("port-groups\n")
	for _, gr := range q.groups {
		fmt.Fprintf(bw, "    port-group\n        name: %s\n", gr.name)
		writeGUIDRanges(bw, gr.guids)
		bw.WriteString("    end-port-group\n")
	}
	bw.WriteString("end-port-groups\n\nqos-levels\n")
	bw.WriteString("    qos-level\n        name: DEFAULT\n        sl: 0\n    end-qos-level\n")
	for sl, u := range q.levels {
		if u {
			fmt.Fprintf(bw, "    qos-level\n        name: nuesm-sl%d\n        sl: %d\n    end-qos-level\n", sl, sl)
		}
	}
	bw.WriteString("end-qos-levels\n\nqos-match-rules\n")
	for _, m := range q.rules {
		bw.WriteString("    qos-match-rule\n")
		if m.src != "" {
			fmt.Fprintf(bw, "        source: %s\n", m.src)
		}
		fmt.Fprintf(bw, "        destination: %s\n        qos-level-name: nuesm-sl%d\n    end-qos-match-rule\n", m.dst, m.sl)
	}
	bw.WriteString("end-qos-match-rules\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lft: write QoS policy: %w", err)
	}
	return nil
}

// WriteQoSPolicyPathsFile writes the policy of WriteQoSPolicyPaths to path
// atomically, mode 0644.
func WriteQoSPolicyPathsFile(path string, g *fabric.Graph, r *Routing) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return WriteQoSPolicyPaths(w, g, r) }, 0o644)
}

type policyGroup struct {
	name  string
	guids []uint64 // sorted
}

type policyRule struct {
	src, dst string
	sl       uint8
}

type policyPaths struct {
	g      *fabric.Graph
	r      *Routing
	ports  []lidPort
	groups []policyGroup
	rules  []policyRule
	levels [NumSLs]bool
}

func newPolicyPaths(g *fabric.Graph, r *Routing) (*policyPaths, error) {
	q := &policyPaths{g: g, r: r}
	for _, p := range lidPorts(g) {
		if p.lid != 0 {
			if int(p.lid)+(1<<p.lmc)-1 >= r.Stride {
				return nil, fmt.Errorf("lft: port 0x%016x has LIDs %d.. beyond the SL table (%d entries): %w", p.guid, p.lid, r.Stride, ErrUnwritable)
			}
			q.ports = append(q.ports, p)
		}
	}
	slices.SortFunc(q.ports, func(a, b lidPort) int { return cmpU64(a.guid, b.guid) })
	base, err := q.baseSLs()
	if err != nil {
		return nil, err
	}
	if err := q.pairRules(base); err != nil {
		return nil, err
	}
	if err := q.sourceRules(base); err != nil {
		return nil, err
	}
	// Per-destination rules come last: they catch every other source.
	bySL := make([][]uint64, NumSLs)
	for i, p := range q.ports {
		if base[i] != 0 {
			bySL[base[i]] = append(bySL[base[i]], p.guid)
		}
	}
	for sl := 1; sl < NumSLs; sl++ {
		if len(bySL[sl]) > 0 {
			q.add("", fmt.Sprintf("nuesm-sl%d", sl), bySL[sl], uint8(sl))
		}
	}
	return q, nil
}

// add appends a destination group and its rule.
func (q *policyPaths) add(src, dst string, guids []uint64, sl uint8) {
	q.groups = append(q.groups, policyGroup{name: dst, guids: guids})
	q.rules = append(q.rules, policyRule{src: src, dst: dst, sl: sl})
	q.levels[sl] = true
}

// portSL returns the one SL of port p's LIDs in SL row row, or an error
// when they differ.
func (q *policyPaths) portSL(p lidPort, row []uint8, from string) (uint8, error) {
	sl := row[p.lid]
	for l := int(p.lid) + 1; l < int(p.lid)+(1<<p.lmc); l++ {
		if row[l] != sl {
			return 0, fmt.Errorf("lft: port 0x%016x (%s) has SL %d for LID %d and SL %d for LID %d %s, expected one SL per port (a QoS policy matches ports): %w",
				p.guid, p.desc, sl, p.lid, row[l], l, from, ErrUnwritable)
		}
	}
	if sl >= NumSLs {
		return 0, fmt.Errorf("lft: port 0x%016x (%s): SL %d, expected 0..15: %w", p.guid, p.desc, sl, ErrUnwritable)
	}
	if p.guid == 0 && sl != 0 {
		return 0, fmt.Errorf("lft: a port of %s with LID %d and SL %d has no port GUID (a QoS policy names ports by GUID): %w", p.desc, p.lid, sl, ErrUnwritable)
	}
	return sl, nil
}

// row returns the SLs of paths from source switch s.
func (q *policyPaths) row(s int32) []uint8 {
	if q.r.SL.BySrc == nil {
		return q.r.SL.ByDest
	}
	return q.r.SL.SrcRow(s)
}

// baseSLs picks each destination port's base SL: the one most sources use
// (weighting each source switch by its terminals plus itself; ties to the
// lower SL), in q.ports order.
func (q *policyPaths) baseSLs() ([]uint8, error) {
	base := make([]uint8, len(q.ports))
	for i, p := range q.ports {
		var votes [NumSLs]int
		for s := int32(0); int(s) < q.g.NumSwitches(); s++ {
			sl, err := q.portSL(p, q.row(s), fmt.Sprintf("from switch %s", q.g.SwitchName(s)))
			if err != nil {
				return nil, err
			}
			votes[sl] += int(q.g.TermOff[s+1]-q.g.TermOff[s]) + 1
		}
		for sl := range votes {
			if votes[sl] > votes[base[i]] {
				base[i] = uint8(sl)
			}
		}
	}
	return base, nil
}

// sourceRules adds a rule per (source switch, SL) for the destinations
// whose SL from that switch differs from their base SL.
func (q *policyPaths) sourceRules(base []uint8) error {
	g := q.g
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		var bySL [NumSLs][]uint64
		row := q.row(s)
		for i, p := range q.ports {
			sl, err := q.portSL(p, row, fmt.Sprintf("from switch %s", g.SwitchName(s)))
			if err != nil {
				return err
			}
			if sl != base[i] {
				bySL[sl] = append(bySL[sl], p.guid)
			}
		}
		src := ""
		for sl := range bySL {
			if len(bySL[sl]) == 0 {
				continue
			}
			if src == "" {
				src = fmt.Sprintf("nuesm-src%d", s)
				q.groups = append(q.groups, policyGroup{name: src, guids: q.sourcePorts(s)})
			}
			q.add(src, fmt.Sprintf("nuesm-src%d-sl%d", s, sl), bySL[sl], uint8(sl))
		}
	}
	return nil
}

// sourcePorts lists the port GUIDs whose paths start at switch s: its
// terminals and its port 0, sorted.
func (q *policyPaths) sourcePorts(s int32) []uint64 {
	g := q.g
	out := []uint64{g.F.Nodes[g.Switches[s]].Ports[0].GUID}
	for _, ti := range g.TermAt[g.TermOff[s]:g.TermOff[s+1]] {
		t := &g.Terms[ti]
		out = append(out, g.F.Nodes[t.Node].Ports[t.Port].GUID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pairRules adds rules for SLTable.Pair entries that differ from what the
// per-source rows give, grouped by (source port, SL).
func (q *policyPaths) pairRules(base []uint8) error {
	if len(q.r.SL.Pair) == 0 {
		return nil
	}
	idx := map[int]int{} // LID -> index in q.ports
	for i, p := range q.ports {
		for l := int(p.lid); l < int(p.lid)+(1<<p.lmc); l++ {
			idx[l] = i
		}
	}
	type key struct {
		src int
		sl  uint8
	}
	dests := map[key][]uint64{}
	for k, sl := range q.r.SL.Pair {
		si, ok1 := idx[int(k>>16)]
		di, ok2 := idx[int(k&0xFFFF)]
		if !ok1 || !ok2 {
			continue // no port has one of the LIDs: no path to serve
		}
		sw := q.srcSwitch(q.ports[si])
		rowSL := base[di]
		if sw >= 0 {
			rowSL = q.row(sw)[q.ports[di].lid]
		}
		if sl != rowSL {
			dests[key{si, sl}] = append(dests[key{si, sl}], q.ports[di].guid)
		}
	}
	keys := make([]key, 0, len(dests))
	for k := range dests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.src != b.src {
			return a.src - b.src
		}
		return int(a.sl) - int(b.sl)
	})
	for n, k := range keys {
		src := fmt.Sprintf("nuesm-pair%d-src", n)
		q.groups = append(q.groups, policyGroup{name: src, guids: []uint64{q.ports[k.src].guid}})
		d := dests[k]
		slices.Sort(d)
		q.add(src, fmt.Sprintf("nuesm-pair%d-sl%d", n, k.sl), slices.Compact(d), k.sl)
	}
	return nil
}

// srcSwitch returns the switch a source port's paths start at, or -1.
func (q *policyPaths) srcSwitch(p lidPort) int32 {
	sw, term := q.g.Owner(int(p.lid))
	if term >= 0 {
		return q.g.Terms[term].Switch
	}
	return sw
}
