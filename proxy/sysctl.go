package proxy

import (
	"fmt"
	"log/slog"
	"os"
	"path"
	"strconv"
	"strings"
)

// sysctls reads and writes integer kernel settings by their /proc/sys path
// ("net/ipv4/conf/all/route_localnet"), as upstream's utilsysctl.Interface
// (k8s.io/component-helpers/node/util/sysctl).
type sysctls interface {
	Get(name string) (int, error)
	Set(name string, value int) error
}

// procSys is sysctls on /proc/sys. A /proc/sys/net file belongs to the
// network namespace of the thread that opens it: for the proxy, which never
// switches threads, its own namespace — a lab node's, or the host network
// of the kind node its DaemonSet pod runs on.
type procSys struct{}

const procSysDir = "/proc/sys"

func (procSys) Get(name string) (int, error) {
	data, err := os.ReadFile(path.Join(procSysDir, name))
	if err != nil {
		return -1, err
	}
	return strconv.Atoi(strings.Trim(string(data), " \n"))
}

func (procSys) Set(name string, value int) error {
	return os.WriteFile(path.Join(procSysDir, name), []byte(strconv.Itoa(value)), 0o640)
}

// ensureSysctl sets name to value unless it already has it, as upstream's
// proxyutil.EnsureSysctl, with its error and log messages.
func ensureSysctl(s sysctls, name string, value int, log *slog.Logger) error {
	old, _ := s.Get(name)
	if old == value {
		return nil
	}
	if err := s.Set(name, value); err != nil {
		return fmt.Errorf("can't set sysctl %s to %d: %v", name, value, err)
	}
	log.Info("Changed sysctl", "name", name, "before", old, "after", value)
	return nil
}
