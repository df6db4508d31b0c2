package ibnetdiscover

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// ibsim limits and defaults (ibsim 0.10: sim.h, sim_net.c, start-up output).
const (
	ibsimDescLen    = 63 // nodedesc[64], copied with strncpy(…, 63)
	ibsimMaxNodes   = 2048
	ibsimMaxSwitchs = 256
	ibsimMaxPorts   = 13312 // as ibsim 0.10 prints it at start-up
	ibsimLinearCap  = 30 * 1024
)

// IBSimArgs returns the ibsim options that raise its default size limits
// (2,048 nodes, 256 switches, 13,312 ports, LIDs below 30,720) to fit f;
// nil when the defaults suffice. For topo.Clos3(36) they are
// ["-N", "13292", "-S", "1628", "-P", "71668"]. Pass them before the net
// file: ibsim -s <args> <file>.
func IBSimArgs(f *fabric.Fabric) []string {
	nodes, sws, ports := len(f.Nodes), 0, 0
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.Kind == fabric.Switch {
			sws++
			ports += n.NumPorts() + 1
		} else {
			ports += n.NumPorts()
		}
	}
	var args []string
	if nodes > ibsimMaxNodes {
		args = append(args, "-N", strconv.Itoa(nodes+8))
	}
	if sws > ibsimMaxSwitchs {
		args = append(args, "-S", strconv.Itoa(sws+8))
	}
	if ports > ibsimMaxPorts {
		args = append(args, "-P", strconv.Itoa(ports+64))
	}
	if f.MaxLID() >= ibsimLinearCap {
		args = append(args, "-L", strconv.Itoa(fabric.MaxUnicastLID+1))
	}
	return args
}

// ForIBSim returns a copy of f as ibsim will present it to ibnetdiscover,
// and one line per change made (nil when f needs none). Identity changes
// (port GUIDs, node descriptions) are those WriteIBSim refuses to make on
// its own; the others it applies silently:
//
//   - identity: a CA or router port GUID other than node GUID + port
//     number, or a switch port GUID other than the node GUID, becomes that
//     (ibsim computes port GUIDs this way when it answers NodeInfo); a node
//     description is cut to 63 bytes, '"' becomes an apostrophe and non-printable
//     bytes become blanks, and an empty one becomes the node id
//     ("S-0002c9…"), as ibsim shows it;
//   - other: a SysImageGUID of 0 becomes the node GUID; both ends of a
//     cable get one width and speed, the narrower width and slower speed of
//     the two ends (ibsim trains a link to what both ends enable, and
//     panics on widths with nothing in common), unknown widths and speeds
//     become the other end's or 4x and SDR, NDR and XDR (unknown to ibsim)
//     become HDR, and FDR10 on a router port becomes QDR; a router port
//     without LID loses its LMC.
//
// What ibnetdiscover does not print without -g is dropped without notice:
// header lines, chassis headings, Annot, Port.Ext and Port.Info, and
// everything on uncabled ports.
func ForIBSim(f *fabric.Fabric) (*fabric.Fabric, []string) {
	g, chs := forIBSim(f)
	var out []string
	for _, c := range chs {
		out = append(out, c.msg)
	}
	return g, out
}

type ibsimChange struct {
	identity bool
	msg      string
}

func forIBSim(f *fabric.Fabric) (*fabric.Fabric, []ibsimChange) {
	g := f.Clone()
	g.Header, g.Chassis = nil, nil
	var chs []ibsimChange
	note := func(identity bool, format string, args ...any) {
		chs = append(chs, ibsimChange{identity, fmt.Sprintf(format, args...)})
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		name := fabric.NodeIDString(n.Kind, n.GUID)
		n.Annot = fabric.Annot{}
		if d := ibsimDesc(n.Desc, name); d != n.Desc {
			note(true, "%s: description %q becomes %q", name, n.Desc, d)
			n.Desc = d
		}
		if n.SysImageGUID == 0 {
			n.SysImageGUID = n.GUID
			note(false, "%s: system image GUID 0 becomes the node GUID", name)
		}
		if n.Kind == fabric.Switch && len(n.Ports) > 0 && n.Ports[0].GUID != n.GUID {
			note(true, "%s: port 0 GUID 0x%x becomes the node GUID", name, n.Ports[0].GUID)
			n.Ports[0].GUID = n.GUID
		}
		for p := 1; p < len(n.Ports); p++ {
			pt := &n.Ports[p]
			if !pt.Cabled() || int(pt.Peer.Node) >= len(g.Nodes) {
				*pt = fabric.Port{Peer: fabric.NoPeer}
				continue
			}
			pt.Ext, pt.Info = 0, ""
			if n.Kind == fabric.Switch {
				pt.GUID = 0
			} else if want := n.GUID + uint64(p); pt.GUID != want {
				note(true, "%s[%d]: port GUID 0x%x becomes 0x%x (node GUID + port)", name, p, pt.GUID, want)
				pt.GUID = want
			}
			if n.Kind == fabric.Router && pt.LID == 0 && pt.LMC != 0 {
				note(false, "%s[%d]: LMC %d without LID becomes 0", name, p, pt.LMC)
				pt.LMC = 0
			}
		}
	}
	for _, l := range g.Links() {
		a, b := g.Port(l.A), g.Port(l.B)
		w, s := ibsimLink(a, b, g.Nodes[l.A.Node].Kind == fabric.Router || g.Nodes[l.B.Node].Kind == fabric.Router)
		if a.Width != w || b.Width != w || a.Speed != s || b.Speed != s {
			note(false, "cable %s - %s: %s%s / %s%s becomes %s%s on both ends",
				g.PortName(l.A), g.PortName(l.B), a.Width, a.Speed, b.Width, b.Speed, w, s)
			a.Width, b.Width, a.Speed, b.Speed = w, w, s, s
		}
	}
	return g, chs
}

// ibsimDesc is the description ibsim shows for desc.
func ibsimDesc(desc, nodeID string) string {
	if desc == "" {
		return nodeID
	}
	b := []byte(desc)
	if len(b) > ibsimDescLen {
		b = b[:ibsimDescLen]
	}
	for i, c := range b {
		switch {
		case c == '"':
			b[i] = '\''
		case c < 0x20 || c > 0x7e:
			b[i] = ' '
		}
	}
	return string(b)
}

// ibsimLink picks the one width and speed both ends of a cable get.
func ibsimLink(a, b *fabric.Port, router bool) (fabric.Width, fabric.Speed) {
	w := fabric.Width4x
	switch {
	case a.Width != fabric.WidthUnknown && b.Width != fabric.WidthUnknown:
		w = a.Width
		if b.Width.Lanes() < a.Width.Lanes() {
			w = b.Width
		}
	case a.Width != fabric.WidthUnknown:
		w = a.Width
	case b.Width != fabric.WidthUnknown:
		w = b.Width
	}
	s := fabric.SDR
	switch {
	case a.Speed != fabric.SpeedUnknown && b.Speed != fabric.SpeedUnknown:
		s = min(a.Speed, b.Speed)
	case a.Speed != fabric.SpeedUnknown:
		s = a.Speed
	case b.Speed != fabric.SpeedUnknown:
		s = b.Speed
	}
	if s > fabric.HDR {
		s = fabric.HDR
	}
	if router && s == fabric.FDR10 {
		s = fabric.QDR
	}
	return w, s
}

// WriteIBSim writes f as a net file for ibsim (package ibsim-utils), so that
// ibnetdiscover run against the simulated fabric (LD_PRELOAD=libumad2sim.so)
// reports the node GUIDs, port GUIDs, node descriptions, node kinds, port
// counts, cables, LIDs and LMCs, vendor and device ids, system image GUIDs
// and base/enhanced port 0 of ForIBSim(f), in its own node order. It fails
// with ErrIBSim, writing nothing, when ForIBSim would have to change a port
// GUID or a node description; write ForIBSim(f) to accept those changes.
// Start ibsim with IBSimArgs(f) for fabrics beyond its default limits.
//
// The dialect follows from ibsim 0.10's parser (sim_net.c) and from
// experiments with it:
//
//   - Lines are read into a 256-byte buffer; a longer line is split and its
//     rest parsed as a line of its own. Descriptions are at most 63 bytes
//     and Port.Info is not written, so every line stays short.
//   - A node line's quoted id is the node's ibsim name ('#' and '@' are
//     reserved, at most 64 bytes); the "S-<guid>" ids qualify. The
//     description is the quoted text after the '#', up to the next '"'
//     (so it cannot hold '"'); an empty one is replaced by the id.
//   - GUIDs come from the "switchguid=", "caguid=", "rtguid=" line before
//     a node, which sets the GUID of the next node of that kind (the part
//     in parentheses is ignored). Switch ports answer with the node GUID,
//     CA and router port p with node GUID + p; nothing else is possible
//     ("do Guid" cannot change a port GUID). sysimgguid= and vendid= apply
//     to the next node only; devid= stays until the next devid=.
//   - The "# …" comment is parsed, not ignored: "lid L lmc M" on a switch
//     line and on CA port lines give those LIDs, which ibnetdiscover reports
//     as long as no SM reassigns them; "enhanced port 0" sets enhanced port
//     0. On port lines "lid <n> <width><speed>" after the last quote sets
//     the enabled width and speed (1x 2x 4x 8x 12x; SDR to HDR and FDR10;
//     NDR, XDR, "??" and "???" fall back to the defaults). The active
//     values are the best both ends enable; widths with nothing in common
//     (8x against 4x) make ibsim panic.
//   - Every '=' after the peer id on a port line is read as an option
//     w=, s= or e= (enabled width, speed, extended speed masks); a peer
//     description holding "w=…" can abort the load, so peer descriptions
//     with '=' are written as "".
//   - Router port lines are not parsed for LIDs, width or speed: WriteIBSim
//     adds w=, s=, e= options to them and sets their LIDs with a
//     "do Baselid" line after the node.
//   - A node's port list ends at the first line not starting with '[' (or
//     after as many port lines as the node has ports), and that line is
//     consumed: every node block is followed by a blank line.
//   - Lines starting with '#' are comments; grouping lines (Chassis …) are
//     ignored, but lines starting with "do", "include", "module", "width",
//     "speed" or "pdebug" are commands.
//   - Loopback cables, routers and CA-to-CA cables load fine.
func WriteIBSim(w io.Writer, f *fabric.Fabric) error {
	if err := writable(f); err != nil {
		return err
	}
	g, chs := forIBSim(f)
	var ids []string
	for _, c := range chs {
		if c.identity {
			ids = append(ids, c.msg)
		}
	}
	if len(ids) > 0 {
		more := ""
		if len(ids) > 3 {
			more = fmt.Sprintf(" (and %d more)", len(ids)-3)
			ids = ids[:3]
		}
		return fmt.Errorf("ibnetdiscover: ibsim would change %s%s; write ForIBSim(f) to accept: %w",
			strings.Join(ids, "; "), more, ErrIBSim)
	}
	g.Header = []string{
		fmt.Sprintf(" ibsim net file written by nuesm: %d switches, %d CAs, %d routers, %d cables",
			g.Count(fabric.Switch), g.Count(fabric.CA), g.Count(fabric.Router), len(g.Links())),
		" run: ibsim -s " + strings.Join(append(IBSimArgs(g), "<this file>"), " "),
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	wr := &writer{w: bw, f: g, buf: make([]byte, 0, 512), ibsim: true}
	wr.fabric()
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("ibnetdiscover: write: %w", err)
	}
	return nil
}

// WriteIBSimFile writes WriteIBSim's output to path atomically (see
// WriteFile).
func WriteIBSimFile(path string, f *fabric.Fabric) error {
	return writeAtomic(path, func(w io.Writer) error { return WriteIBSim(w, f) })
}

// ibsimWidthMask is the enabled-width mask ibsim derives from a width.
func ibsimWidthMask(w fabric.Width) int {
	switch w {
	case fabric.Width1x:
		return 1
	case fabric.Width2x:
		return 16
	case fabric.Width8x:
		return 4
	case fabric.Width12x:
		return 11
	}
	return 3 // 4x
}

// appendIBSimOpts appends the " w=… s=… e=…" options of a router port.
func appendIBSimOpts(b []byte, w fabric.Width, s fabric.Speed) []byte {
	sp, ext := 7, 0
	switch s {
	case fabric.SDR:
		sp = 1
	case fabric.DDR:
		sp = 3
	case fabric.FDR:
		ext = 1
	case fabric.EDR:
		ext = 3
	case fabric.HDR:
		ext = 7
	}
	b = append(b, " w="...)
	b = strconv.AppendInt(b, int64(ibsimWidthMask(w)), 10)
	b = append(b, " s="...)
	b = strconv.AppendInt(b, int64(sp), 10)
	b = append(b, " e="...)
	return strconv.AppendInt(b, int64(ext), 10)
}

// ibsimBaselids writes the "do Baselid" lines of a router's ports.
func (wr *writer) ibsimBaselids(n *fabric.Node) {
	first := true
	for p := 1; p < len(n.Ports); p++ {
		pt := &n.Ports[p]
		if !pt.Cabled() || pt.LID == 0 {
			continue
		}
		b := wr.buf[:0]
		if first {
			b = append(b, '\n') // ends the port list (ibsim consumes that line)
			first = false
		}
		b = append(b, "do Baselid "...)
		b = appendID(b, n.Kind, n.GUID)
		b = append(b, '[')
		b = appendDec(b, p)
		b = append(b, "] "...)
		b = appendDec(b, int(pt.LID))
		if pt.LMC > 0 {
			b = append(b, ' ')
			b = appendDec(b, int(pt.LMC))
		}
		wr.line(b)
		wr.buf = b[:0]
	}
}
