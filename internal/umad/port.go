package umad

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// ErrTimeout is wrapped when no answer came within the timeout after
// every retry.
var ErrTimeout = errors.New("no answer to the SMP")

// ErrDropped is wrapped (with ErrTimeout) when the port answered a try
// "timed out" well before its timeout ran out: the SMP was dropped on
// its route (ibsim does so at once when a link on a directed route is
// not up; the kernel reports a timeout only once the time is up).
var ErrDropped = errors.New("the SMP was dropped on its route (is a link on it down?)")

// Options bound one SMP.
type Options struct {
	Timeout time.Duration // the first try's (default 200ms)
	Retries int           // tries after the first (0: none)
}

// maxBackoff bounds how far a retry's timeout grows: try k waits
// Timeout·2^k, at most maxBackoff·Timeout. A switch's SMA that answers
// slowly (busy with a sweep) gets more time; a lost SMP (VL15 drops it
// when its buffer is full) costs a few tries of bounded length.
const maxBackoff = 4

// tryTimeout is try k's timeout (k = 0 first).
func (o Options) tryTimeout(k int) time.Duration {
	return o.Timeout * time.Duration(min(1<<min(k, 30), maxBackoff))
}

// transport is a umad device: the kernel's (through libc) or a test's.
type transport interface {
	send(mad *[MADSize]byte, timeoutMS int) error
	// recv waits up to timeoutMS for one MAD; ok is false when none came.
	recv(mad *[MADSize]byte, timeoutMS int) (status uint32, ok bool, err error)
	close() error
}

// Port is an open umad device with a directed-route SMP agent. Do may be
// called concurrently: the answers are matched by transaction id.
type Port struct {
	dev  transport
	sent sync.Mutex // one write at a time
	// slots holds one token per SMP sent and not yet answered (a try
	// given up on keeps its token until its late answer or its expiry).
	slots chan struct{}

	mu        sync.Mutex
	tid       uint32
	pending   map[uint32]chan answer
	abandoned map[uint32]time.Time // tries given up on: when they expire
	err       error                // the reader's failure; every later call fails with it
	dead      chan struct{}        // closed with err set
	done      chan struct{}
	wg        sync.WaitGroup

	trace func(ev string, tid uint32) // tests: "send", "answer", "late", "timeout", "expired"
}

// maxOutstanding bounds the SMPs sent and not yet answered, tries given up
// on included: retries after a stall must not pile up. ibsim's umad2sim
// holds its device lock while its write to ibsim blocks, and its thread
// that takes ibsim's answers needs that lock; once the socket buffers
// hold some 170 SMPs each way, neither moves again. The kernel's QP0
// send queue holds 128 by default.
const maxOutstanding = 64

// abandonGrace is how long after its timeout a try given up on keeps its
// slot when no late answer (nor the kernel's "timed out") comes.
const abandonGrace = time.Second

// errClosed is returned by calls on a closed Port.
var errClosed = errors.New("umad port closed")

type answer struct {
	status uint32 // the umad header's status (an errno, e.g. ETIMEDOUT)
	mad    [MADSize]byte
}

// Open opens a umad device (e.g. /dev/infiniband/umad0) and registers an
// agent for the directed-route SMP class.
func Open(path string) (*Port, error) {
	dev, err := openDevice(path)
	if err != nil {
		return nil, err
	}
	return newPort(dev, uint32(os.Getpid())<<16), nil
}

// newPort starts the reader of dev; the TIDs count up from tid+1.
func newPort(dev transport, tid uint32) *Port {
	p := &Port{dev: dev, pending: map[uint32]chan answer{}, abandoned: map[uint32]time.Time{},
		slots: make(chan struct{}, maxOutstanding), dead: make(chan struct{}), done: make(chan struct{}), tid: tid}
	p.wg.Add(1)
	go p.read()
	return p
}

// read delivers the answers to the waiting calls until Close.
func (p *Port) read() {
	defer p.wg.Done()
	for {
		select {
		case <-p.done:
			return
		default:
		}
		p.expire(time.Now())
		var a answer
		st, ok, err := p.dev.recv(&a.mad, 50)
		if err != nil {
			p.mu.Lock()
			p.err = err
			for _, c := range p.pending {
				close(c)
			}
			p.pending = map[uint32]chan answer{}
			close(p.dead)
			p.mu.Unlock()
			return
		}
		if !ok {
			continue
		}
		a.status = st
		// The kernel (and umad2sim) own the high 32 bits of the id.
		tid := uint32(binary.BigEndian.Uint64(a.mad[offTID:]))
		p.mu.Lock()
		c, mine := p.pending[tid]
		_, late := p.abandoned[tid]
		delete(p.pending, tid)
		delete(p.abandoned, tid)
		if mine || late {
			<-p.slots
		}
		p.mu.Unlock()
		if c != nil {
			p.event("answer", tid)
			c <- a
		} else {
			p.event("late", tid)
		}
	}
}

// expire frees the slots of tries given up on whose grace ran out.
func (p *Port) expire(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for tid, end := range p.abandoned {
		if now.After(end) {
			delete(p.abandoned, tid)
			<-p.slots
			p.event("expired", tid)
		}
	}
}

// Do sends req and returns the GetResp. A try without an answer within
// its timeout (opt.tryTimeout: it grows from try to try), answered "timed
// out" by the port or answered busy is retried up to opt.Retries times,
// each with a new TID: an answer that comes after its try gave up is
// dropped, never taken for a later try's.
func (p *Port) Do(ctx context.Context, req Request, opt Options) (Response, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = 200 * time.Millisecond
	}
	var last error
	for try := 0; try <= opt.Retries; try++ {
		r, err, again := p.try(ctx, &req, opt.tryTimeout(try))
		if !again {
			return r, err
		}
		last = err
	}
	return Response{}, fmt.Errorf("%s attribute 0x%04x modifier %d over %s: %w (%d tries)", methodName(req.Method), req.AttrID, req.AttrMod, req.Path, last, opt.Retries+1)
}

// send sends req once with a new TID (waiting for a slot) and returns
// the TID and the channel its answer comes on.
func (p *Port) send(ctx context.Context, req *Request, timeout time.Duration) (uint32, chan answer, error) {
	p.mu.Lock()
	p.tid++
	tid := p.tid
	p.mu.Unlock()
	mad, err := req.Encode(uint64(tid))
	if err != nil {
		return 0, nil, err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-p.dead:
		return 0, nil, p.failure()
	case <-p.done:
		return 0, nil, errClosed
	}
	c := make(chan answer, 1)
	p.mu.Lock()
	if p.err != nil {
		<-p.slots
		p.mu.Unlock()
		return 0, nil, p.failure()
	}
	p.pending[tid] = c
	p.mu.Unlock()
	p.sent.Lock()
	p.event("send", tid)
	err = p.dev.send(&mad, int(timeout/time.Millisecond))
	p.sent.Unlock()
	if err != nil {
		p.mu.Lock()
		if _, ok := p.pending[tid]; ok {
			delete(p.pending, tid)
			<-p.slots
		}
		p.mu.Unlock()
		return 0, nil, err
	}
	return tid, c, nil
}

// abandon gives up on try tid: its slot is freed by its late answer or
// after its grace.
func (p *Port) abandon(tid uint32, timeout time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pending[tid]; ok {
		delete(p.pending, tid)
		p.abandoned[tid] = time.Now().Add(timeout + abandonGrace)
	}
}

func (p *Port) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return errClosed
	}
	return p.err
}

// try sends req once; again says whether another try may help.
func (p *Port) try(ctx context.Context, req *Request, timeout time.Duration) (Response, error, bool) {
	tid, c, err := p.send(ctx, req, timeout)
	if err != nil {
		return Response{}, err, false
	}
	sentAt := time.Now()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
		p.abandon(tid, timeout)
		return Response{}, ctx.Err(), false
	case <-t.C:
		p.abandon(tid, timeout)
		p.event("timeout", tid)
		return Response{}, fmt.Errorf("%w within %v", ErrTimeout, timeout), true
	case a, ok := <-c:
		if !ok {
			return Response{}, p.failure(), false
		}
		if a.status != 0 {
			return Response{}, statusErr(a.status, time.Since(sentAt), timeout), true
		}
		r, err := Decode(a.mad[:])
		if err != nil {
			return Response{}, err, false
		}
		if err := r.Err(); err != nil {
			return r, err, r.Status&0x1 != 0 // busy: try again
		}
		if r.AttrID != req.AttrID || r.AttrMod != req.AttrMod {
			return r, fmt.Errorf("answer for attribute 0x%04x modifier %d, asked 0x%04x modifier %d", r.AttrID, r.AttrMod, req.AttrID, req.AttrMod), false
		}
		return r, nil, false
	}
}

func (p *Port) event(ev string, tid uint32) {
	if p.trace != nil {
		p.trace(ev, tid)
	}
}

// Close stops the reader and closes the device.
func (p *Port) Close() error {
	close(p.done)
	p.wg.Wait()
	return p.dev.close()
}

func methodName(m uint8) string {
	switch m {
	case MethodGet:
		return "SubnGet"
	case MethodSet:
		return "SubnSet"
	}
	return fmt.Sprintf("method 0x%02x", m)
}

// statusErr describes a try the port answered with a status (an errno)
// after waited of its timeout.
func statusErr(status uint32, waited, timeout time.Duration) error {
	if syscall.Errno(status) == syscall.ETIMEDOUT && waited < timeout/2 {
		return fmt.Errorf("%w: %w: the port reported status %d (%v) after %v of %v", ErrTimeout, ErrDropped, status, syscall.Errno(status), waited.Round(time.Microsecond), timeout)
	}
	return fmt.Errorf("%w: the port reported status %d (%v)", ErrTimeout, status, syscall.Errno(status))
}
