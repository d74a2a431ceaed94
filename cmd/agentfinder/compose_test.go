package main

// TestComposeFile holds docker-compose.yml to the program and the
// Dockerfile without a Docker engine (none runs in CI): every agentfinder
// service runs a command the binary has, with flags and environment
// variables its --help lists; published ports are the ones its server
// listens on; Meilisearch and a sourced settings file are reachable where
// they are named; volumes, build contexts, build arguments, health checks
// and dependencies fit together. (TestComposeClusterProfile goes deeper into
// the cluster profile.) It does not prove the images build or the
// containers start: no Docker engine runs here.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeProblems collects what the compose checks find wrong (a test
// of the checks feeds them broken files and reads these).
type composeProblems struct{ list []string }

func (p *composeProblems) Errorf(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

// stackFile is the part of docker-compose.yml the checks read.
type stackFile struct {
	Services map[string]stackService `yaml:"services"`
	Volumes  map[string]any          `yaml:"volumes"`
}

type stackService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string            `yaml:"context"`
		Dockerfile string            `yaml:"dockerfile"`
		Args       map[string]string `yaml:"args"`
	} `yaml:"build"`
	Command     []string          `yaml:"command"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	NetworkMode string            `yaml:"network_mode"`
	Profiles    []string          `yaml:"profiles"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// readStack reads raw, a docker-compose.yml, with its variables interpolated as
// Compose would with none set: defaults taken, required ones given a
// value (as the README's export line does). It also returns the names
// the file interpolates.
func readStack(raw []byte) (stackFile, map[string]bool, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return stackFile{}, nil, fmt.Errorf("docker-compose.yml: %w", err)
	}
	vars := map[string]bool{}
	interpolateNode(&doc, vars)
	var cf stackFile
	if err := doc.Decode(&cf); err != nil {
		return stackFile{}, nil, fmt.Errorf("docker-compose.yml: %w", err)
	}
	if len(cf.Services) == 0 {
		return stackFile{}, nil, fmt.Errorf("docker-compose.yml: no services")
	}
	return cf, vars, nil
}

// composeFileText is docker-compose.yml.
func composeFileText(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// interpolateNode replaces the variables of n's scalars (values and keys, as
// Compose does after parsing), noting their names in vars. Aliases share
// their anchor's nodes, which are replaced where they stand.
func interpolateNode(n *yaml.Node, vars map[string]bool) {
	if n.Kind == yaml.ScalarNode {
		n.Value = composeVarRE.ReplaceAllStringFunc(n.Value, func(m string) string {
			g := composeVarRE.FindStringSubmatch(m)
			vars[g[1]] = true
			switch g[2] {
			case ":-":
				return g[3]
			case ":?":
				return "required-" + strings.ToLower(g[1])
			}
			return ""
		})
	}
	for _, c := range n.Content {
		interpolateNode(c, vars)
	}
}

// dockerImage is what the checks read of the Dockerfile's last stage.
type dockerImage struct {
	entrypoint, cmd []string
	env             map[string]string
	args            map[string]bool // ARG names of every stage
	binDir          string          // where the agentfinder binary is copied
	packages        []string        // apt-get installed
}

// readDockerfile reads a Dockerfile.
func readDockerfile(t *testing.T, file string) dockerImage {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	img := dockerImage{env: map[string]string{}, args: map[string]bool{}}
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), f[0]))
		switch f[0] {
		case "FROM":
			img.env = map[string]string{} // a stage starts from its base
		case "ARG":
			name, _, _ := strings.Cut(f[1], "=")
			img.args[name] = true
		case "ENV":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				img.env[k] = v
			}
		case "ENTRYPOINT", "CMD":
			var argv []string
			if err := json.Unmarshal([]byte(rest), &argv); err != nil {
				t.Fatalf("Dockerfile %s %s: use the exec form: %v", f[0], rest, err)
			}
			if f[0] == "ENTRYPOINT" {
				img.entrypoint = argv
			} else {
				img.cmd = argv
			}
		case "COPY":
			if strings.HasSuffix(f[len(f)-1], "/agentfinder") {
				img.binDir = path.Dir(f[len(f)-1])
			}
		case "RUN":
			if i := slices.Index(f, "install"); i > 0 && f[i-1] == "apt-get" {
				for _, p := range f[i+1:] {
					if p == "&&" {
						break
					}
					if !strings.HasPrefix(p, "-") {
						img.packages = append(img.packages, p)
					}
				}
			}
		}
	}
	return img
}

// commandHelp is what `agentfinder COMMAND --help` says the command reads:
// its flags and environment variables.
type commandHelp struct {
	flags, env map[string]bool
}

var helpFlagRE = regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`)
var helpEnvRE = regexp.MustCompile(`env ([A-Z][A-Z0-9_]+)|(?m)^  ([A-Z][A-Z0-9_]+)$`)

// helpOf runs `agentfinder name --help` and reads its flags and variables
// (once per command: helpCache keeps them).
func helpOf(t *testing.T, name string) commandHelp {
	t.Helper()
	if h, ok := helpCache[name]; ok {
		return h
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{name, "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("agentfinder %s --help: exit %d: %s", name, code, stderr.String())
	}
	h := commandHelp{flags: map[string]bool{}, env: map[string]bool{}}
	for _, m := range helpFlagRE.FindAllStringSubmatch(stdout.String(), -1) {
		h.flags[m[1]] = true
	}
	for _, m := range helpEnvRE.FindAllStringSubmatch(stdout.String(), -1) {
		h.env[m[1]+m[2]] = true
	}
	if len(h.flags) == 0 {
		t.Fatalf("agentfinder %s --help lists no flags", name)
	}
	helpCache[name] = h
	return h
}

// helpCache holds helpOf's answers (tests of this package run one at a time).
var helpCache = map[string]commandHelp{}

// composeRun is one agentfinder command line a service runs.
type composeRun struct {
	service string
	argv    []string // the subcommand and its arguments
	sources []string // files the service's shell sources first
}

// agentfinderRun finds the agentfinder command line of an agentfinder
// image's service: its command under the image's entrypoint, or the
// `agentfinder ...` of a `sh -c` script, with the files it sources.
func agentfinderRun(p *composeProblems, name string, s stackService, img dockerImage) (composeRun, bool) {
	entry, cmd := img.entrypoint, img.cmd
	if s.Entrypoint != nil {
		entry, cmd = s.Entrypoint, nil
	}
	if s.Command != nil {
		cmd = s.Command
	}
	if slices.Equal(entry, []string{img.binDir + "/agentfinder"}) {
		return composeRun{service: name, argv: cmd}, len(cmd) > 0
	}
	if !slices.Equal(entry, []string{"/bin/sh", "-c"}) || len(cmd) != 1 {
		p.Errorf("service %s: entrypoint %q command %q: neither the image's agentfinder nor sh -c SCRIPT", name, entry, cmd)
		return composeRun{}, false
	}
	r := composeRun{service: name}
	for _, part := range strings.Split(cmd[0], "&&") {
		f := strings.Fields(part)
		if len(f) > 0 && f[0] == "exec" {
			f = f[1:]
		}
		switch {
		case len(f) == 2 && f[0] == ".":
			r.sources = append(r.sources, f[1])
		case len(f) > 1 && f[0] == "agentfinder" && r.argv == nil:
			// Found on the image's PATH: Debian's default PATH holds /usr/local/bin.
			if img.binDir != "/usr/local/bin" {
				p.Errorf("service %s: runs agentfinder by name, but the image puts it in %s", name, img.binDir)
			}
			r.argv = f[1:]
		default:
			p.Errorf("service %s: script part %q: not understood here (teach TestComposeFile)", name, part)
		}
	}
	if r.argv == nil {
		p.Errorf("service %s: script %q runs no agentfinder command", name, cmd[0])
		return composeRun{}, false
	}
	return r, true
}

func TestComposeFile(t *testing.T) {
	if problems := checkCompose(t, composeFileText(t)); len(problems) > 0 {
		t.Errorf("docker-compose.yml:\n%s", strings.Join(problems, "\n"))
	}
}

// checkCompose returns what is wrong with raw, a docker-compose.yml of this
// repository (its Dockerfile and .ci/run.sh beside it).
func checkCompose(t *testing.T, raw []byte) []string {
	t.Helper()
	p := &composeProblems{}
	cf, _, err := readStack(raw)
	if err != nil {
		return []string{err.Error()}
	}
	runSh, err := os.ReadFile("../../.ci/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	images := composeImages(t, p, cf)
	runs := composeRuns(t, p, cf, images)
	for _, img := range images {
		serve := helpOf(t, "serve")
		for k := range img.env {
			if !serve.env[k] {
				p.Errorf("Dockerfile ENV %s: agentfinder serve (its CMD) reads no such variable", k)
			}
		}
		if !slices.Contains(img.packages, "curl") {
			p.Errorf("the image installs no curl, which the health checks run")
		}
	}
	checkComposeVolumes(p, cf)
	checkComposeDependencies(p, cf)
	for name, r := range runs {
		s := cf.Services[name]
		img := images[s.Image]
		env := func(k string) string {
			if v, ok := s.Environment[k]; ok {
				return v
			}
			return img.env[k]
		}
		if r.argv[0] == "serve" {
			checkComposeMeili(p, cf, name, env)
			checkComposeServe(p, cf, name, env)
		}
		for _, src := range r.sources {
			checkComposeSource(p, cf, runs, name, src, helpOf(t, r.argv[0]), runSh)
		}
	}
	return p.list
}

// composeImages reads the Dockerfile of each service that builds an image
// (by image name), checking its build context and arguments.
func composeImages(t *testing.T, p *composeProblems, cf stackFile) map[string]dockerImage {
	images := map[string]dockerImage{}
	for name, s := range cf.Services {
		if s.Build == nil {
			continue
		}
		file := filepath.Join("../..", s.Build.Context, cmp.Or(s.Build.Dockerfile, "Dockerfile"))
		if _, err := os.Stat(file); err != nil {
			p.Errorf("service %s: build context %q has no %s: %v", name, s.Build.Context, filepath.Base(file), err)
			continue
		}
		img := readDockerfile(t, file)
		for arg := range s.Build.Args {
			if !img.args[arg] {
				p.Errorf("service %s: build argument %s: the Dockerfile declares no ARG %s", name, arg, arg)
			}
		}
		images[s.Image] = img
	}
	return images
}

// composeRuns finds the agentfinder command line of each service of an
// image built here, checking its command, flags and environment against
// the command's --help.
func composeRuns(t *testing.T, p *composeProblems, cf stackFile, images map[string]dockerImage) map[string]composeRun {
	known := map[string]bool{}
	for _, c := range commands() {
		known[c.name] = true
	}
	runs := map[string]composeRun{}
	for name, s := range cf.Services {
		if !strings.HasPrefix(s.Image, "agentfinder:") {
			continue
		}
		img, ok := images[s.Image]
		if !ok {
			p.Errorf("service %s: image %s is built by no service", name, s.Image)
			continue
		}
		r, ok := agentfinderRun(p, name, s, img)
		if !ok {
			continue
		}
		if !known[r.argv[0]] {
			p.Errorf("service %s: runs %q: agentfinder has no such command", name, r.argv)
			continue
		}
		h := helpOf(t, r.argv[0])
		for _, a := range r.argv[1:] {
			if flag, ok := strings.CutPrefix(a, "--"); ok {
				if flag, _, _ = strings.Cut(flag, "="); !h.flags[flag] {
					p.Errorf("service %s: agentfinder %s has no flag --%s", name, r.argv[0], flag)
				}
			}
		}
		for k := range s.Environment {
			// TMPDIR is Go's temporary directory (os.TempDir), where the
			// fixture web writes its CA file.
			if !h.env[k] && k != "TMPDIR" {
				p.Errorf("service %s: environment %s: agentfinder %s reads no such variable (see its --help)", name, k, r.argv[0])
			}
		}
		runs[name] = r
	}
	if len(runs) == 0 {
		p.Errorf("no service runs agentfinder")
	}
	return runs
}

// checkComposeVolumes: each named volume a service mounts is declared, and
// each declared volume is mounted.
func checkComposeVolumes(p *composeProblems, cf stackFile) {
	used := map[string]bool{}
	for name, s := range cf.Services {
		for _, v := range s.Volumes {
			src, target, ok := strings.Cut(v, ":")
			if !ok || !strings.HasPrefix(target, "/") {
				p.Errorf("service %s: volume %q: want NAME:/path", name, v)
				continue
			}
			if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
				continue // a bind mount
			}
			if _, declared := cf.Volumes[src]; !declared {
				p.Errorf("service %s: volume %s is not declared under volumes", name, src)
			}
			used[src] = true
		}
	}
	for v := range cf.Volumes {
		if !used[v] {
			p.Errorf("volume %s is declared but no service mounts it", v)
		}
	}
}

// checkComposeDependencies: dependencies exist, run in the same profiles,
// and a service_healthy one has a health check.
func checkComposeDependencies(p *composeProblems, cf stackFile) {
	for name, s := range cf.Services {
		for dep, d := range s.DependsOn {
			ds, ok := cf.Services[dep]
			if !ok {
				p.Errorf("service %s depends on %s, which does not exist", name, dep)
				continue
			}
			if len(ds.Profiles) > 0 && !slices.ContainsFunc(s.Profiles, func(p string) bool { return slices.Contains(ds.Profiles, p) }) {
				p.Errorf("service %s (profiles %v) depends on %s, which runs only in profiles %v", name, s.Profiles, dep, ds.Profiles)
			}
			if d.Condition == "service_healthy" && (ds.Healthcheck == nil || len(ds.Healthcheck.Test) == 0) {
				p.Errorf("service %s waits for %s to be healthy, which has no health check", name, dep)
			}
		}
		if ns, ok := strings.CutPrefix(s.NetworkMode, "service:"); ok {
			if _, ok := cf.Services[ns]; !ok {
				p.Errorf("service %s shares the network of %s, which does not exist", name, ns)
			}
			if _, ok := s.DependsOn[ns]; !ok {
				p.Errorf("service %s shares the network of %s without depending on it", name, ns)
			}
		}
	}
}

// checkComposeMeili: the Meilisearch a service names (MEILI_URL) is a
// Meilisearch service on its port 7700 that the service waits for. (The
// cluster profile's replicas, AGENTFINDER_MEILI_REPLICA, are
// TestComposeClusterProfile's.)
func checkComposeMeili(p *composeProblems, cf stackFile, name string, env func(string) string) {
	if env("AGENTFINDER_MEILI_REPLICA") != "" {
		return
	}
	urls := []string{env("MEILI_URL")}
	if urls[0] == "" {
		p.Errorf("service %s names no Meilisearch (MEILI_URL)", name)
		return
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Port() != "7700" {
			p.Errorf("service %s: Meilisearch %q: want http://SERVICE:7700 (%v)", name, raw, err)
			continue
		}
		m, ok := cf.Services[u.Hostname()]
		if !ok || !strings.HasPrefix(m.Image, "getmeili/meilisearch:") {
			p.Errorf("service %s: Meilisearch %s is no Meilisearch service", name, raw)
			continue
		}
		if d, ok := cf.Services[name].DependsOn[u.Hostname()]; !ok || d.Condition != "service_healthy" {
			p.Errorf("service %s does not wait for %s to be healthy", name, u.Hostname())
		}
	}
}

// checkComposeServe: a serve listens on the port its network namespace
// publishes and its health check asks, and its data directory is a volume.
func checkComposeServe(p *composeProblems, cf stackFile, name string, env func(string) string) {
	s := cf.Services[name]
	_, port, err := net.SplitHostPort(env("AGENTFINDER_ADDR"))
	if err != nil {
		p.Errorf("service %s: AGENTFINDER_ADDR %q: %v", name, env("AGENTFINDER_ADDR"), err)
		return
	}
	owner := name // the service whose network namespace it listens in
	if ns, ok := strings.CutPrefix(s.NetworkMode, "service:"); ok {
		owner = ns
		if len(s.Ports) > 0 {
			p.Errorf("service %s publishes ports in %s's network namespace: publish them on %s", name, ns, ns)
		}
	}
	published := false
	for _, p := range cf.Services[owner].Ports {
		parts := strings.Split(p, ":")
		published = published || parts[len(parts)-1] == port
	}
	if !published {
		p.Errorf("service %s listens on %s, which %s does not publish (%v)", name, port, owner, cf.Services[owner].Ports)
	}
	if hc := s.Healthcheck; hc != nil {
		if hcURL := strings.Join(hc.Test, " "); !strings.Contains(hcURL, "127.0.0.1:"+port+"/") {
			p.Errorf("service %s: health check %q does not ask port %s", name, hcURL, port)
		}
	}
	dataDir := env("AGENTFINDER_DATA_DIR")
	if !slices.ContainsFunc(s.Volumes, func(v string) bool { _, target, _ := strings.Cut(v, ":"); return target == dataDir }) {
		p.Errorf("service %s: its data directory %s is no volume (%v)", name, dataDir, s.Volumes)
	}
}

// checkComposeSource: a file a service's shell sources is written by a
// fixtures service (--env-file) on a volume both mount at the same place,
// whose health check waits for the file, and which the service waits for;
// the variables the file sets are ones the service's command reads; and
// that fixture web is make run's demo (--demo, as .ci/run.sh starts it).
func checkComposeSource(p *composeProblems, cf stackFile, runs map[string]composeRun, name, file string, h commandHelp, runSh []byte) {
	var writer string
	for wn, wr := range runs {
		if wr.argv[0] != "fixtures" {
			continue
		}
		for i, a := range wr.argv {
			if a == "--env-file="+file || a == "--env-file" && i+1 < len(wr.argv) && wr.argv[i+1] == file {
				writer = wn
			}
		}
	}
	if writer == "" {
		p.Errorf("service %s sources %s, which no fixtures service writes (--env-file)", name, file)
		return
	}
	mountOf := func(svc string) string {
		for _, v := range cf.Services[svc].Volumes {
			src, target, _ := strings.Cut(v, ":")
			if strings.HasPrefix(file, target+"/") {
				return src + ":" + target
			}
		}
		return ""
	}
	if m := mountOf(name); m == "" || m != mountOf(writer) {
		p.Errorf("service %s sources %s on %q, %s writes it on %q: want one volume at one place", name, file, m, writer, mountOf(writer))
	}
	if d, ok := cf.Services[name].DependsOn[writer]; !ok || d.Condition != "service_healthy" {
		p.Errorf("service %s sources %s without waiting for %s to be healthy", name, file, writer)
	}
	if hc := cf.Services[writer].Healthcheck; hc == nil || !slices.Equal(hc.Test, []string{"CMD", "test", "-s", file}) {
		p.Errorf("service %s: its health check does not wait for %s", writer, file)
	}
	if !slices.Contains(runs[writer].argv, "--demo") {
		p.Errorf("service %s runs %q: not make run's demo (--demo)", writer, runs[writer].argv)
	}
	if !regexp.MustCompile(`"\$BIN" fixtures [^\n]*--demo`).Match(runSh) {
		p.Errorf(".ci/run.sh starts no fixtures --demo: the compose demo is not make run's")
	}
	// What the fixture web writes there, as runFixtures does with --demo.
	info := fixturesInfo{DNSServer: "127.0.0.1:5353", CAFile: "/demo/ca.pem", HTTPSPort: 1, HTTPPort: 2, Seeds: []string{"a.test"}}
	for _, kv := range demoServeSettings {
		info.ServeFlags = append(info.ServeFlags, "--"+kv[0]+"="+kv[1])
	}
	for _, kv := range info.env() {
		if !h.env[kv[0]] {
			p.Errorf("service %s: %s sets %s, which %q does not read", name, file, kv[0], runs[name].argv)
		}
	}
}

// checkComposeCommand checks one of the README's docker lines against
// docker-compose.yml (raw): the profile it names exists, and a variable it
// sets is one the file reads. It returns what is wrong.
func checkComposeCommand(raw []byte, argv []string) []string {
	cf, vars, err := readStack(raw)
	if err != nil {
		return []string{err.Error()}
	}
	p := &composeProblems{}
	profiles := map[string]bool{}
	for _, s := range cf.Services {
		for _, pr := range s.Profiles {
			profiles[pr] = true
		}
	}
	for i, a := range argv {
		if a == "--profile" && i+1 < len(argv) && !profiles[argv[i+1]] {
			p.Errorf("docker-compose.yml has no profile %q", argv[i+1])
		}
		if k, _, ok := strings.Cut(a, "="); ok && envNameRE.MatchString(k) && !vars[k] {
			p.Errorf("sets %s, which docker-compose.yml does not read", k)
		}
	}
	return p.list
}

var envNameRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// TestComposeChecksFail: each check finds what it is for in a broken copy
// of docker-compose.yml (a check that cannot fail proves nothing).
func TestComposeChecksFail(t *testing.T) {
	good := string(composeFileText(t))
	cases := []struct{ old, new, want string }{
		{`"--env-file", "/demo/demo.env"]`, `"--env-fil", "/demo/demo.env"]`, "has no flag --env-fil"},
		{"AGENTFINDER_INDEX: demo", "AGENTFINDER_INDX: demo", "AGENTFINDER_INDX: agentfinder serve reads no such variable"},
		{`"${AGENTFINDER_DEMO_PORT:-8090}:8090"`, `"${AGENTFINDER_DEMO_PORT:-8090}:8091"`, "listens on 8090, which fixtures does not publish"},
		{"- demo-data:/data", "- demo-dat:/data", "volume demo-dat is not declared"},
		{"MEILI_URL: http://meilisearch:7700\n      MEILI_API_KEY: ${MEILI_MASTER_KEY}\n      AGENTFINDER_ADDR: 0.0.0.0:8090", "MEILI_URL: http://meili:7700\n      MEILI_API_KEY: ${MEILI_MASTER_KEY}\n      AGENTFINDER_ADDR: 0.0.0.0:8090", "http://meili:7700 is no Meilisearch service"},
		{`command: ["fixtures", "--demo",`, `command: ["fixtures",`, "not make run's demo (--demo)"},
		{`test: ["CMD", "test", "-s", "/demo/demo.env"]`, `test: ["CMD", "test", "-s", "/demo/other.env"]`, "its health check does not wait for /demo/demo.env"},
		{"exec agentfinder serve'", "exec agentfinder serv'", `agentfinder has no such command`},
		{"context: .\n      args:\n        VERSION: ${AGENTFINDER_VERSION:-dev}\n    image: agentfinder:${AGENTFINDER_VERSION:-dev}\n    restart", "context: ./nowhere\n      args:\n        VERSION: ${AGENTFINDER_VERSION:-dev}\n    image: agentfinder:${AGENTFINDER_VERSION:-dev}\n    restart", `build context "./nowhere"`},
		{`test: ["CMD", "curl", "-fsS", "http://127.0.0.1:8080/healthz"]`, `test: ["CMD", "curl", "-fsS", "http://127.0.0.1:8081/healthz"]`, "does not ask port 8080"},
	}
	for _, c := range cases {
		old, repl := c.old, c.new
		if !strings.Contains(good, old) {
			t.Errorf("docker-compose.yml no longer has %q: update this case", old)
			continue
		}
		problems := checkCompose(t, []byte(strings.Replace(good, old, repl, 1)))
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
			t.Errorf("with %q for %q: problems %q, want one saying %q", repl, old, problems, c.want)
		}
	}
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"docker", "compose", "--profile", "demoo", "up"}, `no profile "demoo"`},
		{[]string{"AGENTFINDER_SEEDZ=example.com", "docker", "compose", "up"}, "sets AGENTFINDER_SEEDZ"},
	} {
		if problems := checkComposeCommand([]byte(good), c.argv); len(problems) != 1 || !strings.Contains(problems[0], c.want) {
			t.Errorf("%q: problems %q, want one saying %q", c.argv, problems, c.want)
		}
	}
	if problems := checkComposeCommand([]byte(good), []string{"AGENTFINDER_SEED=example.com", "docker", "compose", "--profile", "demo", "up"}); len(problems) > 0 {
		t.Errorf("the README's own line: %q", problems)
	}
}
