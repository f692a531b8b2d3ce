package dockerhost

import (
	"context"
	"os"
	"strings"

	"github.com/svclab/svclab/internal/cmdrun"
)

// Daemon is a reachable Docker daemon.
type Daemon struct {
	// Host is its DOCKER_HOST ("" for the docker CLI's default).
	Host string
	// Managed: svclab started it, in Namespace, and stops it.
	Managed bool
	use     *os.File // the shared users lock (see users.go)
}

// Env is the environment docker (and kind, which runs docker) needs.
func (d *Daemon) Env() []string {
	if d.Host == "" {
		return nil
	}
	return []string{"DOCKER_HOST=" + d.Host}
}

// Command is a docker CLI command against this daemon.
func (d *Daemon) Command(args ...string) cmdrun.Cmd {
	return cmdrun.Command(append([]string{"docker"}, args...)...).WithEnv(d.Env()...)
}

// Use points this process's environment at the daemon, for libraries
// that run docker themselves (kind).
func (d *Daemon) Use() {
	if d.Host != "" {
		os.Setenv("DOCKER_HOST", d.Host)
	}
}

// NetnsCommand runs argv where the daemon's networks are: inside
// Namespace for svclab's daemon, directly otherwise.
func (d *Daemon) NetnsCommand(argv ...string) cmdrun.Cmd {
	if d.Managed {
		return cmdrun.Command(append([]string{"ip", "netns", "exec", Namespace}, argv...)...)
	}
	return cmdrun.Command(argv...)
}

// answers reports whether a daemon answers at host ("" = default).
func answers(ctx context.Context, host string) bool {
	d := &Daemon{Host: host}
	out, err := d.Command("version", "--format", "{{.Server.Version}}").Text(ctx)
	return err == nil && out != ""
}

// KindClusters lists the kind clusters that have containers on d.
func KindClusters(ctx context.Context, d *Daemon) ([]string, error) {
	out, err := d.Command("ps", "-a", "--filter", "label=io.x-k8s.kind.cluster", "--format", `{{.Label "io.x-k8s.kind.cluster"}}`).Text(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, n := range strings.Fields(out) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names, nil
}

// Running returns the daemon clusters live on without starting one:
// svclab's when it runs, else the user's. Release it (or call Done).
func Running(ctx context.Context) (*Daemon, bool) {
	if running() && answers(ctx, Host) {
		return &Daemon{Host: Host, Managed: true, use: acquireUse()}, true
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" && h != Host {
		return &Daemon{Host: h}, answers(ctx, h)
	}
	if answers(ctx, "") {
		return &Daemon{}, true
	}
	return nil, false
}

// Leftovers reports whether a crashed svclab dockerd left something: its
// namespace, its saved host state, or containers in its data root.
func Leftovers() bool {
	for _, p := range []string{"/run/netns/" + Namespace, hostStateFile, pidFile} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	entries, _ := os.ReadDir(dataRoot() + "/containers")
	return len(entries) > 0
}
