package e2e_test

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuMeter reads the CPU time this process (the benchmark's clients and
// servers) and the Meilisearch process serving a URL have used: a
// per-request cost the load of a shared machine moves much less than
// wall-clock latency.
type cpuMeter struct{ meiliPID int }

// newCPUMeter finds the Meilisearch process listening at meiliURL (its
// --http-addr on the command line); 0 when none is found (its CPU then
// reads 0).
func newCPUMeter(meiliURL string) cpuMeter {
	u, err := url.Parse(meiliURL)
	if err != nil {
		return cpuMeter{}
	}
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("--http-addr\x00"+u.Host+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		return cpuMeter{meiliPID: pid}
	}
	return cpuMeter{}
}

// read returns the CPU time used so far by this process and by Meilisearch.
func (m cpuMeter) read() (self, meili time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if m.meiliPID == 0 {
		return self, 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(m.meiliPID) + "/stat")
	if err != nil {
		return self, 0
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// field of stat, utime and stime the 14th and 15th (clock ticks, 100 a
	// second on Linux).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return self, 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return self, time.Duration(ut+st) * 10 * time.Millisecond
}
