package labs

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/netexec"
	"github.com/svclab/svclab/labs/network"
	"github.com/svclab/svclab/labs/process"
	"github.com/svclab/svclab/labs/selfexec"
)

// startPod makes a pod real: its namespace attached to its node by the lab's
// CNI, and, when it has containerPorts, the agnhost-netexec-compatible
// server listening on all of them. It returns once the server listens.
func (l *Lab) startPod(ctx context.Context, pod *corev1.Pod, opts Options) error {
	_, err := network.AttachPod(l.Topology, pod.Spec.NodeName, network.PodNet{Name: pod.Name, IP: mustAddr(pod.Status.PodIP)})
	if err != nil {
		return fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	var ports []int
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
				ports = append(ports, int(p.ContainerPort))
			}
		}
	}
	if len(ports) == 0 {
		return nil
	}
	logFile, err := l.Store.Confine("logs", pod.Name+".log")
	if err != nil {
		return err
	}
	pidFile, err := l.Store.Confine("run", pod.Name+".pid")
	if err != nil {
		return err
	}
	args := selfexec.Argv(opts.Binary, &selfexec.Netexec{Options: netexec.Options{
		PodName: pod.Name, NodeName: pod.Spec.NodeName, Ports: ports,
	}})
	pid, err := process.Start(process.Spec{
		Namespace: network.NamespaceName(l.Name(), pod.Name),
		Args:      args,
		LogFile:   logFile,
		PIDFile:   pidFile,
	})
	if err != nil {
		return err
	}
	return waitListening(ctx, pid, ports, opts.Timeout, logFile)
}

// stopPod ends a pod's server and removes its namespace and link.
func (l *Lab) stopPod(name string) error {
	process.StopInNamespaces([]string{network.NamespaceName(l.Name(), name)}, 2*time.Second)
	l.Store.RemoveFile("run", name+".pid") //nolint:errcheck // best effort, as before: the namespace is what matters
	return network.DetachPod(l.Name(), name)
}

// waitListening waits until the process listens on every port, read from
// /proc/<pid>/net/tcp (which shows the socket table of the process's own
// network namespace).
func waitListening(ctx context.Context, pid int, ports []int, timeout time.Duration, log string) error {
	deadline := time.Now().Add(timeout)
	for {
		listening := listeningPorts(pid)
		missing := 0
		for _, p := range ports {
			if !listening[p] {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		if !process.Alive(pid) {
			return fmt.Errorf("server (pid %d) exited before listening\n%s", pid, tail(log, 10))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("server (pid %d) does not listen on %v after %s\n%s", pid, ports, timeout, tail(log, 10))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func listeningPorts(pid int) map[int]bool {
	out := map[int]bool{}
	for _, f := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" { // 0A = TCP_LISTEN
				continue
			}
			if i := strings.LastIndexByte(fields[1], ':'); i >= 0 {
				if port, err := strconv.ParseUint(fields[1][i+1:], 16, 16); err == nil {
					out[int(port)] = true
				}
			}
		}
	}
	return out
}

func nodePorts(ports []corev1.ServicePort) string {
	var parts []string
	for _, p := range ports {
		if p.NodePort != 0 {
			parts = append(parts, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ", node ports " + strings.Join(parts, ",")
}
