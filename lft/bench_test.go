package lft

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

var benchFix struct {
	once sync.Once
	g    *fabric.Graph
	r    *Routing
	dump []byte
}

// benchFixture: a ring of 128 switches with 16 hosts each (2,176 LIDs,
// 278,528 table entries), random tables.
func benchFixture(b *testing.B) (*fabric.Graph, *Routing, []byte) {
	benchFix.once.Do(func() {
		benchFix.g = ringGraph(b, 128, 16, nil, 0)
		benchFix.r = randomRouting(benchFix.g, 1, randomOpts{})
		var buf bytes.Buffer
		if err := WriteOpenSMLFTs(&buf, benchFix.g, benchFix.r); err != nil {
			b.Fatal(err)
		}
		benchFix.dump = buf.Bytes()
	})
	return benchFix.g, benchFix.r, benchFix.dump
}

func BenchmarkWriteOpenSMLFTs_Ring128(b *testing.B) {
	g, r, dump := benchFixture(b)
	b.SetBytes(int64(len(dump)))
	for b.Loop() {
		if err := WriteOpenSMLFTs(io.Discard, g, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadOpenSMLFTs_Ring128(b *testing.B) {
	g, _, dump := benchFixture(b)
	b.SetBytes(int64(len(dump)))
	for b.Loop() {
		if _, err := ReadOpenSMLFTs(bytes.NewReader(dump), "bench", g); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteCompactLFTs_Ring128(b *testing.B) {
	g, r, _ := benchFixture(b)
	b.SetBytes(int64(len(r.lft)))
	for b.Loop() {
		if err := WriteCompactLFTs(io.Discard, g, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadCompactLFTs_Ring128(b *testing.B) {
	g, r, _ := benchFixture(b)
	var buf bytes.Buffer
	if err := WriteCompactLFTs(&buf, g, r); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(r.lft)))
	for b.Loop() {
		if _, err := ReadCompactLFTs(bytes.NewReader(buf.Bytes()), "bench", g, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
