package main

import "syscall"

// makeRunProcAttr makes the make run a test starts get SIGTERM (and stop
// its demo, as on Ctrl-C) when the test process dies without its cleanup,
// as on a test timeout's panic.
func makeRunProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
