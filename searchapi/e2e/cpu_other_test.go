//go:build !linux

package e2e_test

import "time"

// cpuMeter reads CPU time on Linux only; elsewhere it reads 0.
type cpuMeter struct{}

func newCPUMeter(string) cpuMeter { return cpuMeter{} }

func (cpuMeter) read() (self, meili time.Duration) { return 0, 0 }
