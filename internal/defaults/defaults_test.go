package defaults

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/topo"
)

// The embedded dump must be exactly what the generator writes, so the
// default fabric never drifts from the code (make default-fabric).
func TestDefaultIsGeneratorOutput(t *testing.T) {
	tp, err := topo.Clos2(36)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ibnetdiscover.Write(&buf, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	if buf.String() != Dump() {
		t.Fatal("internal/defaults/default.topo differs from `nuesm gen " + Generator + "`: run make default-fabric")
	}
	res, err := Fabric()
	if err != nil {
		t.Fatal(err)
	}
	f := res.Fabric
	if f.Count(fabric.Switch) != 54 || f.Count(fabric.CA) != 648 {
		t.Fatalf("default fabric: %d switches, %d CAs; want 54 and 648", f.Count(fabric.Switch), f.Count(fabric.CA))
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("default fabric has warnings: %v", res.Warnings)
	}
	if f.MaxLID() != 54+648 {
		t.Fatalf("max LID %d, want every endpoint numbered 1..702", f.MaxLID())
	}
}

func TestMaxDumpBytes(t *testing.T) {
	for v, want := range map[string]int64{"": ibnetdiscover.DefaultMaxBytes, "1": 1, "1048576": 1 << 20} {
		t.Setenv(EnvMaxDumpBytes, v)
		if n, err := MaxDumpBytes(); err != nil || n != want {
			t.Errorf("%s=%q: %d, %v, want %d", EnvMaxDumpBytes, v, n, err, want)
		}
	}
	for _, v := range []string{"0", "-5", "1e6", "256MiB", " 12"} {
		t.Setenv(EnvMaxDumpBytes, v)
		if _, err := MaxDumpBytes(); err == nil || !strings.Contains(err.Error(), EnvMaxDumpBytes+"=") {
			t.Errorf("%s=%q: %v, want an error naming the variable", EnvMaxDumpBytes, v, err)
		}
	}
}
