package flitsim

import "fmt"

// RunOptions control one simulation run. Zero fields take defaults.
type RunOptions struct {
	// Seed drives every random choice of the run (arrival times,
	// destinations, the random permutation); equal seeds give equal
	// results.
	Seed uint64
	// Warmup cycles are simulated before the measurement window (default
	// 1000); Measure is the window's length (default 10000). Packets
	// created inside the window are measured.
	Warmup, Measure int64
	// Drain bounds the cycles simulated after the window to deliver the
	// measured packets (default Measure); sources keep injecting
	// meanwhile. Measured packets still undelivered are reported as
	// Result.Unfinished.
	Drain int64
	// MaxCycles bounds finite runs (Shift, Traffic.Messages > 0; default
	// 10,000,000).
	MaxCycles int64
	// DeadlockWindow is the number of cycles a non-empty buffer may go
	// without sending a flit before it counts as blocked; the blocked
	// buffers are checked for a wait-for cycle every DeadlockWindow
	// cycles (default 2000; negative disables detection).
	DeadlockWindow int64
	// SourceQueue bounds the packets waiting at an open-loop source
	// (default 256; negative: no bound). A message that would exceed it
	// is refused and counted (Result.Refused): past saturation the
	// source queues stop growing, so memory stays bounded, and the run's
	// verdict is unstable. Finite patterns are never refused.
	SourceQueue int
	// StopUnstable ends an open-loop run at the first refused message
	// once the warm-up is over (as BookSim2 stops an unstable
	// simulation); the window then ends there.
	StopUnstable bool
	// OnDeliver, when set, is called for every delivered packet, in
	// delivery order, from the goroutine running the simulation.
	OnDeliver func(Delivery)
}

// DefaultSourceQueue is RunOptions.SourceQueue's default, in packets.
const DefaultSourceQueue = 256

// Delivery describes one delivered packet (see RunOptions.OnDeliver).
type Delivery struct {
	Src, Dst  int32 // nodes
	Class     uint8
	Seq       int64 // the packet's number among the packets of its source, from 0
	Created   int64 // cycle the message was created
	Injected  int64 // cycle the head flit left the source
	Delivered int64 // cycle the tail flit arrived
	Measured  bool
}

func (o RunOptions) withDefaults() RunOptions {
	if o.Warmup == 0 {
		o.Warmup = 1000
	}
	if o.Measure == 0 {
		o.Measure = 10000
	}
	if o.Drain == 0 {
		o.Drain = o.Measure
	}
	if o.MaxCycles == 0 {
		o.MaxCycles = 10_000_000
	}
	if o.DeadlockWindow == 0 {
		o.DeadlockWindow = 2000
	}
	if o.SourceQueue == 0 {
		o.SourceQueue = DefaultSourceQueue
	}
	return o
}

func (o RunOptions) validate() error {
	if o.Warmup < 0 || o.Measure < 1 || o.Drain < 0 || o.MaxCycles < 1 {
		return fmt.Errorf("flitsim: cycles warm-up %d, measure %d, drain %d, max %d: expected warm-up, drain >= 0 and measure, max >= 1: %w",
			o.Warmup, o.Measure, o.Drain, o.MaxCycles, ErrConfig)
	}
	return nil
}
