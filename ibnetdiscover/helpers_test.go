package ibnetdiscover

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// corpusDir is the shared corpus of real dumps, read in place (never copied
// into the repository).
const corpusDir = "../../shared/corpus/ibnetdiscover"

// corpusFiles lists the corpus dumps, skipping loudly when the corpus is
// not there.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.topo"))
	if len(files) == 0 {
		t.Skipf("SKIPPING: corpus directory %s is absent or empty; these tests need the shared ibnetdiscover corpus next to the repository", corpusDir)
	}
	return files
}

// diffFabric describes the first difference between two fabrics, ignoring
// unexported caches; "" when they are equal.
func diffFabric(a, b *fabric.Fabric) string {
	if !reflect.DeepEqual(a.Header, b.Header) {
		return fmt.Sprintf("header %q != %q", a.Header, b.Header)
	}
	if !reflect.DeepEqual(a.Chassis, b.Chassis) {
		return fmt.Sprintf("chassis %+v != %+v", a.Chassis, b.Chassis)
	}
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("%d nodes != %d nodes", len(a.Nodes), len(b.Nodes))
	}
	for i := range a.Nodes {
		na, nb := a.Nodes[i], b.Nodes[i]
		if reflect.DeepEqual(na, nb) {
			continue
		}
		if len(na.Ports) == len(nb.Ports) {
			for p := range na.Ports {
				if na.Ports[p] != nb.Ports[p] {
					return fmt.Sprintf("node %d port %d: %+v != %+v", i, p, na.Ports[p], nb.Ports[p])
				}
			}
		}
		na.Ports, nb.Ports = nil, nil
		return fmt.Sprintf("node %d: %+v != %+v", i, na, nb)
	}
	return ""
}

// roundTrip writes f, parses the text back and fails unless the fabrics
// are equal; it returns the text.
func roundTrip(t testing.TB, f *fabric.Fabric) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f); err != nil {
		t.Fatalf("Write: %v", err)
	}
	res, err := Parse(bytes.NewReader(buf.Bytes()), "rewritten")
	if err != nil {
		t.Fatalf("Parse(Write(f)): %v\n%s", err, buf.Bytes())
	}
	if d := diffFabric(f, res.Fabric); d != "" {
		t.Fatalf("Parse(Write(f)) differs from f: %s", d)
	}
	return buf.Bytes()
}

func mustParse(t testing.TB, text string) *Result {
	t.Helper()
	res, err := Parse(strings.NewReader(text), "test.topo")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return res
}

// errAtLine finds the *Error at line among the problems of err.
func errAtLine(err error, line int) *Error {
	var list ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			if e.Line == line {
				return e
			}
		}
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e.Line == line {
		return e
	}
	return nil
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
