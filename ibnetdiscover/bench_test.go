package ibnetdiscover

import (
	"bytes"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// The big fixture is the full 3-level folded Clos of radix 36: 11,664
// hosts, 1,620 switches, 23,328 cables; built once.
var clos3 struct {
	once sync.Once
	f    *fabric.Fabric
	text []byte
	err  error
}

func clos3Fixture(b *testing.B) (*fabric.Fabric, []byte) {
	b.Helper()
	clos3.once.Do(func() {
		tp, err := topo.Clos3(36)
		if err != nil {
			clos3.err = err
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, tp.Fabric); err != nil {
			clos3.err = err
			return
		}
		clos3.f, clos3.text = tp.Fabric, buf.Bytes()
	})
	if clos3.err != nil {
		b.Fatalf("Clos3(36) fixture: %v", clos3.err)
	}
	return clos3.f, clos3.text
}

func BenchmarkParseClos3_r36(b *testing.B) {
	_, text := clos3Fixture(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(text), "clos3"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteClos3_r36(b *testing.B) {
	f, text := clos3Fixture(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteIBSimClos3_r36(b *testing.B) {
	f, text := clos3Fixture(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteIBSim(io.Discard, f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseHPCCluster parses a real 152-node dump.
func BenchmarkParseHPCCluster(b *testing.B) {
	corpusFiles(b)
	text := readFile(b, filepath.Join(corpusDir, "hpc-cluster-2014-8sw-144ca.topo"))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(text), "hpc"); err != nil {
			b.Fatal(err)
		}
	}
}
