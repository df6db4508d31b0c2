package lft

import (
	"bytes"
	"strings"
	"testing"
)

func TestSLFileRoundTrip(t *testing.T) {
	for i, o := range []randomOpts{
		{},
		{bySrc: true},
		{pairs: 5},
		{bySrc: true, pairs: 20},
	} {
		for _, lmc := range []uint8{0, 1} {
			g := ringGraph(t, 6, 3, []int{0, 3}, lmc)
			r := randomRouting(g, uint64(40+i), o)
			var buf bytes.Buffer
			if err := WriteSL(&buf, g, r); err != nil {
				t.Fatal(err)
			}
			sl, vls, err := ReadSL(bytes.NewReader(buf.Bytes()), "rt.sl", g)
			if err != nil {
				t.Fatalf("opts %+v: %v\n%s", o, err, buf.String())
			}
			if !sl.equal(&r.SL) || vls != r.NumVLs {
				t.Fatalf("opts %+v: SL table changed in a round trip", o)
			}
			if (sl.BySrc == nil) != (r.SL.BySrc == nil) {
				t.Fatalf("opts %+v: BySrc presence changed", o)
			}
			// Writing what was read gives the same file.
			r2 := r.Clone()
			r2.SL = sl
			var again bytes.Buffer
			if err := WriteSL(&again, g, r2); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), buf.Bytes()) {
				t.Fatalf("opts %+v: second write differs:\n%s", o, firstDiff(again.Bytes(), buf.Bytes()))
			}
		}
	}
}

// TestSLFileBySrcWithoutOverrides keeps BySrc set even when every row
// equals ByDest (the file then has a bysrc line and no src lines).
func TestSLFileBySrcWithoutOverrides(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0)
	r := New(g, "x")
	r.SL.ByDest[2] = 3
	r.SL.EnableBySrc(len(r.Switches))
	var buf bytes.Buffer
	if err := WriteSL(&buf, g, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\nbysrc\n") || strings.Contains(buf.String(), "src 0x") {
		t.Fatalf("unexpected file:\n%s", buf.String())
	}
	sl, _, err := ReadSL(&buf, "x.sl", g)
	if err != nil {
		t.Fatal(err)
	}
	if sl.BySrc == nil || !sl.equal(&r.SL) {
		t.Fatal("BySrc lost")
	}
}

// TestSLFileHandEdited accepts what a person may write: comments, blank
// lines, explicit SL 0 runs, src lines of switches in any order.
func TestSLFileHandEdited(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0) // LIDs 1-6; switches 0x0002c9000000000{1,2,3}
	in := `# hand-written
nuesm-sl 1

vls 2
maxlid 6
dest 0-1 0
dest 2-4 1   
bysrc
src 0x0002c90000000003 1 1
src 0x2c90000000001 2-3 0
src 0x0002c90000000003 5-6 1
pair 1 6 1
end
# trailing comment
`
	sl, vls, err := ReadSL(strings.NewReader(in), "hand.sl", g)
	if err != nil {
		t.Fatal(err)
	}
	if vls != 2 {
		t.Errorf("vls %d", vls)
	}
	for _, c := range []struct {
		sw         int32
		slid, dlid int
		want       uint8
	}{
		{1, 9, 3, 1}, {0, 9, 3, 0}, {2, 9, 1, 1}, {2, 9, 2, 1}, {2, 9, 6, 1}, {1, 9, 6, 0}, {1, 1, 6, 1},
	} {
		if got := sl.Of(c.sw, c.slid, c.dlid); got != c.want {
			t.Errorf("Of(%d, %d, %d) = %d, want %d", c.sw, c.slid, c.dlid, got, c.want)
		}
	}
}

func TestSLFileMalformed(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0)
	const hdr = "nuesm-sl 1\nvls 2\nmaxlid 6\n"
	for _, c := range []struct {
		name, in string
		line     int
		sentinel error
	}{
		{"empty", "", 0, ErrTruncated},
		{"wrong magic", "nuesm-lft 1\n", 1, ErrSyntax},
		{"wrong version", "nuesm-sl 2\n", 1, ErrSyntax},
		{"zero VLs", "nuesm-sl 1\nvls 0\n", 2, ErrSyntax},
		{"16 VLs", "nuesm-sl 1\nvls 16\n", 2, ErrSyntax},
		{"maxlid too small", "nuesm-sl 1\nvls 2\nmaxlid 3\n", 3, ErrLIDRange},
		{"header ends early", "nuesm-sl 1\nvls 2\n", 2, ErrTruncated},
		{"no end", hdr + "dest 1 1\n", 4, ErrTruncated},
		{"after end", hdr + "end\ndest 1 1\n", 5, ErrSyntax},
		{"bad range", hdr + "dest 3-1 1\nend\n", 4, ErrSyntax},
		{"bad LID", hdr + "dest x 1\nend\n", 4, ErrSyntax},
		{"LID beyond maxlid", hdr + "dest 5-7 1\nend\n", 4, ErrLIDRange},
		{"SL 16", hdr + "dest 1 16\nend\n", 4, ErrSyntax},
		{"overlap", hdr + "dest 1-3 1\ndest 3 2\nend\n", 5, ErrSyntax},
		{"decreasing", hdr + "dest 4 1\ndest 2 2\nend\n", 5, ErrSyntax},
		{"truncated line", hdr + "dest 4", 4, ErrSyntax},
		{"src without bysrc", hdr + "src 0x0002c90000000001 1 1\nend\n", 4, ErrSyntax},
		{"unknown switch", hdr + "bysrc\nsrc 0x00000000deadbeef 1 1\nend\n", 5, ErrUnknownSwitch},
		{"bad switch hex", hdr + "bysrc\nsrc 0xdeadbeefq 1 1\nend\n", 5, ErrSyntax},
		{"src overlap", hdr + "bysrc\nsrc 0x0002c90000000001 1-2 1\nsrc 0x0002c90000000001 2 0\nend\n", 6, ErrSyntax},
		{"two bysrc", hdr + "bysrc\nbysrc\nend\n", 5, ErrDuplicate},
		{"duplicate pair", hdr + "pair 1 2 1\npair 1 2 3\nend\n", 5, ErrDuplicate},
		{"pair LID too big", hdr + "pair 70000 2 1\nend\n", 4, ErrSyntax},
		{"unknown record", hdr + "route 1 2\nend\n", 4, ErrSyntax},
		{"dest arity", hdr + "dest 1\nend\n", 4, ErrSyntax},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadSL(strings.NewReader(c.in), "bad.sl", g)
			wantParseError(t, err, "bad.sl", c.line, c.sentinel)
		})
	}
}

func TestWriteSLRejectsMisshapedTable(t *testing.T) {
	g := ringGraph(t, 3, 1, nil, 0)
	r := New(g, "x")
	r.SL.ByDest = r.SL.ByDest[:3]
	if err := WriteSL(&bytes.Buffer{}, g, r); err == nil {
		t.Fatal("short ByDest accepted")
	}
}
