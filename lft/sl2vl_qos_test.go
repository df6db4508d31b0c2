package lft

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// canonicalSL2VL is what ReadOpenSMSL2VL gives for m on g: rows of
// uncabled output ports (and output port 0) take Default, tables equal to
// Default disappear.
func canonicalSL2VL(g *fabric.Graph, m SL2VL) SL2VL {
	c := SL2VL{Default: m.Default}
	for s, t := range m.Switch {
		if t == nil {
			continue
		}
		n := &g.F.Nodes[g.Switches[s]]
		u := NewPortSL2VL(t.NPorts, m.Default)
		own := false
		for in := 0; in <= t.NPorts; in++ {
			for out := 1; out <= t.NPorts; out++ {
				if !n.Ports[out].Cabled() {
					continue
				}
				for sl := uint8(0); sl < NumSLs; sl++ {
					v := t.Get(uint8(in), uint8(out), sl)
					u.Set(uint8(in), uint8(out), sl, v)
					own = own || v != m.Default[sl]
				}
			}
		}
		if own {
			if c.Switch == nil {
				c.Switch = make([]*PortSL2VL, len(m.Switch))
			}
			c.Switch[s] = u
		}
	}
	return c
}

func TestSL2VLRoundTrip(t *testing.T) {
	for i, lmc := range []uint8{0, 1, 0} {
		g := ringGraph(t, 5+i, 2, []int{0, 2}, lmc)
		r := randomRouting(g, uint64(70+i), randomOpts{sl2vl: true})
		var buf bytes.Buffer
		if err := WriteOpenSMSL2VL(&buf, g, r); err != nil {
			t.Fatal(err)
		}
		m, err := ReadOpenSMSL2VL(bytes.NewReader(buf.Bytes()), "x.sl2vl", g)
		if err != nil {
			t.Fatal(err)
		}
		want := canonicalSL2VL(g, r.SL2VL)
		if !m.equal(&want) {
			t.Fatalf("ring %d: SL2VL changed in a round trip", 5+i)
		}
	}
}

// TestSL2VLNoCAs infers Default from the switch rows when the fabric has
// no CA.
func TestSL2VLNoCAs(t *testing.T) {
	g := ringGraph(t, 4, 0, nil, 0)
	r := New(g, "x")
	r.SL2VL.Default = [NumSLs]uint8{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}
	var buf bytes.Buffer
	if err := WriteOpenSMSL2VL(&buf, g, r); err != nil {
		t.Fatal(err)
	}
	m, err := ReadOpenSMSL2VL(&buf, "x", g)
	if err != nil {
		t.Fatal(err)
	}
	if !m.equal(&r.SL2VL) {
		t.Fatalf("got %+v", m)
	}
}

func TestSL2VLMalformed(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0) // switches have 3 ports; CA port GUIDs 0x0002c9010000000{3,5,7}
	const sw = "Switch 0x0002c90000000001, base LID 1, \"ring r0\"\n" + sl2vlHeading + "\n" + sl2vlSeparator + "\n"
	const row = " : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7\n"
	const ca = "Channel Adapter 0x0002c90100000003, base LID 4, \"node0001 HCA-1\"\n" + sl2vlHeading + "\n" + sl2vlSeparator + "\n"
	for _, c := range []struct {
		name, in string
		line     int
		sentinel error
	}{
		{"empty", "", 0, ErrSyntax},
		{"unknown switch", "Switch 0x00000000deadbeef, base LID 1, \"x\"\n", 1, ErrUnknownPort},
		{"unknown CA", "Channel Adapter 0x00000000deadbeef, base LID 1, \"x\"\n", 1, ErrUnknownPort},
		{"port beyond count", sw + "4   1  " + row, 4, ErrPortRange},
		{"VL 16", sw + "0   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  16\n", 4, ErrSyntax},
		{"short row", sw + "0   1   : 0  1  2\n", 4, ErrSyntax},
		{"duplicate row", sw + "0   1  " + row + "0   1  " + row, 5, ErrDuplicate},
		{"row outside block", "0   1  " + row, 1, ErrSyntax},
		{"truncated block", sw + "0   1  " + row, 4, ErrTruncated},
		{"CA row not 0 0", ca + "1   0  " + row, 4, ErrSyntax},
		{"CA maps differ", ca + "0   0  " + row + sl2vlSeparator + "\n\n" +
			"Channel Adapter 0x0002c90100000005, base LID 5, \"node0002 HCA-1\"\n" + sl2vlHeading + "\n" + sl2vlSeparator + "\n" +
			"0   0   : 0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0\n", 10, ErrSyntax},
		{"separator outside block", sl2vlSeparator + "\n", 1, ErrSyntax},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadOpenSMSL2VL(strings.NewReader(c.in), "bad.sl2vl", g)
			wantParseError(t, err, "bad.sl2vl", c.line, c.sentinel)
		})
	}
}

func TestQoSPolicyRejectsNonPerDest(t *testing.T) {
	g := fixture(t)
	r := fixtureRouting(t, g) // BySrc with overrides and a pair
	if err := WriteQoSPolicy(&bytes.Buffer{}, g, r); !errors.Is(err, ErrNotPerDest) {
		t.Fatalf("per-source SLs: err %v, want ErrNotPerDest", err)
	}
	r.SL.BySrc = nil
	if err := WriteQoSPolicy(&bytes.Buffer{}, g, r); !errors.Is(err, ErrNotPerDest) {
		t.Fatalf("pair exception: err %v, want ErrNotPerDest", err)
	}
	// Overrides that agree with ByDest are harmless.
	r.SL.Pair = map[uint32]uint8{10<<16 | 12: r.SL.ByDest[12]}
	r.SL.EnableBySrc(len(r.Switches))
	if err := WriteQoSPolicy(&bytes.Buffer{}, g, r); err != nil {
		t.Fatalf("redundant overrides: %v", err)
	}
	// One port, two SLs (h1 has LIDs 8 and 9).
	r = perDestFixture(t, g)
	r.SL.ByDest[9] = 1
	if err := WriteQoSPolicy(&bytes.Buffer{}, g, r); !errors.Is(err, ErrUnwritable) {
		t.Fatalf("LMC port with two SLs: err %v, want ErrUnwritable", err)
	}
}

func TestQoSPolicyGroups(t *testing.T) {
	g := ringGraph(t, 10, 4, nil, 0)
	r := randomRouting(g, 5, randomOpts{})
	r.SL.BySrc, r.SL.Pair = nil, nil
	var buf bytes.Buffer
	if err := WriteQoSPolicy(&buf, g, r); err != nil {
		t.Fatal(err)
	}
	// Every port with a non-zero SL is in exactly the group of its SL.
	text := buf.String()
	for _, p := range lidPorts(g) {
		sl := r.SL.ByDest[p.lid]
		group := ""
		for _, blk := range strings.Split(text, "port-group\n")[1:] {
			if strings.Contains(blk, guidText(p.guid)) || inRange(blk, p.guid) {
				name := strings.TrimSpace(strings.SplitN(strings.SplitN(blk, "name:", 2)[1], "\n", 2)[0])
				if group != "" {
					t.Fatalf("port 0x%016x in two groups", p.guid)
				}
				group = name
			}
		}
		want := ""
		if sl != 0 {
			want = "nuesm-sl" + itoa(int(sl))
		}
		if group != want {
			t.Errorf("port 0x%016x (SL %d) in group %q, want %q", p.guid, sl, group, want)
		}
	}
}

func guidText(g uint64) string { return "0x" + string(appendHexPad(nil, g, 16)) }

// inRange reports whether a port-group block lists a range holding guid.
func inRange(blk string, guid uint64) bool {
	for _, f := range strings.FieldsFunc(blk, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		lo, hi, ok := strings.Cut(f, "-")
		if !ok || !strings.HasPrefix(lo, "0x") || !strings.HasPrefix(hi, "0x") {
			continue
		}
		a, _ := parseHex([]byte(lo[2:]), 16)
		b, _ := parseHex([]byte(hi[2:]), 16)
		if a <= guid && guid <= b {
			return true
		}
	}
	return false
}
