package umad

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestServe answers batches line by line in order: each op's data or
// error in the op's place, a line that is no batch answered with an
// error, a malformed op failed alone.
func TestServe(t *testing.T) {
	var blk [DataSize]byte
	blk[0] = 7
	do := func(_ context.Context, r Request) (Response, error) {
		if r.Path.String() == "0,9" {
			return Response{}, errors.New("no answer")
		}
		res := Response{AttrID: r.AttrID, AttrMod: r.AttrMod, Data: r.Data}
		res.Data[1] = uint8(r.AttrMod)
		return res, nil
	}
	batch, _ := json.Marshal(Batch{ID: 4, Ops: []Op{
		SetOp(AttrLinearForwardTable, 2, "0,1", blk),
		GetOp(AttrLinearForwardTable, 3, "0,9"),
		{Set: true, Attr: AttrLinearForwardTable, Path: "0,1", Data: "zz"},
		GetOp(AttrLinearForwardTable, 1, "1,1"),
	}})
	in := strings.NewReader(string(batch) + "\nnot json\n")
	var out bytes.Buffer
	if err := Serve(context.Background(), in, &out, do, 2); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d answer lines, want 2: %q", len(lines), out.String())
	}
	var rep Reply
	if err := json.Unmarshal([]byte(lines[0]), &rep); err != nil || rep.ID != 4 || len(rep.Results) != 4 {
		t.Fatalf("first answer %q: %v", lines[0], err)
	}
	if d, err := rep.Results[0].Bytes(); err != nil || d[0] != 7 || d[1] != 2 {
		t.Errorf("set: %x %v", d, err)
	}
	for i, want := range []string{"", "no answer", "expected 64 bytes", "directed route"} {
		if i > 0 && !strings.Contains(rep.Results[i].Err, want) {
			t.Errorf("op %d: error %q, want %q", i, rep.Results[i].Err, want)
		}
	}
	if err := json.Unmarshal([]byte(lines[1]), &rep); err != nil || !strings.Contains(rep.Err, "reading a batch") {
		t.Errorf("answer to a bad line: %q (%v)", lines[1], err)
	}
}

// TestServeNoAnswerCrossesThePipe: an SMP that got no answer is
// ErrTimeout on the deployer's side too (the agent's error crosses a
// pipe as text), so that the deployer can tell a switch that does not
// answer from other failures; another error is not.
func TestServeNoAnswerCrossesThePipe(t *testing.T) {
	do := func(_ context.Context, r Request) (Response, error) {
		if r.Path.String() == "0,9" {
			return Response{}, fmt.Errorf("%w: %w: the port reported status 110", ErrTimeout, ErrDropped)
		}
		return Response{}, errors.New("bad status 7")
	}
	batch, _ := json.Marshal(Batch{ID: 1, Ops: []Op{GetOp(AttrLinearForwardTable, 0, "0,9"), GetOp(AttrLinearForwardTable, 0, "0,1")}})
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(string(batch)+"\n"), &out, do, 1); err != nil {
		t.Fatal(err)
	}
	var rep Reply
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Results) != 2 {
		t.Fatalf("answer %q: %v", out.String(), err)
	}
	_, err := rep.Results[0].Bytes()
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "dropped on its route") {
		t.Errorf("no answer: %v, want ErrTimeout with the agent's text", err)
	}
	if _, err := rep.Results[1].Bytes(); err == nil || errors.Is(err, ErrTimeout) {
		t.Errorf("other failure: %v, want an error that is not ErrTimeout", err)
	}
}
