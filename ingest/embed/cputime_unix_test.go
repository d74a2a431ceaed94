//go:build unix

package embed

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time, so benchmarks can report
// cost per operation that does not grow when other processes share the
// machine (wall time does).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
