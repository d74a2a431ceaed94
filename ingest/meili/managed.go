package meili

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ManagedConfig says how to start a managed Meilisearch.
type ManagedConfig struct {
	// Bin is the binary to run, as given by AGENTFINDER_MEILI_BIN (cmd reads
	// the environment). Empty: ./.bin/meilisearch, then meilisearch on PATH.
	Bin string
	// DataDir holds the database, dumps, snapshots, the master key and the
	// log. Default "./data/meili".
	DataDir string
	// Logger receives lifecycle logs; nil discards. Meilisearch's own output
	// goes to DataDir/meilisearch.log.
	Logger *slog.Logger
	// StartTimeout bounds the wait for /health. Default 60s.
	StartTimeout time.Duration
	// MaxRestarts is how many restarts in a row may fail, or die within
	// StableAfter, before the supervisor gives up and Health reports the
	// process beyond recovery. 0 means 5; negative means never restart.
	MaxRestarts int
	// RestartBackoff is the wait before the first restart after an
	// unexpected exit, doubled per attempt up to 30s. 0 means 1s.
	RestartBackoff time.Duration
	// StableAfter is how long a process must run for its death to count as
	// a new failure rather than another in a row. 0 means 1m.
	StableAfter time.Duration
	// Metrics, when set, receives agentfinder_meili_managed_up,
	// _exits_total and _restarts_total; StartManaged fails if the names are
	// taken.
	Metrics prometheus.Registerer
	// Replicated runs it as a replica of the index write log
	// (--experimental-replication-parameters): task ids come from the log,
	// and automatic task clean-up is off (the log carries clean-ups).
	Replicated bool
}

// maxRestartBackoff caps the doubling of ManagedConfig.RestartBackoff.
const maxRestartBackoff = 30 * time.Second

// Managed is a supervised Meilisearch child process on a loopback port:
// when it exits unexpectedly, the exit is logged and the process restarted
// on the same address, key and data, with backoff, until MaxRestarts
// attempts in a row have failed. Stop it with Stop; it is not stopped when
// the context given to StartManaged ends.
type Managed struct {
	// URL is the server's base URL (http://127.0.0.1:PORT).
	URL string
	// APIKey is the master key, kept in DataDir/master.key (0600).
	APIKey string
	// Bin is the binary that was started.
	Bin string

	cfg     ManagedConfig
	addr    string
	metrics *managedMetrics // nil: none

	mu       sync.Mutex
	proc     *process           // the running child; nil when none runs
	cancel   context.CancelFunc // ends the current supervision
	superved chan struct{}      // closed when the current supervisor returns
	state    string             // stateRunning, ...
	restarts int                // successful restarts since StartManaged
	note     string             // what happened last, for Health
}

// Supervision states, as Health reports them.
const (
	stateRunning    = "running"
	stateRestarting = "restarting"
	stateFailed     = "failed"
	stateStopped    = "stopped"
)

// process is one run of the binary.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	exit    chan struct{} // closed once the process has been waited for
	err     error         // Wait's result, set before exit closes
}

// keyFile is the master key's file name inside the data directory.
const keyFile = "master.key"

// StartManaged starts Meilisearch with its data under cfg.DataDir, on a free
// loopback port, with a master key generated on first start and reused after.
// It returns once /health answers, with the process supervised. The error
// names every binary it tried.
func StartManaged(ctx context.Context, cfg ManagedConfig) (*Managed, error) {
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(".", "data", "meili")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if cfg.MaxRestarts == 0 {
		cfg.MaxRestarts = 5
	}
	if cfg.RestartBackoff <= 0 {
		cfg.RestartBackoff = time.Second
	}
	if cfg.StableAfter <= 0 {
		cfg.StableAfter = time.Minute
	}
	bin, err := findBinary(cfg.Bin)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("managed meilisearch: data dir: %w", err)
	}
	key, err := masterKey(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("managed meilisearch: free port: %w", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	m := &Managed{URL: "http://" + addr, APIKey: key, Bin: bin, cfg: cfg, addr: addr, state: stateStopped}
	if m.metrics, err = newManagedMetrics(cfg.Metrics); err != nil {
		return nil, err
	}
	if err := m.stopOrphan(m.dbPath()); err != nil {
		return nil, err
	}
	if err := m.start(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// dbPath is the database directory the managed Meilisearch serves.
func (m *Managed) dbPath() string { return filepath.Join(m.cfg.DataDir, "db") }

// findBinary returns the first Meilisearch binary that exists: explicit,
// ./.bin/meilisearch, then PATH.
func findBinary(explicit string) (string, error) {
	var tried []string
	if explicit != "" {
		if isExecutable(explicit) {
			return explicit, nil
		}
		tried = append(tried, explicit+" (AGENTFINDER_MEILI_BIN)")
	}
	local := filepath.Join(".", ".bin", "meilisearch")
	if isExecutable(local) {
		if abs, err := filepath.Abs(local); err == nil {
			return abs, nil
		}
		return local, nil
	}
	tried = append(tried, local)
	if p, err := exec.LookPath("meilisearch"); err == nil {
		return p, nil
	}
	tried = append(tried, "meilisearch on PATH")
	return "", fmt.Errorf("managed meilisearch: no binary found (tried %s); run `make meilisearch` or set MEILI_URL and MEILI_API_KEY",
		strings.Join(tried, ", "))
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// masterKey reads the key from dir, or generates and stores it (0600).
func masterKey(dir string) (string, error) {
	p := filepath.Join(dir, keyFile)
	b, err := os.ReadFile(p)
	if err == nil {
		if k := strings.TrimSpace(string(b)); len(k) >= 16 {
			return k, nil
		}
		return "", fmt.Errorf("managed meilisearch: %s holds no usable key (16 bytes or more)", p)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("managed meilisearch: read master key: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("managed meilisearch: generate master key: %w", err)
	}
	k := hex.EncodeToString(raw[:])
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("managed meilisearch: store master key: %w", err)
	}
	if _, err := f.WriteString(k + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("managed meilisearch: store master key: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("managed meilisearch: store master key: %w", err)
	}
	return k, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// spawn starts the binary on m.addr; a goroutine waits for it and closes
// its log file.
func (m *Managed) spawn() (*process, error) {
	dir := m.cfg.DataDir
	logf, err := os.OpenFile(filepath.Join(dir, "meilisearch.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("managed meilisearch: log file: %w", err)
	}
	args := []string{
		"--http-addr", m.addr,
		"--db-path", m.dbPath(),
		"--dump-dir", filepath.Join(dir, "dumps"),
		"--snapshot-dir", filepath.Join(dir, "snapshots"),
		"--env", "production",
		"--no-analytics",
		"--log-level", "WARN",
	}
	if m.cfg.Replicated {
		args = append(args, "--experimental-replication-parameters")
	}
	cmd := exec.Command(m.Bin, args...)
	// The key goes through the environment, not argv, so ps does not show it.
	cmd.Env = append(os.Environ(), "MEILI_MASTER_KEY="+m.APIKey)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("managed meilisearch: start %s: %w", m.Bin, err)
	}
	p := &process{cmd: cmd, started: time.Now(), exit: make(chan struct{})}
	m.recordPID(cmd.Process.Pid)
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		m.forgetPID(cmd.Process.Pid)
		close(p.exit)
	}()
	m.cfg.Logger.Info("meilisearch starting", "bin", m.Bin, "url", m.URL, "pid", cmd.Process.Pid, "data", dir)
	return p, nil
}

// launch spawns the process and waits until it is healthy; on failure the
// process is gone when it returns.
func (m *Managed) launch(ctx context.Context) (*process, error) {
	p, err := m.spawn()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.NewTimer(m.cfg.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if healthy(ctx, hc, m.URL) {
			m.cfg.Logger.Info("meilisearch healthy", "url", m.URL)
			return p, nil
		}
		select {
		case <-p.exit:
			return nil, fmt.Errorf("managed meilisearch: %s exited during start: %s", m.Bin, m.logTail())
		case <-deadline.C:
			p.halt(true)
			return nil, fmt.Errorf("managed meilisearch: %s not healthy at %s after %s: %s", m.Bin, m.URL, m.cfg.StartTimeout, m.logTail())
		case <-ctx.Done():
			p.halt(true)
			return nil, fmt.Errorf("managed meilisearch: start: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// start launches the process and supervises it.
func (m *Managed) start(ctx context.Context) error {
	p, err := m.launch(ctx)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	m.mu.Lock()
	m.proc, m.cancel, m.superved = p, cancel, done
	m.state = stateRunning
	m.mu.Unlock()
	m.metrics.setUp(true)
	go m.supervise(sctx, p, done)
	return nil
}

func healthy(ctx context.Context, hc *http.Client, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	return resp.StatusCode == http.StatusOK
}

// logTail returns the end of Meilisearch's log for error messages.
func (m *Managed) logTail() string {
	b, err := os.ReadFile(filepath.Join(m.cfg.DataDir, "meilisearch.log"))
	if err != nil {
		return "no log"
	}
	b = bytes.TrimSpace(b)
	if len(b) > 800 {
		b = b[len(b)-800:]
	}
	if len(b) == 0 {
		return "empty log"
	}
	return string(b)
}

// halt ends the process, with SIGKILL when kill is set, else SIGTERM and
// SIGKILL after 10 seconds, and waits for it.
func (p *process) halt(kill bool) {
	if kill {
		_ = p.cmd.Process.Kill()
		<-p.exit
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exit:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exit
	}
}

// stop ends supervision and the process, and waits for both.
func (m *Managed) stop(kill bool) {
	m.mu.Lock()
	p, cancel, done := m.proc, m.cancel, m.superved
	m.proc, m.cancel, m.superved = nil, nil, nil
	m.state, m.note = stateStopped, ""
	m.mu.Unlock()
	m.metrics.setUp(false)
	if cancel != nil {
		cancel()
	}
	if p != nil {
		p.halt(kill)
		m.cfg.Logger.Info("meilisearch stopped", "pid", p.cmd.Process.Pid, "kill", kill)
	}
	if done != nil {
		<-done
	}
}

// Stop stops supervision and the process: SIGTERM, then SIGKILL after 10
// seconds. It is safe to call more than once.
func (m *Managed) Stop() error {
	m.stop(false)
	return nil
}

// Kill stops supervision and kills the process with SIGKILL, as a crash
// would (tests use it to take Meilisearch away and Start to bring it back).
func (m *Managed) Kill() error {
	m.stop(true)
	return nil
}

// Restart stops the process and starts it again on the same address, key
// and data, so clients keep working once it is healthy.
func (m *Managed) Restart(ctx context.Context) error {
	m.stop(false)
	return m.start(ctx)
}

// Start starts a stopped process again on the same address, key and data.
func (m *Managed) Start(ctx context.Context) error {
	m.mu.Lock()
	running := m.state == stateRunning || m.state == stateRestarting
	m.mu.Unlock()
	if running {
		return nil
	}
	m.stop(true) // what a supervisor that gave up left behind
	return m.start(ctx)
}
