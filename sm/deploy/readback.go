package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// readLFTs reads every switch's forwarding table with dump_fts over
// directed routes (-n: destinations are not resolved by LID, so broken
// tables do not stop the read) and binds them to g. Switches g does not
// have are ignored; switches the read misses keep NoPort tables and are
// returned as missing. The entries dump_fts misses (readTopLIDs) are read
// one switch at a time, except where known gives them: the caller read
// them before and nothing wrote them since (nil: read all). paths gets
// each switch's directed route by node GUID (nil: not wanted).
func readLFTs(ctx context.Context, run *runner, g *fabric.Graph, known Known, paths map[uint64]string) (*lft.Routing, []string, error) {
	out, err := run.run(ctx, "dump_fts", "-n")
	if err != nil {
		return nil, nil, err
	}
	r, err := lft.ReadLFTs(bytes.NewReader(out), "dump_fts", g, lft.ReadOptions{SkipUnknownSwitches: true, AllowMissingSwitches: true, NoRemap: true, SkipLIDsBeyond: true})
	if err != nil {
		return nil, nil, err
	}
	seen := map[uint64]bool{}
	var tops []blockTop
	for _, m := range switchGUID.FindAllSubmatch(out, -1) {
		guid, err := strconv.ParseUint(string(m[3]), 16, 64)
		if err != nil {
			continue
		}
		seen[guid] = true
		if paths != nil {
			paths[guid] = string(m[2])
		}
		if hi, err := strconv.ParseUint(string(m[1]), 0, 16); err == nil && hi > 0 && hi%lft.BlockSize == 0 {
			tops = append(tops, blockTop{guid: guid, path: string(m[2]), lid: int(hi)})
		}
	}
	if err := readTopLIDs(ctx, run, g, r, tops, known); err != nil {
		return nil, nil, err
	}
	var missing []string
	for s, id := range g.Switches {
		if !seen[g.F.Nodes[id].GUID] {
			missing = append(missing, g.SwitchName(int32(s)))
		}
	}
	return r, missing, nil
}

var switchGUID = regexp.MustCompile(`(?m)^Unicast lids \[0x[0-9a-fA-F]+-(0x[0-9a-fA-F]+)\] of switch DR path slid \d+; dlid \d+; ([0-9,]+) guid 0x([0-9a-fA-F]+)`)

// Known gives the entry of the switch with node GUID guid for LID lid
// when the caller knows it (read back before, not written since).
type Known func(guid uint64, lid int) (uint8, bool)

// KnownUnchanged knows the entries that prev (read back, a routing of
// pg) and next (the tables being applied, a routing of ng) agree on,
// switches matched by GUID: a subnet manager writes only the blocks that
// change, so those entries still hold what was read. With next == prev
// it knows every entry read.
func KnownUnchanged(pg *fabric.Graph, prev *lft.Routing, ng *fabric.Graph, next *lft.Routing) Known {
	if pg == nil || prev == nil || ng == nil || next == nil {
		return nil
	}
	index := func(g *fabric.Graph) map[uint64]int32 {
		idx := make(map[uint64]int32, g.NumSwitches())
		for s, id := range g.Switches {
			idx[g.F.Nodes[id].GUID] = int32(s)
		}
		return idx
	}
	pi, ni := index(pg), index(ng)
	return func(guid uint64, lid int) (uint8, bool) {
		ps, ok1 := pi[guid]
		ns, ok2 := ni[guid]
		if !ok1 || !ok2 || lid > prev.MaxLID() || lid > next.MaxLID() {
			return 0, false
		}
		p := prev.Port(ps, lid)
		return p, p == next.Port(ns, lid)
	}
}

// blockTop is a switch whose top LID is the first of an LFT block.
type blockTop struct {
	guid uint64
	path string // directed route
	lid  int
}

// readTopLIDs reads the entry of each switch's top LID when that LID
// opens a block: dump_fts (infiniband-diags) does not read that block,
// so a fabric whose highest LID is a multiple of 64 would read back
// without its last LID. One LinearForwardingTable Get per such switch
// (smpdump, attribute 0x19, a few in parallel).
func readTopLIDs(ctx context.Context, run *runner, g *fabric.Graph, r *lft.Routing, tops []blockTop, known Known) error {
	if len(tops) == 0 {
		return nil
	}
	idx := map[uint64]int32{}
	for s, id := range g.Switches {
		idx[g.F.Nodes[id].GUID] = int32(s)
	}
	type get struct {
		t blockTop
		s int32
	}
	var gets []get
	for _, t := range tops {
		s, ok := idx[t.guid]
		if !ok || t.lid > r.MaxLID() {
			continue
		}
		if known != nil {
			if p, ok := known(t.guid, t.lid); ok {
				r.SetPort(s, t.lid, p)
				continue
			}
		}
		gets = append(gets, get{t, s})
	}
	// A few at once: ibsim serves at most 10 clients.
	errs := make([]error, len(gets))
	err := parallel.For(ctx, len(gets), 3, func(_, i int) error {
		t, s := gets[i].t, gets[i].s
		out, err := run.run(ctx, "smpdump", "-D", t.path, "0x19", strconv.Itoa(t.lid/lft.BlockSize))
		if err != nil {
			errs[i] = err
			return nil
		}
		f := strings.Fields(string(out))
		if len(f) == 0 || len(f[0]) != 4 {
			errs[i] = fmt.Errorf("smpdump -D %s 0x19: unexpected answer %q", t.path, clip(out))
			return nil
		}
		v, err := strconv.ParseUint(f[0][:2], 16, 8)
		if err != nil {
			errs[i] = fmt.Errorf("smpdump -D %s 0x19: %w", t.path, err)
			return nil
		}
		r.SetPort(s, t.lid, uint8(v))
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// sameLFTs compares the forwarding tables of two routings of g for the
// LIDs 1..MaxLID (LID 0 is no destination) and returns the number of
// differing entries and a description of the first few.
func sameLFTs(g *fabric.Graph, got, want *lft.Routing, limit int) (int, string) {
	var b strings.Builder
	n := 0
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for lid := 1; lid <= g.MaxLID(); lid++ {
			a, w := got.Port(s, lid), want.Port(s, lid)
			if a == w {
				continue
			}
			if n++; n <= limit {
				fmt.Fprintf(&b, "%s LID %d: holds port %s, step has %s; ", g.SwitchName(s), lid, portStr(a), portStr(w))
			}
		}
	}
	return n, strings.TrimSuffix(b.String(), "; ")
}

func portStr(p uint8) string {
	if p == lft.NoPort {
		return "none"
	}
	return strconv.Itoa(int(p))
}

var sl2vlLine = regexp.MustCompile(`(?m)^ports: in\s+(\d+), out\s+(\d+):((?:\s*\|\s*\d+)+)\s*\|`)

// readSL2VL reads the SL2VL tables of one port with smpquery (LID
// routed): lid with port out for a switch (every input port), lid alone
// for a CA (out < 0). It returns the map per input port.
func readSL2VL(ctx context.Context, run *runner, lid int, out int) (map[int][lft.NumSLs]uint8, error) {
	args := []string{"sl2vl", strconv.Itoa(lid)}
	if out >= 0 {
		args = append(args, strconv.Itoa(out))
	}
	b, err := run.run(ctx, "smpquery", args...)
	if err != nil {
		return nil, err
	}
	res := map[int][lft.NumSLs]uint8{}
	for _, m := range sl2vlLine.FindAllSubmatch(b, -1) {
		in, _ := strconv.Atoi(string(m[1]))
		var vls [lft.NumSLs]uint8
		f := strings.FieldsFunc(string(m[3]), func(r rune) bool { return r == '|' || r == ' ' })
		if len(f) != lft.NumSLs {
			return nil, fmt.Errorf("smpquery sl2vl %d: %d values in a row, expected 16", lid, len(f))
		}
		for i, v := range f {
			n, _ := strconv.Atoi(v)
			vls[i] = uint8(n)
		}
		res[in] = vls
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("smpquery sl2vl %d: no table in the answer: %q", lid, clip(b))
	}
	return res, nil
}

var saSL = regexp.MustCompile(`(?m)^\s*sl\.+0x([0-9a-fA-F]+)\s*$`)

// pathSL asks OpenSM's SA for the path record slid -> dlid and returns
// its SL.
func pathSL(ctx context.Context, run *runner, slid, dlid int) (uint8, error) {
	b, err := run.run(ctx, "saquery", "-p", "--src-to-dst", fmt.Sprintf("%d:%d", slid, dlid))
	if err != nil {
		return 0, err
	}
	m := saSL.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("saquery -p %d:%d: no SL in the answer: %q", slid, dlid, clip(b))
	}
	v, err := strconv.ParseUint(string(m[1]), 16, 8)
	return uint8(v), err
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// ReadSwitches reads every switch's forwarding table as the deployer
// does (dump_fts over directed routes, plus the top LID's block where
// dump_fts misses it and known does not give it) with the given extra
// environment and working directory, bound to g.
// Tests and benchmarks use it to check the switches independently of a
// running deployer.
func ReadSwitches(ctx context.Context, env []string, workDir string, timeout time.Duration, g *fabric.Graph, known Known) (*lft.Routing, error) {
	r, missing, err := readLFTs(ctx, &runner{env: env, work: workDir, timeout: timeout, limit: 512 << 20}, g, known, nil)
	if err == nil && len(missing) > 0 {
		err = fmt.Errorf("%d switches did not answer (%s…)", len(missing), missing[0])
	}
	return r, err
}
