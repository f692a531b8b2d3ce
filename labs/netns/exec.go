package netns

import (
	"os/exec"
)

// Command returns a command that runs args inside a host of the lab (node,
// client, pod or the router), as `ip netns exec <namespace> args…`.
func (l *Lab) Command(host string, args ...string) (*exec.Cmd, error) {
	ns, err := l.Namespace(host)
	if err != nil {
		return nil, err
	}
	return exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...), nil
}
