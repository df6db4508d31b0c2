package ibnetdiscover

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// smallDump is a written 2-level fat tree: 8 switches, 16 hosts.
func smallDump(t testing.TB) []byte {
	t.Helper()
	tp, err := topo.FatTree(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkTruncated checks that err is one located error saying "truncated
// at line <line>" on a single line.
func checkTruncated(t *testing.T, err error, line int, what string) {
	t.Helper()
	var e *Error
	if !errors.Is(err, ErrTruncated) || !errors.As(err, &e) {
		t.Fatalf("%s: %v, want an *Error wrapping ErrTruncated", what, err)
	}
	want := "truncated at line " + strconv.Itoa(line)
	if e.Line != line || !strings.HasPrefix(e.Msg, want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%s: %q (line %d), want one line at line %d starting %q", what, err, e.Line, line, want)
	}
}

// TestTruncatedAtEveryLine cuts a dump after each of its lines: every
// cut inside the node blocks is one error saying where it was cut, never
// a list of "has no node block" lines. The exceptions are cuts that
// leave no node block (not a dump) and cuts that lose just the last
// node's block (its one missing node gets the precise error).
func TestTruncatedAtEveryLine(t *testing.T) {
	text := smallDump(t)
	lines := strings.SplitAfter(string(text), "\n")
	truncated := 0
	for k := 1; k < len(lines); k++ {
		prefix := strings.Join(lines[:k], "")
		res, err := Parse(strings.NewReader(prefix), "cut.topo")
		if err == nil {
			// a cut after the first node line leaves a valid dump of
			// one node; cutting blank lines loses nothing
			if len(res.Fabric.Nodes) == 1 || strings.TrimSpace(strings.Join(lines[k:], "")) == "" {
				continue
			}
			t.Fatalf("cut after line %d parses", k)
		}
		switch last := lastTextLine(lines[:k]); {
		case errors.Is(err, ErrTruncated):
			checkTruncated(t, err, last, "cut after line "+strconv.Itoa(k))
			truncated++
		case errors.Is(err, ErrNotDump), errors.Is(err, ErrUnknownNode) && !strings.Contains(err.Error(), "\n"):
		default:
			t.Fatalf("cut after line %d: %v", k, err)
		}
	}
	if truncated < len(lines)*8/10 {
		t.Errorf("only %d of %d cuts say truncated", truncated, len(lines))
	}
}

func lastTextLine(lines []string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return i + 1
		}
	}
	return 0
}

// TestTruncatedMidLine cuts a dump inside lines: a last line without its
// newline that does not parse is reported as the cut.
func TestTruncatedMidLine(t *testing.T) {
	text := smallDump(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		cut := 1 + rng.IntN(len(text)-2)
		if text[cut-1] == '\n' {
			continue
		}
		prefix := text[:cut]
		line := bytes.Count(prefix, []byte{'\n'}) + 1
		res, err := Parse(bytes.NewReader(prefix), "cut.topo")
		if err == nil {
			if len(res.Fabric.Nodes) == 1 {
				continue // cut in the first node's line, after its port count
			}
			t.Fatalf("cut at byte %d (line %d) parses", cut, line)
		}
		if errors.Is(err, ErrNotDump) || errors.Is(err, ErrUnknownNode) && !strings.Contains(err.Error(), "\n") {
			continue
		}
		checkTruncated(t, err, line, "cut at byte "+strconv.Itoa(cut))
	}
}

func TestTruncatedMessages(t *testing.T) {
	text := string(smallDump(t))
	// cut in a port line's width, after a host's node line, in id lines
	i := strings.Index(text, "4xEDR")
	_, err := Parse(strings.NewReader(text[:i+2]), "a.topo")
	if err == nil || !strings.Contains(err.Error(), "(it ends without a newline)") {
		t.Errorf("cut in a width: %v", err)
	}
	lines := strings.SplitAfter(text, "\n")
	for k, l := range lines {
		if strings.HasPrefix(l, "Ca") {
			_, err := Parse(strings.NewReader(strings.Join(lines[:k+1], "")), "b.topo")
			if err == nil || !strings.Contains(err.Error(), "the last node block (line "+strconv.Itoa(k+1)) || !strings.Contains(err.Error(), "lists no cable on 1 port") {
				t.Errorf("cut after a Ca line: %v", err)
			}
			break
		}
	}
	// a node missing in the middle is no truncation: the precise error stays
	i = strings.Index(text, "\nvendid=")
	j := strings.Index(text[i+1:], "\nvendid=") + i + 1
	_, err = Parse(strings.NewReader(text[:i]+text[j:]), "c.topo")
	if err == nil || errors.Is(err, ErrTruncated) || !errors.Is(err, ErrUnknownNode) {
		t.Errorf("a node block missing in the middle: %v", err)
	}
}
