package ibnetdiscover

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// Write writes f in the format ibnetdiscover prints: the header comment
// lines, then every node in fabric order (so that Parse gives the nodes back
// in the same order), each as a blank line, vendid=, devid=, sysimgguid=
// (with the chassis comment of a grouped dump), the GUID line
// (switchguid=0x<node>(<port 0>), caguid=, rtguid=), the node line and one
// line per cabled port in port order. Grouping lines ("Chassis N (guid …)",
// "Hostname:", "# Spine Nodes", "Non-Chassis Nodes", …) are written where
// the nodes' Annot.Group changes and before the first node of each chassis.
// Uncabled ports are not written.
//
// For a fabric that came from Parse, Parse(Write(f)) gives a fabric equal
// to f. Text fields are written verbatim; Write fails (before writing
// anything) on what the format cannot hold: newlines in text, node kinds or
// port counts out of range, peers outside the fabric, negative numbers,
// an unknown Annot.Group, a node without group after a grouped one, and
// header lines that would read back as grouping headings.
func Write(w io.Writer, f *fabric.Fabric) error {
	if err := writable(f); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	wr := &writer{w: bw, f: f, buf: make([]byte, 0, 512)}
	wr.fabric()
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("ibnetdiscover: write: %w", err)
	}
	return nil
}

// WriteFile writes f to path atomically: it writes a temporary file in the
// same directory, syncs it and renames it over path, so readers see either
// the old or the new file. The file keeps the mode of the file it replaces
// (0644 for a new file).
func WriteFile(path string, f *fabric.Fabric) error {
	return writeAtomic(path, func(w io.Writer) error { return Write(w, f) })
}

// writeAtomic runs fill on a temporary file next to path and renames it.
func writeAtomic(path string, fill func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if st, e := os.Stat(path); e == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("ibnetdiscover: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fill(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("ibnetdiscover: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("ibnetdiscover: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("ibnetdiscover: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("ibnetdiscover: %w", err)
	}
	if d, e := os.Open(dir); e == nil { // make the rename durable (best effort)
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// chassisGroups are the sections a grouped dump lists inside a chassis.
var chassisGroups = map[string]bool{"Spine Nodes": true, "Line Nodes": true, "Chassis Switches": true, "Chassis CAs": true}

// writable rejects what the format cannot hold.
func writable(f *fabric.Fabric) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("ibnetdiscover: cannot write: "+format, args...)
	}
	hasNL := func(s string) bool { return strings.ContainsAny(s, "\n") }
	for i, h := range f.Header {
		if hasNL(h) {
			return bad("header line %d contains a newline", i+1)
		}
		t := string(trimSpace([]byte("#" + h)))
		for _, g := range groupHeadings {
			if t == g {
				return bad("header line %d %q would read back as a grouping heading", i+1, h)
			}
		}
	}
	for i, c := range f.Chassis {
		if c.Num < 0 || hasNL(c.Hostname) {
			return bad("chassis heading %d: number %d or hostname %q", i+1, c.Num, c.Hostname)
		}
	}
	group := ""
	for i := range f.Nodes {
		n := &f.Nodes[i]
		name := lazyNode{i, n}
		if n.Kind != fabric.Switch && n.Kind != fabric.CA && n.Kind != fabric.Router {
			return bad("%s: kind %d: %w", name, n.Kind, fabric.ErrKind)
		}
		if n.NumPorts() < 1 || n.NumPorts() > fabric.MaxPorts {
			return bad("%s: %d ports, expected 1..%d: %w", name, n.NumPorts(), fabric.MaxPorts, fabric.ErrPortRange)
		}
		a := &n.Annot
		if hasNL(n.Desc) || hasNL(a.ChassisName) || hasNL(a.ChassisSlot) {
			return bad("%s: newline in the description or chassis annotation", name)
		}
		if a.ChassisNum < 0 || a.XsigoSlot < 0 {
			return bad("%s: negative chassis number or slot", name)
		}
		if a.Group != "" && a.Group != "Non-Chassis Nodes" && !chassisGroups[a.Group] {
			return bad("%s: unknown group %q", name, a.Group)
		}
		if a.Group == "" && group != "" {
			return bad("%s: no group after nodes of group %q; a dump cannot go back to ungrouped nodes", name, group)
		}
		group = a.Group
		for p := 1; p < len(n.Ports); p++ {
			pt := &n.Ports[p]
			if !pt.Cabled() {
				continue
			}
			if hasNL(pt.Info) || pt.Ext < 0 {
				return bad("%s port %d: newline in Info or negative Ext", name, p)
			}
			if _, ok := fabric.ParseWidth(pt.Width.String()); !ok {
				return bad("%s port %d: width %d out of range", name, p, pt.Width)
			}
			if _, ok := fabric.ParseSpeed(pt.Speed.String()); !ok {
				return bad("%s port %d: speed %d out of range", name, p, pt.Speed)
			}
			if int(pt.Peer.Node) >= len(f.Nodes) || int(pt.Peer.Port) >= len(f.Nodes[pt.Peer.Node].Ports) || pt.Peer.Port == 0 {
				return bad("%s port %d: peer %d[%d] outside the fabric: %w", name, p, pt.Peer.Node, pt.Peer.Port, fabric.ErrPortRange)
			}
			if f.Nodes[pt.Peer.Node].Ports[pt.Peer.Port].Ext < 0 {
				return bad("%s port %d: negative Ext on the peer", name, p)
			}
		}
	}
	return nil
}

// lazyNode names a node in messages, formatted only when one is printed.
type lazyNode struct {
	i int
	n *fabric.Node
}

func (l lazyNode) String() string {
	return fmt.Sprintf("node %d (%s)", l.i, fabric.NodeIDString(l.n.Kind, l.n.GUID))
}

type writer struct {
	w     *bufio.Writer
	f     *fabric.Fabric
	buf   []byte
	ibsim bool // write the ibsim dialect (see WriteIBSim)
}

func (wr *writer) line(b []byte) {
	b = append(b, '\n')
	wr.w.Write(b) // errors are sticky in bufio.Writer and reported by Flush
}

func (wr *writer) fabric() {
	f := wr.f
	for _, h := range f.Header {
		wr.line(append(append(wr.buf[:0], '#'), h...))
	}
	group, nextCh := "", 0
	for i := range f.Nodes {
		n := &f.Nodes[i]
		force := false
		if chassisGroups[n.Annot.Group] {
			for j := nextCh; j < len(f.Chassis); j++ {
				if f.Chassis[j].Num == n.Annot.ChassisNum {
					wr.chassis(nextCh, j+1)
					nextCh, force = j+1, true
					break
				}
			}
		} else if n.Annot.Group != "" && nextCh < len(f.Chassis) {
			wr.chassis(nextCh, len(f.Chassis))
			nextCh, force = len(f.Chassis), true
		}
		if g := n.Annot.Group; g != "" && (g != group || force) {
			if g == "Non-Chassis Nodes" {
				wr.line(append(wr.buf[:0], "\nNon-Chassis Nodes"...))
			} else {
				wr.w.WriteString("\n# " + g) // the node block's blank line ends it
			}
		}
		group = n.Annot.Group
		wr.node(fabric.NodeID(i))
	}
	wr.chassis(nextCh, len(f.Chassis))
}

// chassis writes the chassis headings [from, to).
func (wr *writer) chassis(from, to int) {
	for _, c := range wr.f.Chassis[from:to] {
		b := append(wr.buf[:0], "\nChassis "...)
		b = strconv.AppendInt(b, int64(c.Num), 10)
		if c.GUID != 0 {
			b = append(b, " (guid 0x"...)
			b = strconv.AppendUint(b, c.GUID, 16)
			b = append(b, ')')
		}
		if c.Hostname != "" {
			b = append(b, "\nHostname: "...)
			b = append(b, c.Hostname...)
		}
		wr.line(b)
	}
}

func appendHex(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 16) }

// appendID appends `"S-%016x"`.
func appendID(b []byte, k fabric.NodeKind, guid uint64) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '"', k.Prefix(), '-')
	for sh := 60; sh >= 0; sh -= 4 {
		b = append(b, digits[guid>>uint(sh)&0xf])
	}
	return append(b, '"')
}

func appendDec(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func (wr *writer) node(id fabric.NodeID) {
	n := &wr.f.Nodes[id]
	a := &n.Annot
	b := append(wr.buf[:0], "\nvendid=0x"...)
	b = appendHex(b, uint64(n.VendorID))
	b = append(b, "\ndevid=0x"...)
	b = appendHex(b, uint64(n.DeviceID))
	hasChassis := a.ChassisNum != 0 || a.ChassisName != "" || a.XsigoSlot != 0
	if n.SysImageGUID != 0 || hasChassis {
		b = append(b, '\n')
		if n.SysImageGUID != 0 {
			b = append(b, "sysimgguid=0x"...)
			b = appendHex(b, n.SysImageGUID)
		}
		if hasChassis {
			b = append(b, "\t\t# Chassis "...)
			b = appendDec(b, a.ChassisNum)
			if a.ChassisName != "" {
				b = append(b, " ("...)
				b = append(b, a.ChassisName...)
				b = append(b, ')')
			}
			if a.XsigoSlot != 0 {
				b = append(b, " slot "...)
				b = appendDec(b, a.XsigoSlot)
			}
		}
	}
	switch n.Kind {
	case fabric.Switch:
		b = append(b, "\nswitchguid=0x"...)
		b = appendHex(b, n.GUID)
		b = append(b, '(')
		b = appendHex(b, n.Ports[0].GUID)
		b = append(b, ')')
		if a.ChassisSlot != "" {
			b = append(b, "\t# "...)
			b = append(b, a.ChassisSlot...)
		}
		b = append(b, "\nSwitch\t"...)
	case fabric.CA:
		b = append(b, "\ncaguid=0x"...)
		b = appendHex(b, n.GUID)
		b = append(b, "\nCa\t"...)
	default:
		b = append(b, "\nrtguid=0x"...)
		b = appendHex(b, n.GUID)
		b = append(b, "\nRt\t"...)
	}
	b = appendDec(b, n.NumPorts())
	b = append(b, ' ')
	b = appendID(b, n.Kind, n.GUID)
	b = append(b, "\t\t# \""...)
	b = append(b, n.Desc...)
	b = append(b, '"')
	if n.Kind == fabric.Switch {
		if n.Enhanced {
			b = append(b, " enhanced port 0 lid "...)
		} else {
			b = append(b, " base port 0 lid "...)
		}
		b = appendDec(b, int(n.Ports[0].LID))
		b = append(b, " lmc "...)
		b = appendDec(b, int(n.Ports[0].LMC))
	} else if a.SCP {
		b = append(b, " (scp)"...)
	}
	wr.line(b)
	for p := 1; p < len(n.Ports); p++ {
		if n.Ports[p].Cabled() {
			wr.port(n, p)
		}
	}
	wr.buf = b[:0]
	if wr.ibsim && n.Kind == fabric.Router {
		wr.ibsimBaselids(n)
	}
}

// port writes one port line.
func (wr *writer) port(n *fabric.Node, p int) {
	pt := &n.Ports[p]
	peer := &wr.f.Nodes[pt.Peer.Node]
	pp := &peer.Ports[pt.Peer.Port]
	peerLID := pp.LID
	if peer.Kind == fabric.Switch {
		peerLID = peer.Ports[0].LID
	}
	b := append(wr.buf[:0], '[')
	b = appendDec(b, p)
	b = append(b, ']')
	if n.Kind == fabric.Switch {
		if pt.Ext != 0 {
			b = append(b, "[ext "...)
			b = appendDec(b, pt.Ext)
			b = append(b, ']')
		}
	} else {
		b = append(b, '(')
		b = appendHex(b, pt.GUID)
		b = append(b, ") "...)
	}
	b = append(b, '\t')
	b = appendID(b, peer.Kind, peer.GUID)
	b = append(b, '[')
	b = appendDec(b, int(pt.Peer.Port))
	b = append(b, ']')
	if pp.Ext != 0 {
		b = append(b, "[ext "...)
		b = appendDec(b, pp.Ext)
		b = append(b, ']')
	}
	if peer.Kind != fabric.Switch {
		if n.Kind != fabric.Switch {
			b = append(b, ' ')
		}
		b = append(b, '(')
		b = appendHex(b, pp.GUID)
		b = append(b, ") "...)
	}
	b = append(b, "\t\t# "...)
	if n.Kind != fabric.Switch {
		b = append(b, "lid "...)
		b = appendDec(b, int(pt.LID))
		b = append(b, " lmc "...)
		b = appendDec(b, int(pt.LMC))
		b = append(b, ' ')
	}
	b = append(b, '"')
	if !wr.ibsim || !strings.Contains(peer.Desc, "=") {
		b = append(b, peer.Desc...)
	}
	b = append(b, "\" lid "...)
	b = appendDec(b, int(peerLID))
	b = append(b, ' ')
	b = append(b, pt.Width.String()...)
	b = append(b, pt.Speed.String()...)
	if pt.Info != "" {
		b = append(b, ' ')
		b = append(b, pt.Info...)
	}
	if wr.ibsim && n.Kind == fabric.Router {
		b = appendIBSimOpts(b, pt.Width, pt.Speed)
	}
	wr.line(b)
	wr.buf = b[:0]
}
