package enginetest

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime is the process's user plus system CPU time so far (0 if the
// system does not say).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the CPU time per operation since start (a CPUTime):
// on a shared machine it moves less with the load than the wall time.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(CPUTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}
