//go:build !linux

package main

import "syscall"

// makeRunProcAttr: elsewhere than Linux a process cannot ask for a signal
// when its parent dies; the test's cleanup stops make run.
func makeRunProcAttr() *syscall.SysProcAttr { return nil }
