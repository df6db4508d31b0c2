package lft

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// lftsOnly returns a routing of g with r's tables and New's defaults for
// the rest (what an LFT reader can give back).
func lftsOnly(g *fabric.Graph, r *Routing) *Routing {
	c := New(g, "")
	for s := range c.Switches {
		copy(c.Row(int32(s)), r.Row(int32(s)))
	}
	return c
}

func TestOpenSMLFTsRoundTrip(t *testing.T) {
	for i, c := range []struct {
		n, hosts int
		shortcut []int
		lmc      uint8
	}{
		{3, 1, nil, 0},
		{5, 2, []int{1, 3}, 0},
		{8, 3, nil, 1},
		{6, 0, nil, 0},
		{12, 4, []int{0, 6}, 2},
	} {
		g := ringGraph(t, c.n, c.hosts, c.shortcut, c.lmc)
		for seed := uint64(1); seed <= 3; seed++ {
			r := randomRouting(g, seed*100+uint64(i), randomOpts{lid0: seed == 2})
			var buf bytes.Buffer
			if err := WriteOpenSMLFTs(&buf, g, r); err != nil {
				t.Fatal(err)
			}
			for _, opt := range []ReadOptions{{}, {NoRemap: true}} {
				got, err := ReadLFTs(bytes.NewReader(buf.Bytes()), "rt.dump", g, opt)
				if err != nil {
					t.Fatalf("ring %d seed %d: %v", c.n, seed, err)
				}
				want := lftsOnly(g, r)
				for s := range want.Switches {
					want.SetPort(int32(s), 0, NoPort) // LID 0 is never written
				}
				if !Equal(got, want) {
					t.Fatalf("ring %d seed %d opt %+v: tables differ:\n%s", c.n, seed, opt, diffRoutings(g, got, want, 10))
				}
			}
		}
	}
}

// TestReadRealToolOutput reads the outputs of OpenSM, dump_lfts and ibroute
// captured from the same simulated fabric (testdata/real) and checks that
// they agree, and that our writers reproduce OpenSM's dumps byte for byte.
func TestReadRealToolOutput(t *testing.T) {
	g := ringGraph(t, 4, 2, nil, 0)
	dir := filepath.Join("testdata", "real")
	osm, err := ReadOpenSMLFTsFile(filepath.Join(dir, "ring4-opensm-lfts.dump"), g)
	if err != nil {
		t.Fatal(err)
	}
	for s := range osm.Switches {
		for lid := 1; lid <= g.MaxLID(); lid++ {
			if osm.Port(int32(s), lid) == NoPort {
				t.Errorf("OpenSM's min-hop routing has no route from %s to LID %d", g.SwitchName(int32(s)), lid)
			}
		}
	}
	for _, name := range []string{"ring4-dump_lfts.txt", "ring4-dump_lfts-n.txt"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadIBRoute(f, name, g)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(got, osm) {
			t.Errorf("%s differs from OpenSM's dump:\n%s", name, diffRoutings(g, got, osm, 10))
		}
	}
	for _, c := range []struct {
		name string
		sw   int32
	}{{"ring4-ibroute-a-3.txt", 2}, {"ring4-ibroute-2.txt", 1}} {
		b, err := os.ReadFile(filepath.Join(dir, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadIBRoute(bytes.NewReader(b), c.name, g); !errors.Is(err, ErrMissingSwitch) {
			t.Errorf("%s: one switch read strictly: err %v, want ErrMissingSwitch", c.name, err)
		}
		got, err := ReadLFTs(bytes.NewReader(b), c.name, g, ReadOptions{AllowMissingSwitches: true})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Row(c.sw), osm.Row(c.sw)) {
			t.Errorf("%s: switch %d is %v, OpenSM dumped %v", c.name, c.sw, got.Row(c.sw), osm.Row(c.sw))
		}
	}

	// Our writers reproduce OpenSM's files.
	var buf bytes.Buffer
	if err := WriteOpenSMLFTs(&buf, g, osm); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "ring4-opensm-lfts.dump"))
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("our LFT dump differs from OpenSM's:\n%s", firstDiff(buf.Bytes(), want))
	}
	m, err := ReadOpenSMSL2VLFile(filepath.Join(dir, "ring4-opensm-sl2vl.dump"), g)
	if err != nil {
		t.Fatal(err)
	}
	if want := [NumSLs]uint8{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}; m.Default != want || !m.Uniform() {
		t.Errorf("OpenSM's SL2VL read as %+v, want Default %v everywhere", m, want)
	}
	osm.SL2VL = m
	buf.Reset()
	if err := WriteOpenSMSL2VL(&buf, g, osm); err != nil {
		t.Fatal(err)
	}
	want, _ = os.ReadFile(filepath.Join(dir, "ring4-opensm-sl2vl.dump"))
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("our SL2VL dump differs from OpenSM's:\n%s", firstDiff(buf.Bytes(), want))
	}
}

// TestReadLFTsRemap reads a dump taken under other LIDs: the port GUIDs in
// the comments move every entry to the port's LID in our fabric.
func TestReadLFTsRemap(t *testing.T) {
	g := ringGraph(t, 4, 2, nil, 1) // CAs with 2 LIDs each
	r := randomRouting(g, 7, randomOpts{})
	var buf bytes.Buffer
	if err := WriteOpenSMLFTs(&buf, g, r); err != nil {
		t.Fatal(err)
	}
	// Shift every LID in the entries by +0x100 (keeps LMC alignment).
	var shifted bytes.Buffer
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		var lid int
		if n, _ := fmt.Sscanf(l, "0x%x ", &lid); n == 1 && strings.Contains(l, "portguid") {
			l = fmt.Sprintf("0x%04x%s", lid+0x100, l[6:])
		}
		shifted.WriteString(l)
	}
	s := strings.ReplaceAll(shifted.String(), fmt.Sprintf("[0-%d]", g.MaxLID()), "[0-1000]")
	s = strings.ReplaceAll(s, fmt.Sprintf("\n%d lids dumped", g.MaxLID()), "\n1000 lids dumped")
	got, err := ReadLFTs(strings.NewReader(s), "shifted", g, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := lftsOnly(g, r); !Equal(got, want) {
		t.Fatalf("remapped tables differ:\n%s", diffRoutings(g, got, want, 10))
	}
	_, err = ReadLFTs(strings.NewReader(s), "shifted", g, ReadOptions{NoRemap: true})
	if !errors.Is(err, ErrLIDRange) {
		t.Fatalf("without remapping: err %v, want ErrLIDRange", err)
	}
}

func TestReadLFTsUnknownSwitch(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0)
	r := randomRouting(g, 3, randomOpts{})
	var buf bytes.Buffer
	if err := WriteOpenSMLFTs(&buf, g, r); err != nil {
		t.Fatal(err)
	}
	extra := "Unicast lids [0-6] of switch Lid 40 guid 0x00000000deadbeef ('stranger'):\n0x0001 017 # x\n6 lids dumped\n" +
		"Unicast lids [0-6] of switch Lid 41 guid 0x00000000deadbee0 ('other'):\n0 lids dumped\n"
	in := buf.String() + extra
	nlines := strings.Count(buf.String(), "\n")
	_, err := ReadOpenSMLFTs(strings.NewReader(in), "x.dump", g)
	wantParseError(t, err, "x.dump", nlines+1, ErrUnknownSwitch)
	if err != nil && (!strings.Contains(err.Error(), "0x00000000deadbeef") || !strings.Contains(err.Error(), "0x00000000deadbee0")) {
		t.Errorf("error does not list both unknown switches: %v", err)
	}
	got, err := ReadLFTs(strings.NewReader(in), "x.dump", g, ReadOptions{SkipUnknownSwitches: true})
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(got, lftsOnly(g, r)) {
		t.Error("skipping unknown switches changed the tables")
	}
}

func TestReadLFTsMalformed(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0) // switches 0x0002c9000000000{1,2,3}, 4 ports, LIDs 1-6
	const hdr = "Unicast lids [0-6] of switch Lid 1 guid 0x0002c90000000001 ('ring r0'):\n"
	const other = "Unicast lids [0-6] of switch Lid 2 guid 0x0002c90000000002 ('ring r1'):\n6 lids dumped\n" +
		"Unicast lids [0-6] of switch Lid 3 guid 0x0002c90000000003 ('ring r2'):\n6 lids dumped\n"
	for _, c := range []struct {
		name, in string
		line     int
		sentinel error
	}{
		{"bad hex LID", hdr + "0x00g1 001 # x\n1 lids dumped\n" + other, 2, ErrSyntax},
		{"LID too long", hdr + "0x123456 001\n", 2, ErrSyntax},
		{"missing port", hdr + "0x0001\n", 2, ErrSyntax},
		{"missing port, blank after LID", hdr + "0x0001 \n", 2, ErrSyntax},
		{"bad port", hdr + "0x0001 0x1\n", 2, ErrSyntax},
		{"truncated line", hdr + "0x0001 00", 2, ErrTruncated},
		{"port beyond count", hdr + "0x0001 000\n0x0002 005 # x\n", 3, ErrPortRange},
		{"LID beyond fabric", "Unicast lids [0-99] of switch Lid 1 guid 0x0002c90000000001 ('r'):\n0x0063 001\n", 2, ErrLIDRange},
		{"LID outside header range", hdr + "0x0007 001\n", 2, ErrLIDRange},
		{"duplicate LID", hdr + "0x0001 000\n0x0001 001\n", 3, ErrDuplicate},
		{"duplicate switch", hdr + "0 lids dumped\n" + hdr, 3, ErrDuplicate},
		{"bad GUID", "Unicast lids [0-6] of switch Lid 1 guid 0x00zz ('r'):\n", 1, ErrSyntax},
		{"no GUID", "Unicast lids [0-6] of switch Lid 1 ('r'):\n", 1, ErrSyntax},
		{"bad range", "Unicast lids [6-0] of switch Lid 1 guid 0x0002c90000000001 ('r'):\n", 1, ErrSyntax},
		{"bad port GUID", hdr + "0x0001 000 # Switch portguid 0xnothex: 'x'\n", 2, ErrSyntax},
		{"entry outside table", "0x0001 001\n", 1, ErrSyntax},
		{"footer outside table", "3 lids dumped\n", 1, ErrSyntax},
		{"wrong footer count", hdr + "0x0001 000\n0x0002 001\n5 lids dumped\n", 4, ErrSyntax},
		{"no footer before next table", hdr + "0x0001 000\n" + other, 3, ErrTruncated},
		{"ends inside table", hdr + "0x0001 000\n", 2, ErrTruncated},
		{"multicast", "Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x0002c90000000001 (r):\n", 1, ErrSyntax},
		{"garbage", hdr + "hello world\n", 2, ErrSyntax},
		{"missing switches", hdr + "0 lids dumped\n", 0, ErrMissingSwitch},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadOpenSMLFTs(strings.NewReader(c.in), "bad.dump", g)
			wantParseError(t, err, "bad.dump", c.line, c.sentinel)
		})
	}
}

// TestReadLFTsTolerated covers input that the real tools produce and the
// reader must accept.
func TestReadLFTsTolerated(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0)
	in := "ibwarn: [1] sim_connect: attached as client 0 at node \"x\"\r\n" +
		"# comment\n\n" +
		"Unicast lids [0x0-0x6] of switch DR path slid 0; dlid 0; 0,1 guid 0x0002c90000000001 (ring r0):\n" +
		"  Lid  Out   Destination\n       Port     Info \n" +
		"0x0000 255 : (path #0 - illegal port)\n" +
		"0x0001 000 : (Switch portguid 0x0002c90000000001: 'ring r0')\n" +
		"0x0004 001 \n" +
		"0x0005\t2\n" +
		"4 lids dumped \n" +
		"Unicast lids [0-6] of switch Lid 2 guid 0x0002c90000000002 ('ring r1'):\n6 lids dumped\n" +
		"Unicast lids [0-6] of switch Lid 3 guid 0x0002c90000000003\t('ring r2'):\n" +
		"0x0006 003 # unknown node and type\n6 lids dumped\n" +
		"\n*** WARNING ***: this command has been replaced by dump_fts\n\n"
	r, err := ReadOpenSMLFTs(strings.NewReader(in), "ok.dump", g)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    int32
		lid  int
		port uint8
	}{{0, 0, NoPort}, {0, 1, 0}, {0, 4, 1}, {0, 5, 2}, {0, 6, NoPort}, {2, 6, 3}} {
		if p := r.Port(c.s, c.lid); p != c.port {
			t.Errorf("switch %d LID %d: port %d, want %d", c.s, c.lid, p, c.port)
		}
	}
}

// TestReadLFTsSkipLIDsBeyond: a live switch keeps entries for LIDs that
// left the fabric; the read-back option ignores them and keeps the rest.
func TestReadLFTsSkipLIDsBeyond(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0)
	r := randomRouting(g, 3, randomOpts{})
	var buf bytes.Buffer
	if err := WriteOpenSMLFTs(&buf, g, r); err != nil {
		t.Fatal(err)
	}
	hi := g.MaxLID()
	s := strings.ReplaceAll(buf.String(), fmt.Sprintf("[0-%d]", hi), fmt.Sprintf("[0-%d]", hi+1))
	s = strings.ReplaceAll(s, fmt.Sprintf("\n%d lids dumped", hi), fmt.Sprintf("\n0x%04x 001 # gone\n%d lids dumped", hi+1, hi+1))
	if _, err := ReadLFTs(strings.NewReader(s), "live", g, ReadOptions{}); !errors.Is(err, ErrLIDRange) {
		t.Fatalf("strict read: err %v, want ErrLIDRange", err)
	}
	got, err := ReadLFTs(strings.NewReader(s), "live", g, ReadOptions{SkipLIDsBeyond: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := lftsOnly(g, r); !Equal(got, want) {
		t.Fatalf("tables differ:\n%s", diffRoutings(g, got, want, 10))
	}
}
