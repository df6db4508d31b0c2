package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
)

// lostCables handles a trap of a link that changed state without a full
// discovery: it reads the ports of each trapping switch (iblinkinfo over
// the switch's directed route, the switch alone) and, when every change
// is a cable of the dump that went down, writes the dump without those
// cables and triggers a reroute. It reports whether it did; anything
// else (a cable that came up or leads elsewhere, a switch without a known
// route, a failed query) is left to the full discovery. The full
// discovery after OpenSM's heavy sweep checks the result either way.
func (d *Deployer) lostCables(ctx context.Context, guids []uint64, trigger func(string)) bool {
	t0 := time.Now()
	old, err := os.ReadFile(d.cfg.Fabric)
	if err != nil {
		return false
	}
	paths := pathsOfDump(old)
	if paths == nil {
		if p := d.pathSnap.Load(); p != nil {
			paths = *p
		}
	}
	if len(guids) == 0 || paths == nil {
		d.log.Debug("no trapping switch or no directed routes known; full discovery", "switches", len(guids))
		return false
	}
	text := old
	cut := 0
	for _, guid := range guids {
		path, ok := paths[guid]
		if !ok {
			d.log.Debug("no directed route to a trapping switch; full discovery", "guid", fmt.Sprintf("%#x", guid))
			return false
		}
		var n int
		if d.cfg.Apply == ApplySMP {
			// The agent is at hand: PortInfo and NodeInfo Gets cost
			// less than an iblinkinfo run.
			seen, err := d.portsBySMP(ctx, text, guid, path)
			if err == nil {
				text, n, err = cutSeen(text, guid, seen)
			}
			if err != nil {
				d.log.Debug("a trapping switch's ports (SMPs) do not show lost cables only; full discovery", "guid", fmt.Sprintf("%#x", guid), "err", err)
				return false
			}
			cut += n
			continue
		}
		out, err := d.run.run(ctx, "iblinkinfo", "-D", path, "-n", "0", "-l")
		if err != nil {
			d.log.Debug("reading a trapping switch's ports failed; full discovery", "guid", fmt.Sprintf("%#x", guid), "err", err)
			return false
		}
		if text, n, err = cutDownCables(text, guid, out); err != nil {
			d.log.Debug("a trapping switch's ports do not show lost cables only; full discovery", "guid", fmt.Sprintf("%#x", guid), "err", err)
			return false
		}
		cut += n
	}
	if cut == 0 || !cablesLess(old, text, cut) {
		d.log.Debug("the trapping switches lost no cable the dump can drop; full discovery", "cut", cut)
		return false
	}
	d.mu.Lock()
	d.disc.Runs++
	d.disc.LastRun, d.disc.LastTrigger, d.disc.LastError = time.Now().UTC(), "opensm-trap-ports", ""
	d.mu.Unlock()
	d.met.discoverDur.Observe(time.Since(t0).Seconds())
	d.adopt(text, "opensm-trap-ports", t0, trigger)
	return true
}

// linkLine is one port of iblinkinfo's line mode: the node GUID, its
// port, and after "==( … )==>" the peer's GUID, LID and port, or nothing
// for a port without a link.
var linkLine = regexp.MustCompile(`^0x([0-9a-fA-F]+)\s+".*"\s+\d+\s+(\d+)\[[^\]]*\]\s+==\((.*)\)==>\s*(?:0x([0-9a-fA-F]+)\s+\d+\s+(\d+)\[)?`)

// portSeen is a port of a trapping switch as read: without a link, or
// with a link to the peer node (node or port GUID) and port.
type portSeen struct {
	port     int
	up       bool
	peer     uint64
	peerAlt  uint64 // the peer's port GUID, when known (a CA's)
	peerPort int
}

// cutDownCables removes from an ibnetdiscover dump the cables of switch
// guid whose port iblinkinfo (out) shows without a link, both ends'
// lines. It fails when a port shows a link the dump lacks or a peer
// other than the dump's.
func cutDownCables(dump []byte, guid uint64, out []byte) ([]byte, int, error) {
	var seen []portSeen
	for _, line := range strings.Split(string(out), "\n") {
		m := linkLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		if g, err := strconv.ParseUint(m[1], 16, 64); err != nil || g != guid {
			return nil, 0, fmt.Errorf("iblinkinfo answered for node %s", m[1])
		}
		port, _ := strconv.Atoi(m[2])
		ps := portSeen{port: port, up: m[4] != ""}
		if ps.up {
			ps.peer, _ = strconv.ParseUint(m[4], 16, 64)
			ps.peerPort, _ = strconv.Atoi(m[5])
		}
		seen = append(seen, ps)
	}
	if len(seen) == 0 {
		return nil, 0, errors.New("iblinkinfo listed no port")
	}
	return cutSeen(dump, guid, seen)
}

// cutSeen removes the cables of switch guid whose port was seen without a
// link, both ends' lines; see cutDownCables.
func cutSeen(dump []byte, guid uint64, seen []portSeen) ([]byte, int, error) {
	self := fmt.Sprintf("S-%016x", guid)
	peers := blockPorts(dump, self)
	if peers == nil {
		return nil, 0, fmt.Errorf("switch %s is not in the dump", self)
	}
	var drop []portEnd
	for _, ps := range seen {
		had, cabled := peers[ps.port]
		switch {
		case !ps.up && cabled:
			drop = append(drop, portEnd{id: self, port: ps.port}, had)
		case !ps.up:
		case !cabled:
			return nil, 0, fmt.Errorf("port %d has a link the dump lacks", ps.port)
		case !(had.is(ps.peer) || ps.peerAlt != 0 && had.is(ps.peerAlt)) || ps.peerPort != had.port:
			return nil, 0, fmt.Errorf("port %d leads to 0x%016x port %d, the dump has %s port %d", ps.port, ps.peer, ps.peerPort, had.id, had.port)
		}
	}
	for _, e := range drop {
		if !strings.HasPrefix(e.id, "S-") {
			return nil, 0, fmt.Errorf("the cable at port %d leads to %s, not to a switch", e.port, e.id)
		}
		var ok bool
		if dump, ok = dropPortLine(dump, e.id, e.port); !ok {
			return nil, 0, fmt.Errorf("no line for port %d of %s in the dump", e.port, e.id)
		}
	}
	return dump, len(drop) / 2, nil
}

// portLine is a port of a node block: "[p]" (a CA's port GUID in
// parentheses) then the peer's quoted id and port.
var portLine = regexp.MustCompile(`^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-F]+)\))?`)

// portEnd is a port's peer: its quoted id, port and, for a CA, the port
// GUID (iblinkinfo names a CA by it).
type portEnd struct {
	id   string
	port int
	guid uint64
}

// is reports whether the peer is node or port GUID g.
func (e portEnd) is(g uint64) bool {
	return strings.HasSuffix(e.id, fmt.Sprintf("-%016x", g)) || (e.guid != 0 && e.guid == g)
}

// blockPorts returns the cabled ports of the node block whose id (the
// quoted "S-…"/"H-…") is id, or nil when there is none.
func blockPorts(dump []byte, id string) map[int]portEnd {
	var ports map[int]portEnd
	in := false
	for _, line := range strings.Split(string(dump), "\n") {
		switch {
		case isNodeLine(line):
			if in {
				return ports
			}
			if in = strings.Contains(line, `"`+id+`"`); in {
				ports = map[int]portEnd{}
			}
		case in:
			if m := portLine.FindStringSubmatch(line); m != nil {
				p, _ := strconv.Atoi(m[1])
				q, _ := strconv.Atoi(m[3])
				g, _ := strconv.ParseUint(m[4], 16, 64)
				ports[p] = portEnd{m[2], q, g}
			}
		}
	}
	return ports
}

func isNodeLine(line string) bool {
	return strings.HasPrefix(line, "Switch\t") || strings.HasPrefix(line, "Ca\t") || strings.HasPrefix(line, "Rt\t") ||
		strings.HasPrefix(line, "Switch ") || strings.HasPrefix(line, "Ca ") || strings.HasPrefix(line, "Rt ")
}

// dropPortLine removes the line of port p from the block of node id.
func dropPortLine(dump []byte, id string, p int) ([]byte, bool) {
	lines := bytes.SplitAfter(dump, []byte("\n"))
	in := false
	for i, line := range lines {
		s := string(line)
		switch {
		case isNodeLine(s):
			in = strings.Contains(s, `"`+id+`"`)
		case in:
			if m := portLine.FindStringSubmatch(s); m != nil && m[1] == strconv.Itoa(p) {
				return bytes.Join(append(lines[:i:i], lines[i+1:]...), nil), true
			}
		}
	}
	return dump, false
}

// cablesLess checks that the edited dump parses, has exactly cut cables
// fewer than the old one, the same nodes, and is still one fabric.
func cablesLess(old, edited []byte, cut int) bool {
	load := func(b []byte) *fabric.Fabric {
		res, err := ibnetdiscover.Parse(bytes.NewReader(b), "dump")
		if err != nil {
			return nil
		}
		if _, err := fabric.Compile(res.Fabric); err != nil {
			return nil
		}
		return res.Fabric
	}
	a, b := load(old), load(edited)
	// A cut that splits the fabric leaves nodes ibnetdiscover would not
	// reach: that needs the full discovery.
	return a != nil && b != nil && len(a.Nodes) == len(b.Nodes) && len(a.Links())-cut == len(b.Links()) && len(b.Components()) == 1
}

// pathsOfDump returns the directed routes to the switches of a dump from
// the node it was discovered from (nil when the dump does not say or does
// not load).
func pathsOfDump(dump []byte) map[uint64]string {
	local := localNode(dump)
	if local == 0 {
		return nil
	}
	res, err := ibnetdiscover.Parse(bytes.NewReader(dump), "dump")
	if err != nil {
		return nil
	}
	g, err := fabric.Compile(res.Fabric)
	if err != nil {
		return nil
	}
	return DRPaths(g, local)
}
