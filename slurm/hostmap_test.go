package slurm

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDescHost(t *testing.T) {
	for desc, want := range map[string]string{
		"stage114 mlx4_0":  "stage114",
		"node0001 HCA-1":   "node0001",
		"  node7\tHCA-2 ":  "node7",
		"lonely":           "lonely",
		"":                 "",
		"   ":              "",
		"MT4099 ConnectX3": "MT4099",
	} {
		if got := DescHost(desc); got != want {
			t.Errorf("DescHost(%q) = %q, want %q", desc, got, want)
		}
	}
}

// mapEndpoints is a small fabric's CA ports: a two-port CA on two
// switches, a host with two CAs, CAs without a host in their description,
// an empty description and a CA port cabled to no switch.
var mapEndpoints = []Endpoint{
	0:  {Desc: "node0001 HCA-1", NodeGUID: 0x10a, PortGUID: 0x10b, Switch: 0},
	1:  {Desc: "node0001 HCA-1", NodeGUID: 0x10a, PortGUID: 0x10c, Switch: 1},
	2:  {Desc: "node0002 HCA-1", NodeGUID: 0x20a, PortGUID: 0x20b, Switch: 0},
	3:  {Desc: "node0002 HCA-2", NodeGUID: 0x20c, PortGUID: 0x20d, Switch: 2},
	4:  {Desc: "MT4099 ConnectX3 Mellanox Technologies", NodeGUID: 0x0002c90300000010, PortGUID: 0x0002c90300000011, Switch: 1},
	5:  {Desc: "MT4099 ConnectX3 Mellanox Technologies", NodeGUID: 0x0002c90300000020, PortGUID: 0x0002c90300000021, Switch: 2},
	6:  {Desc: "MT4115 ConnectX4", NodeGUID: 0x0002c90300000030, PortGUID: 0x0002c90300000031, Switch: 3},
	7:  {Desc: "login1-ib mlx5_0", NodeGUID: 0x70a, PortGUID: 0x70b, Switch: 3},
	8:  {Desc: "login1-ib mlx5_1", NodeGUID: 0x80a, PortGUID: 0x80b, Switch: 0},
	9:  {Desc: "gpu01 #2 HCA", NodeGUID: 0x90a, PortGUID: 0x90b, Switch: 1},
	10: {Desc: "", NodeGUID: 0xa0a, PortGUID: 0xa0b, Switch: 1},
	11: {Desc: "node0004 HCA-1", NodeGUID: 0xb0a, PortGUID: 0xb0b, Switch: -1},
}

func TestParseHostMapFile(t *testing.T) {
	ov, err := LoadHostMap("testdata/hostmap.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []HostOverride{
		{Host: "stage1", GUID: 0x0002c90300000010, Line: 6},
		{Host: "stage2", GUID: 0x0002c90300000021, Line: 7},
		{Host: "login1", Desc: "login1-ib mlx5_0", Line: 8},
		{Host: "login1", Desc: "login1-ib mlx5_1", Line: 9},
		{Host: "gpu01", Desc: "gpu01 #2 HCA", Line: 10},
		{Host: "gone", GUID: 0x0002c903deadbeef, Line: 11},
		{Host: "node0003", Desc: "MT4115 ConnectX4", Line: 12},
	}
	for i := range want {
		want[i].File = "testdata/hostmap.txt"
	}
	if !slices.Equal(ov, want) {
		t.Fatalf("got  %+v\nwant %+v", ov, want)
	}
	if s := ov[5].String(); s != "testdata/hostmap.txt:11: gone 0x0002c903deadbeef" {
		t.Errorf("String() = %q", s)
	}
}

func TestParseHostMapErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# ok\nnode1\n", `hostmap x.map:2: invalid host map: host "node1" without a CA (want: host GUID-or-description)`},
		{"node1   # nothing\n", `hostmap x.map:1: invalid host map: host "node1" without a CA`},
		{"node[1-2] 0x1\n", `host "node[1-2]": '[' cannot be part of a SLURM host name`},
		{"a,b 0x1\n", `host "a,b": ',' cannot`},
		{"n1 0x\n", `GUID "0x": want 0x and 1 to 16 hex digits`},
		{"n1 0xZZ\n", `GUID "0xZZ": want 0x and 1 to 16 hex digits, not zero`},
		{"n1 0x0\n", `GUID "0x0"`},
		{"n1 0x12345678901234567\n", `GUID "0x12345678901234567"`},
		{"\n\nn1 \"unterminated\n", `hostmap x.map:3: invalid host map: unterminated quoted description`},
		{"n1 \"a\" b\n", `text "b" after the quoted description`},
		{"n1 \"  \"\n", `empty description`},
	} {
		_, err := ParseHostMap(strings.NewReader(tc.in), "x.map")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrHostMap) {
			t.Errorf("%q:\n got %v\nwant an ErrHostMap containing %s", tc.in, err, tc.want)
		}
	}
	if _, err := LoadHostMap("testdata/no-such-file"); err == nil {
		t.Error("missing file: no error")
	}
}

func TestHostMap(t *testing.T) {
	ov, err := LoadHostMap("testdata/hostmap.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := NewHostMap(mapEndpoints, ov)
	want := map[string][]int32{
		"node0001": {0, 1}, // one CA, two ports
		"node0002": {2, 3}, // two CAs
		"stage1":   {4},    // node GUID: all its ports
		"stage2":   {5},    // port GUID
		"node0003": {6},    // by description
		"login1":   {7, 8},
		"gpu01":    {9},
		"node0004": {11}, // known, though cabled to no switch
	}
	if hosts := m.Hosts(); !slices.Equal(hosts, sortedKeys(want)) {
		t.Errorf("Hosts() = %q, want %q", hosts, sortedKeys(want))
	}
	for h, ids := range want {
		if got := m.Lookup(h); !slices.Equal(got, ids) {
			t.Errorf("Lookup(%q) = %v, want %v", h, got, ids)
		}
	}
	for _, h := range []string{"gone", "MT4099", "login1-ib", "MT4115", "", "node0005"} {
		if got := m.Lookup(h); got != nil {
			t.Errorf("Lookup(%q) = %v, want nil", h, got)
		}
	}
	if u := m.Unresolved(); len(u) != 1 || u[0].Host != "gone" {
		t.Errorf("Unresolved() = %v", u)
	}
	if m.NumEndpoints() != len(mapEndpoints) || m.Endpoint(5).Switch != 2 {
		t.Error("Endpoint/NumEndpoints")
	}

	// an override replaces the description's mapping of the host it names
	m = NewHostMap(mapEndpoints, []HostOverride{{Host: "node0002", GUID: 0x20c}, {Host: "spare", Desc: "node0001 HCA-1"}})
	if got := m.Lookup("node0002"); !slices.Equal(got, []int32{3}) {
		t.Errorf("overridden node0002: %v, want [3]", got)
	}
	if got := m.Lookup("node0001"); got != nil {
		t.Errorf("node0001 after its CA went to spare: %v", got)
	}
	if got := m.Lookup("spare"); !slices.Equal(got, []int32{0, 1}) {
		t.Errorf("spare: %v, want [0 1]", got)
	}
	// without overrides: descriptions only
	m = NewHostMap(mapEndpoints, nil)
	if got := m.Lookup("MT4099"); !slices.Equal(got, []int32{4, 5}) {
		t.Errorf("MT4099 without overrides: %v", got)
	}
	if got := m.Lookup("login1-ib"); !slices.Equal(got, []int32{7, 8}) {
		t.Errorf("login1-ib without overrides: %v", got)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
