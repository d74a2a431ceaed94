package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/goleak"

	"github.com/agentfinder/agentfinder/fixtures"
)

// clientFromFlags builds an HTTP client the way a crawler given the flags
// printed by 'agentfinder fixtures --json' would: names resolved through
// --dns-server, ports mapped by --port-map, the CA from --ca-file.
func clientFromFlags(t *testing.T, flags []string) *http.Client {
	t.Helper()
	var dnsServer, caFile string
	ports := map[string]string{}
	allowPrivate := false
	for _, f := range flags {
		name, val, _ := strings.Cut(f, "=")
		switch name {
		case "--dns-server":
			dnsServer = val
		case "--ca-file":
			caFile = val
		case "--allow-private":
			allowPrivate = true
		case "--port-map":
			for _, kv := range strings.Split(val, ",") {
				from, to, _ := strings.Cut(kv, "=")
				ports[from] = to
			}
		default:
			t.Fatalf("unknown flag %q", f)
		}
	}
	if dnsServer == "" || caFile == "" || !allowPrivate || ports["443"] == "" || ports["80"] == "" {
		t.Fatalf("flags incomplete: %v", flags)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in --ca-file")
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(host), dns.TypeA)
		r, _, err := (&dns.Client{Timeout: 5 * time.Second}).ExchangeContext(ctx, m, dnsServer)
		if err != nil {
			return nil, err
		}
		if len(r.Answer) == 0 {
			return nil, fmt.Errorf("resolve %s: %s", host, dns.RcodeToString[r.Rcode])
		}
		if p, ok := ports[port]; ok {
			port = p
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(r.Answer[0].(*dns.A).A.String(), port))
	}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true},
	}
}

func TestRunFixturesJSON(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		code := runFixtures(ctx, []string{"--json"}, pw, &stderr)
		pw.Close()
		done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("read first line: %v (stderr: %s)", err, stderr.String())
	}
	go io.Copy(io.Discard, pr) // nothing else is printed, but never block the command
	var info struct {
		DNSServer string   `json:"dnsServer"`
		CAFile    string   `json:"caFile"`
		HTTPSPort int      `json:"httpsPort"`
		HTTPPort  int      `json:"httpPort"`
		Seeds     []string `json:"seeds"`
		Flags     []string `json:"flags"`
	}
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("first line is not JSON: %v: %q", err, line)
	}
	if !strings.HasPrefix(info.DNSServer, "127.0.0.1:") || info.HTTPSPort == 0 || info.HTTPPort == 0 || info.CAFile == "" {
		t.Fatalf("info = %+v", info)
	}
	if len(info.Seeds) == 0 || info.Seeds[0] != fixtures.HostAcme {
		t.Errorf("seeds = %v, want acme.test first", info.Seeds)
	}
	for _, want := range []string{"--dns-server=" + info.DNSServer, "--ca-file=" + info.CAFile, "--allow-private"} {
		found := false
		for _, f := range info.Flags {
			found = found || f == want
		}
		if !found {
			t.Errorf("flags %v lack %q", info.Flags, want)
		}
	}

	c := clientFromFlags(t, info.Flags)
	for _, u := range []string{
		"https://" + fixtures.HostAcme + fixtures.PathWellKnown, // default port, mapped
		fmt.Sprintf("https://%s:%d/agents/assistant.json", fixtures.HostAcmeAPI, info.HTTPSPort),
		"http://" + fixtures.HostVariants + fixtures.PathWellKnown,
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s with the printed flags: %v", u, err)
		}
		var v map[string]any
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Errorf("GET %s: %d, %v", u, resp.StatusCode, err)
		}
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("fixtures did not stop after cancel")
	}
	if _, err := os.Stat(info.CAFile); err == nil {
		t.Error("CA file left behind")
	}
}

func TestRunFixturesUsage(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := runFixtures(t.Context(), []string{"--bogus"}, &stdout, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if code := runFixtures(t.Context(), []string{"--root", "/does/not/exist"}, &stdout, &stderr); code != 1 {
		t.Errorf("missing root: exit %d, want 1", code)
	}
}

// TestRunFixturesEnvFile: --env-file writes the settings a shell sources
// before crawl or validate, and they reach the fixture web; the file is
// gone when the web stops.
func TestRunFixturesEnvFile(t *testing.T) {
	path := t.TempDir() + "/demo env.sh"
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() { done <- runFixtures(ctx, []string{"--env-file", path}, io.Discard, io.Discard) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no env file after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, err := exec.Command("sh", "-c", `. "$1" && env | grep ^AGENTFINDER_`, "sh", path).Output()
	if err != nil {
		t.Fatalf("sourcing %s: %v", path, err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	if !strings.Contains(env["AGENTFINDER_SEED"], fixtures.HostAcme) || env["AGENTFINDER_ALLOW_PRIVATE"] != "true" {
		t.Errorf("env file gives %v", env)
	}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var vout, verr strings.Builder
	if code := validateMain(t.Context(), []string{"https://" + fixtures.HostAcme + fixtures.PathWellKnown}, getenv, &vout, &verr); code != 0 {
		t.Errorf("validate with the sourced settings: exit %d\n%s%s", code, vout.String(), verr.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("fixtures exit %d", code)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("env file left behind: %v", err)
	}
}
