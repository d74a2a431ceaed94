//go:build !linux

package meili

import (
	"errors"
	"syscall"
)

// childAttr makes the managed Meilisearch a process group of its own. This
// system cannot have the kernel end it with its parent: a start finds one
// left running through the pid file instead (stopOrphan).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// alive reports whether pid is a process this user may signal.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// servesDB cannot read another process's command line here: unknown.
func servesDB(int, string) (owns, known bool) { return false, false }
