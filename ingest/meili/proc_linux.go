package meili

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// childAttr makes the managed Meilisearch a process group of its own and
// has the kernel send it SIGTERM when the process that started it dies,
// however it dies (SIGKILL, a crash), so it is never left running on its
// own. (The signal follows the thread that started it; Go keeps threads
// alive unless a goroutine locked to one exits, which ours never do.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// alive reports whether pid is a running process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// servesDB reports whether pid runs with --db-path naming dbPath (a
// relative path taken from the process's working directory); known is
// false when its command line cannot be read.
func servesDB(pid int, dbPath string) (owns, known bool) {
	proc := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		return false, false
	}
	want, err := filepath.Abs(dbPath)
	if err != nil {
		return false, false
	}
	args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
	for i := 0; i+1 < len(args); i++ {
		if string(args[i]) != "--db-path" {
			continue
		}
		got := string(args[i+1])
		if !filepath.IsAbs(got) {
			cwd, err := os.Readlink(proc + "/cwd")
			if err != nil {
				return false, false
			}
			got = filepath.Join(cwd, got)
		}
		return filepath.Clean(got) == want, true
	}
	return false, true
}
