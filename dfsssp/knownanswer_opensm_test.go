package dfsssp

// The known answers of SEEDS.md §001 (DFSSSP fails at 8 VLs on the 8×8×8
// torus with 4 CAs per switch and on Kautz(7,3) with 6) as OpenSM's own
// dfsssp gives them. OpenSM takes tens of seconds on these fabrics, which
// a loaded machine stretches past any sensible test limit; its answers are
// recorded in testdata/opensm-known-answers/ by `make fixtures-opensm`
// (go test -run TestOpenSMKnownAnswers ./dfsssp -args -record-opensm),
// and the test compares our DFSSSP with the recording. The live runs on
// smaller fabrics (TestOpenSMSameLayers) keep checking OpenSM itself.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

var recordOpenSM = flag.Bool("record-opensm", false, "run OpenSM on the known-answer fabrics and rewrite testdata/opensm-known-answers")

// knownAnswerFabrics are the fabrics of the recorded answers.
var knownAnswerFabrics = []fixture{
	{"torus8x8x8", func() (*topo.Topology, error) { return topo.Torus([]int{8, 8, 8}, 4, false) }},
	{"kautz7-3", func() (*topo.Topology, error) { return topo.Kautz(7, 3, 6) }},
}

const knownAnswerDir = "testdata/opensm-known-answers"

// netHash identifies the fabric OpenSM saw: the SHA-256 of the ibsim net
// file written for it.
func netHash(t *testing.T, g *fabric.Graph) string {
	t.Helper()
	var buf bytes.Buffer
	if err := ibnetdiscover.WriteIBSim(&buf, g.F); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// answerLine selects the lines of OpenSM's log a recording keeps: its
// version, the VLs dfsssp needs and has, and the paths per VL.
var answerLine = regexp.MustCompile(`OpenSM \d|Virtual Lanes (needed|available)|[Pp]aths per VL|\d+\. lane: \d+$`)

// TestOpenSMKnownAnswers: OpenSM's dfsssp (recorded) and ours both need 9
// VLs of 8 on the two fabrics, with the same pairs per VL.
func TestOpenSMKnownAnswers(t *testing.T) {
	for _, fx := range knownAnswerFabrics {
		t.Run(fx.name, func(t *testing.T) {
			tp, err := fx.make()
			g := compile(t, tp, err)
			path := filepath.Join(knownAnswerDir, fx.name+".log")
			if *recordOpenSM {
				recordKnownAnswer(t, g, fx.name, path)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (record it: make fixtures-opensm)", err)
			}
			log := string(b)
			if want := "# fabric sha256 " + netHash(t, g) + "\n"; !strings.Contains(log, want) {
				t.Fatalf("%s was recorded on another fabric than %s generates now: record it again (make fixtures-opensm)", path, fx.name)
			}
			needed, avail, err := parseNeeded(log)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			want := lanes(log, "Paths per VL (before balancing)")
			_, st, err := RouteDFSSSP(context.Background(), g, routing.Options{MaxVLs: avail})
			var ve *routing.VLError
			if needed != 9 || avail != 8 || !errors.As(err, &ve) || ve.Needed != needed || !slices.Equal(st.LayerPairs, want) {
				t.Fatalf("OpenSM needs %d of %d VLs, pairs per VL %v; we: %v, %v", needed, avail, want, err, st.LayerPairs)
			}
		})
	}
}

// recordKnownAnswer runs OpenSM's dfsssp on g and writes the answer lines
// of its log to path, under a header naming the fabric.
func recordKnownAnswer(t *testing.T, g *fabric.Graph, name, path string) {
	osm := runOpenSM(t, g, "dfsssp")
	var b strings.Builder
	fmt.Fprintf(&b, "# OpenSM's dfsssp on %s (dfsssp/knownanswer_opensm_test.go), recorded by make fixtures-opensm\n", name)
	fmt.Fprintf(&b, "# fabric sha256 %s\n", netHash(t, g))
	for _, l := range strings.Split(osm.Log(), "\n") {
		if answerLine.MatchString(l) {
			b.WriteString(l + "\n")
		}
	}
	if _, _, err := parseNeeded(b.String()); err != nil {
		t.Fatalf("OpenSM's log holds no answer: %v\n%s", err, osm.Log())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", path)
}
