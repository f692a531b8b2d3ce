package dockerhost

import (
	"path/filepath"

	"github.com/svclab/svclab/internal/privdir"
	"github.com/svclab/svclab/labs/kind/internal/cache"
)

const (
	// Namespace is the network namespace svclab's dockerd runs in.
	Namespace = "svclab-docker"
	// RunDir holds the daemon's socket, pid file, exec root, config, log.
	RunDir = "/run/svclab/kind"
	// StateDir holds what must survive a crash or a reboot: the host
	// state to restore.
	StateDir = "/var/lib/svclab/kind"
)

var (
	socketPath    = filepath.Join(RunDir, "docker.sock")
	pidFile       = filepath.Join(RunDir, "docker.pid")
	execRoot      = filepath.Join(RunDir, "docker-exec")
	configPath    = filepath.Join(RunDir, "daemon.json")
	logPath       = filepath.Join(RunDir, "dockerd.log")
	wrapperPath   = filepath.Join(RunDir, "svclab-runc")
	lockPath      = filepath.Join(RunDir, "docker.lock")
	hostStateFile = filepath.Join(StateDir, "host-state.json")
)

// Host is the DOCKER_HOST value of svclab's dockerd.
const Host = "unix:///run/svclab/kind/docker.sock"

// dataRoot is where svclab's dockerd keeps images: in the cache, so built
// images survive the daemon.
func dataRoot() string { return filepath.Join(cache.Dir(), "docker") }

// makeRunDir makes dir (RunDir, the exec root) root's alone, 0700, and
// refuses one another user made or linked (see privdir): it holds the
// daemon's socket, and whoever reaches that is root.
func makeRunDir(dir string) error { return privdir.Ensure(dir) }
