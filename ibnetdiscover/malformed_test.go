package ibnetdiscover

import (
	"errors"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// Lines of base used below: 4-7 switch ids, 8 switch line, 9-10 switch
// ports to h1 and h2, 12-14 h1 ids, 15 h1 line, 16 h1 port, 18-20 h2 ids,
// 21 h2 line, 22 h2 port.
const (
	swPort1 = "[1]\t\"H-0002c90100000002\"[1](2c90100000003) \t\t# \"h1\" lid 2 4xEDR"
	h1Port  = "[1](2c90100000003) \t\"S-0002c90000000001\"[1]\t\t# lid 2 lmc 0 \"sw1\" lid 1 4xEDR"
)

var malformed = []struct {
	name     string
	text     string
	line     int
	substr   string
	sentinel error
}{
	{"truncated switch line", mutate(map[int]string{8: `Switch	4 "S-0002c90000000001"		# "sw1" enhanced port 0 lid`}), 8, "switch port 0 details", ErrSyntax},
	{"truncated port line after peer lid", mutate(map[int]string{9: `[1]	"H-0002c90100000002"[1](2c90100000003) 		# "h1" lid`}), 9, "no peer lid", ErrSyntax},
	{"truncated port line in a GUID", mutate(map[int]string{9: `[1]	"H-0002c90100000002"[1](2c9`}), 9, "peer port GUID", ErrSyntax},
	{"truncated port line after width", mutate(map[int]string{9: `[1]	"H-0002c90100000002"[1](2c90100000003) 		# "h1" lid 2`}), 9, "no width and speed", ErrSyntax},
	{"bad GUID in node id", mutate(map[int]string{15: `Ca	1 "H-00z2c90100000002"		# "h1"`}), 15, "node id", ErrSyntax},
	{"GUID longer than 64 bits", mutate(map[int]string{7: `switchguid=0x12345678901234567(2c90000000001)`}), 7, "expected 0x<hex GUID>", ErrSyntax},
	{"bad hex in vendid", mutate(map[int]string{4: `vendid=2c9`}), 4, "expected 0x<hex>", ErrSyntax},
	{"port 0 on a CA", mutate(map[int]string{16: strings.Replace(h1Port, "[1]", "[0]", 1)}), 16, "port 0 on a Ca", fabric.ErrPortRange},
	{"port 0 on a switch", mutate(map[int]string{9: strings.Replace(swPort1, "[1]", "[0]", 1)}), 9, "management port", fabric.ErrPortRange},
	{"port beyond the port count", mutate(map[int]string{10: `[5]	"H-0002c90100000004"[1](2c90100000005) 		# "h2" lid 3 4xEDR`}), 10, "port 5 beyond the 4 ports", fabric.ErrPortRange},
	{"one-sided link", mutate(map[int]string{22: `# port line removed`}), 10, "lists no cable on port 1", fabric.ErrAsymmetric},
	{"peer port disagreement", mutate(map[int]string{16: strings.Replace(h1Port, "[1]\t\t#", "[3]\t\t#", 1)}), 9, "is cabled to port 3 of S-0002c90000000001, expected port 1", ErrLink},
	{"port cabled to two peers", mutate(map[int]string{16: `[1](2c90100000003) 	"H-0002c90100000004"[1] (2c90100000005) 		# lid 2 lmc 0 "h2" lid 3 4xEDR`}), 9, "is cabled to H-0002c90100000004[1], expected S-0002c90000000001[1]", fabric.ErrCabledTwice},
	{"port listed twice", mutate(map[int]string{10: `[1]	"H-0002c90100000004"[1](2c90100000005) 		# "h2" lid 3 4xEDR`}), 10, "port 1 listed twice (first at line 9)", fabric.ErrCabledTwice},
	{"port cabled to itself", mutate(map[int]string{9: `[1]	"S-0002c90000000001"[1]		# "sw1" lid 1 4xEDR`}), 9, "cabled to itself", ErrLink},
	{"duplicate LIDs", mutate(map[int]string{10: `[2]	"H-0002c90100000004"[1](2c90100000005) 		# "h2" lid 2 4xEDR`, 22: `[1](2c90100000005) 	"S-0002c90000000001"[2]		# lid 2 lmc 0 "sw1" lid 1 4xEDR`}), 22, "LID 2 used by", fabric.ErrDuplicateLID},
	{"LID ranges overlap through LMC", mutate(map[int]string{16: strings.Replace(h1Port, "lid 2 lmc 0", "lid 2 lmc 1", 1), 10: `[2]	"H-0002c90100000004"[1](2c90100000005) 		# "h2" lid 3 4xEDR`}), 22, "LID 3 used by", fabric.ErrDuplicateLID},
	{"LID not aligned to LMC", mutate(map[int]string{16: strings.Replace(h1Port, "lid 2 lmc 0", "lid 5 lmc 1", 1), 9: strings.Replace(swPort1, "lid 2", "lid 5", 1)}), 16, "not aligned", fabric.ErrLMC},
	{"duplicate node GUIDs", mutate(map[int]string{20: `caguid=0x2c90100000002`, 21: `Ca	1 "H-0002c90100000002"		# "h2"`}), 21, "already used by the node at line 15", fabric.ErrDuplicateGUID},
	{"duplicate port GUIDs", mutate(map[int]string{10: `[2]	"H-0002c90100000004"[1](2c90100000003) 		# "h2" lid 3 4xEDR`, 22: `[1](2c90100000003) 	"S-0002c90000000001"[2]		# lid 3 lmc 0 "sw1" lid 1 4xEDR`}), 22, "port GUID 0x0002c90100000003 used by", fabric.ErrDuplicateGUID},
	{"LID above 0xBFFF", mutate(map[int]string{16: strings.Replace(h1Port, "lid 2 lmc", "lid 49152 lmc", 1)}), 16, "port lid 49152 is not a unicast LID", fabric.ErrLIDRange},
	{"switch LID above 0xBFFF", mutate(map[int]string{8: `Switch	4 "S-0002c90000000001"		# "sw1" enhanced port 0 lid 65535 lmc 0`}), 8, "switch lid 65535", fabric.ErrLIDRange},
	{"LID beyond 16 bits", mutate(map[int]string{16: strings.Replace(h1Port, "lid 2 lmc", "lid 70000 lmc", 1)}), 16, "expected a decimal LID", ErrSyntax},
	{"non-numeric LID", mutate(map[int]string{16: strings.Replace(h1Port, "lid 2 lmc", "lid x lmc", 1)}), 16, "port lid \"x\"", ErrSyntax},
	{"peer LID disagrees", mutate(map[int]string{9: strings.Replace(swPort1, "lid 2", "lid 7", 1)}), 9, "peer lid 7 on port 1, expected 2", ErrLink},
	{"peer LID of a switch disagrees", mutate(map[int]string{16: strings.Replace(h1Port, "lid 1 4x", "lid 9 4x", 1)}), 16, "peer lid 9 on port 1, expected 1", ErrLink},
	{"peer port GUID disagrees", mutate(map[int]string{9: strings.Replace(swPort1, "(2c90100000003)", "(2c90100000007)", 1)}), 9, "peer port GUID 2c90100000007 on port 1, expected 2c90100000003", fabric.ErrGUID},
	{"LMC out of range", mutate(map[int]string{16: strings.Replace(h1Port, "lmc 0", "lmc 8", 1)}), 16, "lmc 8, expected 0..7", fabric.ErrLMC},
	{"switch LMC out of range", mutate(map[int]string{8: `Switch	4 "S-0002c90000000001"		# "sw1" enhanced port 0 lid 1 lmc 9`}), 8, "lmc 9", fabric.ErrLMC},
	{"unknown node kind", mutate(map[int]string{15: `Hba	1 "H-0002c90100000002"		# "h1"`}), 15, "unknown node kind \"Hba\"", ErrSyntax},
	{"bad width", mutate(map[int]string{9: strings.Replace(swPort1, "4xEDR", "5xEDR", 1)}), 9, "width and speed \"5xEDR\"", ErrSyntax},
	{"bad speed", mutate(map[int]string{9: strings.Replace(swPort1, "4xEDR", "4xFTR", 1)}), 9, "width and speed \"4xFTR\"", ErrSyntax},
	{"missing quotes around a description", mutate(map[int]string{15: `Ca	1 "H-0002c90100000002"		# h1`}), 15, "without quotes", ErrSyntax},
	{"missing closing quote of a description", mutate(map[int]string{15: `Ca	1 "H-0002c90100000002"		# "h1`}), 15, "without closing quote", ErrSyntax},
	{"missing closing quote of a node id", mutate(map[int]string{8: `Switch	4 "S-0002c90000000001		# "sw1" enhanced port 0 lid 1 lmc 0`}), 8, "node id", ErrSyntax},
	{"missing quotes around a peer description", mutate(map[int]string{16: strings.Replace(h1Port, `"sw1"`, `sw1`, 1)}), 16, "peer description", ErrSyntax},
	{"garbage in a node block", mutate(map[int]string{10: `this is garbage`}), 10, "unrecognised line \"this is garbage\" in a node block", ErrSyntax},
	{"non-numeric port", mutate(map[int]string{9: strings.Replace(swPort1, "[1]", "[a]", 1)}), 9, "port number \"[a]", ErrSyntax},
	{"switch line without port count", mutate(map[int]string{8: `Switch	"S-0002c90000000001"		# "sw1" enhanced port 0 lid 1 lmc 0`}), 8, "port count", ErrSyntax},
	{"port count above 254", mutate(map[int]string{8: `Switch	300 "S-0002c90000000001"		# "sw1" enhanced port 0 lid 1 lmc 0`}), 8, "port count \"300\"", ErrSyntax},
	{"link to a node without a block", mutate(map[int]string{10: `[2]	"H-0002c90100000099"[1](2c90100000005) 		# "h2" lid 3 4xEDR`}), 10, "which has no node block", ErrUnknownNode},
	{"peer kind differs from the id prefix", mutate(map[int]string{9: `[1]	"S-0002c90100000002"[1]		# "h1" lid 2 4xEDR`}), 9, "describes GUID 0x2c90100000002 as a Ca, expected the id prefix H-", fabric.ErrKind},
	{"node id prefix differs from the kind", mutate(map[int]string{15: `Ca	1 "S-0002c90100000002"		# "h1"`}), 15, "node id prefix S- on a Ca line", ErrSyntax},
	{"GUID line differs from the node id", mutate(map[int]string{14: `caguid=0x2c90100000009`}), 15, "differs from caguid=0x2c90100000009 at line 14", ErrSyntax},
	{"GUID line of another kind", mutate(map[int]string{14: `switchguid=0x2c90100000002(2c90100000002)`}), 15, "Ca line after a Switch GUID line", ErrSyntax},
	{"CA port line without port GUID", mutate(map[int]string{16: `[1]	"S-0002c90000000001"[1]		# lid 2 lmc 0 "sw1" lid 1 4xEDR`}), 16, "expected [1](<hex port GUID>)", ErrSyntax},
	{"CA port line in switch format", mutate(map[int]string{16: `[1](2c90100000003) 	"S-0002c90000000001"[1]		# "sw1" lid 1 4xEDR`}), 16, "expected # lid <lid> lmc <lmc>", ErrSyntax},
	{"peer port 0", mutate(map[int]string{16: strings.Replace(h1Port, "[1]\t\t#", "[0]\t\t#", 1)}), 16, "peer port 0", fabric.ErrPortRange},
	{"bad external port", mutate(map[int]string{9: strings.Replace(swPort1, "[1]\t", "[1][ext x]\t", 1)}), 9, "external port", ErrSyntax},
	{"external ports disagree", mutate(map[int]string{9: strings.Replace(swPort1, "[1]\t", "[1][ext 3]\t", 1), 16: strings.Replace(h1Port, "[1]\t\t#", "[1][ext 4]\t\t#", 1)}), 16, "peer [ext 4] on port 1, expected [ext 3]", ErrLink},
	{"bad switch line trailer", mutate(map[int]string{8: `Switch	4 "S-0002c90000000001"		# "sw1" turbo port 0 lid 1 lmc 0`}), 8, "after the switch description", ErrSyntax},
	{"junk after a CA description", mutate(map[int]string{15: `Ca	1 "H-0002c90100000002"		# "h1" junk`}), 15, "expected nothing or (scp)", ErrSyntax},
	{"junk after a GUID line", mutate(map[int]string{14: `caguid=0x2c90100000002 junk`}), 14, "after the GUID", ErrSyntax},
	{"second vendid in a block", mutate(map[int]string{5: `vendid=0x2c9`}), 5, "second vendid line in one node block (first at line 4)", ErrSyntax},
	{"block without node line", mutate(map[int]string{15: ``}), 12, "node block has no node line", ErrSyntax},
	{"file ends inside a block", strings.Join(strings.Split(base, "\n")[:20], "\n"), 20, "truncated at line 20: the file ends inside the node block of line 18", ErrTruncated},
	{"port line outside a node block", mutate(map[int]string{3: swPort1}), 3, "port line outside a node block", ErrSyntax},
	{"port line before the node line", mutate(map[int]string{7: swPort1}), 7, "before the node line of the block at line 4", ErrSyntax},
	{"bad chassis heading", mutate(map[int]string{3: `Chassis x`}), 3, "chassis number", ErrSyntax},
	{"Hostname without chassis", mutate(map[int]string{3: `Hostname: foo`}), 3, "before any Chassis heading", ErrSyntax},
	{"bad chassis comment", mutate(map[int]string{6: `sysimgguid=0x2c90000000001		# Chassis 2 name`}), 6, "chassis name \"name\"", ErrSyntax},
	{"empty input", "", 1, "no node blocks", ErrNoNodes},
	{"only comments and noise", "#\n# nothing here\nsrc/query_smp.c:195; bad status 110\n", 3, "no node blocks", ErrNoNodes},
	{"line too long", "#" + strings.Repeat("x", maxLineLen+10) + "\n" + base, 1, "line longer than", ErrSyntax},
}

func TestMalformed(t *testing.T) {
	if len(malformed) < 30 {
		t.Fatalf("only %d malformed inputs, want at least 30", len(malformed))
	}
	for _, c := range malformed {
		t.Run(c.name, func(t *testing.T) {
			res, err := Parse(strings.NewReader(c.text), "bad.topo")
			if err == nil {
				t.Fatalf("Parse succeeded (%d nodes), want an error at line %d containing %q", len(res.Fabric.Nodes), c.line, c.substr)
			}
			e := errAtLine(err, c.line)
			if e == nil {
				t.Fatalf("no error at line %d; got:\n%v", c.line, err)
			}
			if !strings.Contains(e.Msg, c.substr) {
				t.Errorf("error at line %d is %q, want it to contain %q", c.line, e.Msg, c.substr)
			}
			if e.File != "bad.topo" || !strings.HasPrefix(e.Error(), "ibnetdiscover: bad.topo:") {
				t.Errorf("error %q does not name the file", e.Error())
			}
			if !errors.Is(e, c.sentinel) {
				t.Errorf("error %q does not wrap %v", e.Error(), c.sentinel)
			}
		})
	}
}
