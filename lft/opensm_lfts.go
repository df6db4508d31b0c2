package lft

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// WriteOpenSMLFTs writes r's forwarding tables in the format of OpenSM's
// opensm-lfts.dump (OpenSM 3.3 dump_ucast_lfts), which OpenSM's file
// routing engine loads (opensm -R file -U <file>):
//
//	Unicast lids [0-<maxlid>] of switch Lid <lid> guid 0x<guid016> ('<desc>'):
//	0x<lid04x> <port03d> # <type> portguid 0x<portguid016>: '<desc>'
//	…
//	<maxlid> lids dumped
//
// as OpenSM writes it: <maxlid> is decimal and is also the number on the
// closing line (OpenSM prints the top LID there, not the count of lines);
// one line per LID 1..maxlid whose entry holds a port (NoPort entries are
// left out, as OpenSM leaves out entries at or beyond the port count;
// LID 0, which is no destination, is never written, as OpenSM never
// dumps it even when the switch holds an entry for it); the
// switch's own LID appears with port 000; <type> is "Switch", "Channel
// Adapter" or "Router" and names the port answering the LID (switch port
// 0 for switch LIDs), or the comment reads "unknown node and type" when no
// port of g has that LID. Switches come in OpenSM's order (by byte-reversed
// node GUID), so for the same tables and fabric the output is identical to
// OpenSM's file. Control characters in descriptions are written as spaces.
//
// maxlid is r.MaxLID(). It fails with ErrUnwritable (before writing
// anything) when r does not fit g or an entry names a port beyond its
// switch's port count.
func WriteOpenSMLFTs(w io.Writer, g *fabric.Graph, r *Routing) error {
	if err := r.CheckShape(g); err != nil {
		return err
	}
	if err := checkPorts(g, r); err != nil {
		return err
	}
	x := newPortIndex(g)
	// The comment of each LID is the same in every switch's table: build
	// it once.
	info := make([][]byte, r.Stride)
	for lid := range info {
		var b []byte
		if p, ok := x.owner(lid); ok {
			b = append(b, " # "...)
			b = append(b, nodeTypeString(p.kind)...)
			b = append(b, " portguid 0x"...)
			b = appendHexPad(b, p.guid, 16)
			b = append(b, ": '"...)
			b = append(b, cleanDesc(p.desc)...)
			b = append(b, "'\n"...)
		} else {
			b = append(b, " # unknown node and type\n"...)
		}
		info[lid] = b
	}
	order := make([]int32, g.NumSwitches())
	for s := range order {
		order[s] = int32(s)
	}
	osmOrder(order, func(s int32) uint64 { return r.Switches[s] })

	bw := bufio.NewWriterSize(w, 256<<10)
	line := make([]byte, 0, 256)
	maxLID := r.MaxLID()
	for _, s := range order {
		n := &g.F.Nodes[g.Switches[s]]
		line = fmt.Appendf(line[:0], "Unicast lids [0-%d] of switch Lid %d guid 0x%016x ('%s'):\n",
			maxLID, n.Ports[0].LID, n.GUID, cleanDesc(n.Desc))
		bw.Write(line)
		for lid, port := range r.Row(s) {
			if port == NoPort || lid == 0 {
				continue
			}
			line = append(line[:0], "0x"...)
			line = appendHexPad(line, uint64(lid), 4)
			line = append(line, ' ')
			line = appendDecPad(line, int(port), 3)
			line = append(line, info[lid]...)
			bw.Write(line)
		}
		line = strconv.AppendInt(line[:0], int64(maxLID), 10)
		line = append(line, " lids dumped\n"...)
		bw.Write(line)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lft: write OpenSM LFT dump: %w", err)
	}
	return nil
}

// WriteOpenSMLFTsFile writes the dump of WriteOpenSMLFTs to path
// atomically (see package internal/atomicfile), mode 0644.
func WriteOpenSMLFTsFile(path string, g *fabric.Graph, r *Routing) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return WriteOpenSMLFTs(w, g, r) }, 0o644)
}

// checkPorts reports the first LFT entry that names a port beyond its
// switch's port count.
func checkPorts(g *fabric.Graph, r *Routing) error {
	for s, id := range g.Switches {
		n := &g.F.Nodes[id]
		np := n.NumPorts()
		for lid, p := range r.Row(int32(s)) {
			if p != NoPort && int(p) > np {
				return fmt.Errorf("lft: switch 0x%016x (%s): LID %d routed to port %d, expected 0..%d: %w",
					n.GUID, g.SwitchName(int32(s)), lid, p, np, ErrUnwritable)
			}
		}
	}
	return nil
}
