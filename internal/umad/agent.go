package umad

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// The agent protocol: the deployer writes one Batch per line (JSON) on
// the agent's standard input and reads one Reply per line from its
// standard output, in order.

// Op is one SMP of a batch.
type Op struct {
	Set  bool   `json:"set,omitempty"` // SubnSet; else SubnGet
	Attr uint16 `json:"attr"`
	Mod  uint32 `json:"mod"`
	Path string `json:"path"`           // "0,p1,p2,…"
	Data string `json:"data,omitempty"` // 64 bytes in hex, with Set
}

// Batch is a set of SMPs sent together (at most Parallel in flight).
type Batch struct {
	ID  int64 `json:"id"`
	Ops []Op  `json:"ops"`
}

// Result is the answer to one Op: the GetResp's data (hex), or an error;
// NoAnswer marks an error that is ErrTimeout (no answer after every try),
// which the error's text alone cannot carry across the pipe.
type Result struct {
	Data     string `json:"data,omitempty"`
	Err      string `json:"err,omitempty"`
	NoAnswer bool   `json:"no_answer,omitempty"`
}

// ResultError is a Result's error on the deployer's side; it is
// ErrTimeout when the agent got no answer.
type ResultError struct {
	Msg      string
	NoAnswer bool
}

func (e *ResultError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrTimeout) hold for an SMP that got no answer.
func (e *ResultError) Is(target error) bool { return e.NoAnswer && target == ErrTimeout }

// Reply answers a batch, its results in the order of its ops.
type Reply struct {
	ID      int64    `json:"id"`
	Results []Result `json:"results"`
	Err     string   `json:"err,omitempty"` // the batch could not be read
}

// Doer sends one SMP (a *Port's Do with fixed options).
type Doer func(ctx context.Context, r Request) (Response, error)

// Serve answers batches from in on out until in ends or ctx is done.
// parallel bounds the SMPs in flight.
func Serve(ctx context.Context, in io.Reader, out io.Writer, do Doer, parallel int) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var b Batch
		var rep Reply
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			rep.Err = fmt.Sprintf("reading a batch: %v", err)
		} else {
			rep = Reply{ID: b.ID, Results: runBatch(ctx, b.Ops, do, parallel)}
		}
		if err := enc.Encode(&rep); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return sc.Err()
}

func runBatch(ctx context.Context, ops []Op, do Doer, parallel int) []Result {
	res := make([]Result, len(ops))
	sem := make(chan struct{}, max(1, parallel))
	var wg sync.WaitGroup
	for i := range ops {
		req, err := ops[i].request()
		if err != nil {
			res[i].Err = err.Error()
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := do(ctx, req)
			if err != nil {
				res[i].Err, res[i].NoAnswer = err.Error(), errors.Is(err, ErrTimeout)
				return
			}
			res[i].Data = hex.EncodeToString(r.Data[:])
		}()
	}
	wg.Wait()
	return res
}

func (o *Op) request() (Request, error) {
	p, err := ParsePath(o.Path)
	if err != nil {
		return Request{}, err
	}
	r := Request{Method: MethodGet, AttrID: o.Attr, AttrMod: o.Mod, Path: p}
	if o.Set {
		r.Method = MethodSet
		d, err := hex.DecodeString(o.Data)
		if err != nil || len(d) != DataSize {
			return Request{}, fmt.Errorf("SubnSet data %q: expected %d bytes in hex", o.Data, DataSize)
		}
		copy(r.Data[:], d)
	}
	return r, nil
}

// SetOp and GetOp build the ops of a batch.
func SetOp(attr uint16, mod uint32, path string, data [DataSize]byte) Op {
	return Op{Set: true, Attr: attr, Mod: mod, Path: path, Data: hex.EncodeToString(data[:])}
}

// GetOp builds a SubnGet op.
func GetOp(attr uint16, mod uint32, path string) Op {
	return Op{Attr: attr, Mod: mod, Path: path}
}

// Data decodes a result's data.
func (r *Result) Bytes() ([DataSize]byte, error) {
	var d [DataSize]byte
	if r.Err != "" {
		return d, &ResultError{Msg: r.Err, NoAnswer: r.NoAnswer}
	}
	b, err := hex.DecodeString(r.Data)
	if err != nil || len(b) != DataSize {
		return d, fmt.Errorf("answer data %q: expected %d bytes in hex", r.Data, DataSize)
	}
	copy(d[:], b)
	return d, nil
}

// ServeDevice opens the umad device and answers batches from in on out
// (Serve) with the given M_Key, bounds and SMPs in flight, until in ends
// or ctx is done: the body of an agent co-process.
func ServeDevice(ctx context.Context, device string, in io.Reader, out io.Writer, mkey uint64, opt Options, parallel int) error {
	port, err := Open(device)
	if err != nil {
		return err
	}
	defer port.Close()
	do := func(ctx context.Context, r Request) (Response, error) {
		r.MKey = mkey
		return port.Do(ctx, r, opt)
	}
	return Serve(ctx, in, out, do, parallel)
}

// ServeIfChild makes a program re-executed as an agent (a test binary
// started with env=1, the simulator's LD_PRELOAD library loaded at exec)
// serve umad0 on its standard input and output, then exit; otherwise it
// returns.
func ServeIfChild(env string) {
	if os.Getenv(env) != "1" {
		return
	}
	opt := Options{Timeout: time.Second, Retries: 2}
	if err := ServeDevice(context.Background(), "/dev/infiniband/umad0", os.Stdin, os.Stdout, 0, opt, 8); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
