package netns

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/netns/network"
)

// startPod makes a pod real: its namespace attached to its node by the lab's
// CNI, and, when it has TCP or UDP containerPorts, the
// agnhost-netexec-compatible server listening on all of them, run by the
// node's kubelet (a DNS pod's server by a supervisor of its own). It
// returns once the server listens. hosts are the lab's (l.hosts).
func (l *Lab) startPod(ctx context.Context, hosts *network.Hosts, pod *corev1.Pod, opts Options) error {
	_, err := hosts.AttachPod(pod.Spec.NodeName, network.PodNet{Name: pod.Name, IP: mustAddr(pod.Status.PodIP), IPs: podIPs(pod)})
	if err != nil {
		return fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	crashPoint("pod:attached")
	if err := l.writePodResolvConf(pod); err != nil {
		return fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	if len(serverPorts(pod)) == 0 {
		return nil
	}
	tcp, udp := portsOf(pod, corev1.ProtocolTCP), portsOf(pod, corev1.ProtocolUDP)
	if !isCoreDNS(pod) {
		return l.startServedPod(ctx, pod, tcp, udp, opts)
	}
	log, err := l.Store.Confine("logs", pod.Name+".log")
	if err != nil {
		return err
	}
	pid, err := l.startSupervised(supervised{
		namespace: pod.Namespace, pod: pod.Name, node: pod.Spec.NodeName, host: pod.Name, log: log,
		argv: l.podArgv(pod, tcp, udp, opts),
	}, opts)
	if err != nil {
		return err
	}
	return l.waitListening(ctx, pod.Name, pid, listenSet{tcp: tcp, udp: udp}, opts.Timeout, log)
}

// netexecOptions are the server of a pod: HTTP on its TCP containerPorts,
// the UDP commands on its UDP ones (none: agnhost's --udp-port=-1, so the
// server does not take agnhost's default 8081).
func netexecOptions(pod *corev1.Pod, tcp, udp []int) netexec.Options {
	if len(udp) == 0 {
		udp = []int{netexec.NoUDPPort}
	}
	return netexec.Options{
		PodName: pod.Name, NodeName: pod.Spec.NodeName, Ports: tcp, UDPPorts: udp,
		DelayShutdown: delayShutdown(pod),
	}
}

// serverPorts are the TCP and UDP containerPorts of a pod: its server
// listens on them (a pod without any runs no process).
func serverPorts(pod *corev1.Pod) []int {
	return append(portsOf(pod, corev1.ProtocolTCP), portsOf(pod, corev1.ProtocolUDP)...)
}

// portsOf are the containerPorts of a pod with the protocol (TCP when
// unset, as the API defaults it).
func portsOf(pod *corev1.Pod, protocol corev1.Protocol) []int {
	var ports []int
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Protocol == protocol || p.Protocol == "" && protocol == corev1.ProtocolTCP {
				ports = append(ports, int(p.ContainerPort))
			}
		}
	}
	return ports
}

// delayShutdown is the --delay-shutdown=SECONDS an agnhost netexec
// container of the pod is given (`args: [netexec, --delay-shutdown=10]`):
// the lab's server then goes on answering that long after SIGTERM, as
// agnhost does, which is how a terminating endpoint that still serves is
// shown.
func delayShutdown(pod *corev1.Pod) time.Duration {
	for _, c := range pod.Spec.Containers {
		args := append(append([]string{}, c.Command...), c.Args...)
		for i, a := range args {
			value, ok := strings.CutPrefix(a, "--delay-shutdown=")
			if !ok && a == "--delay-shutdown" && i+1 < len(args) {
				value, ok = args[i+1], true
			}
			if n, err := strconv.Atoi(value); ok && err == nil && n > 0 {
				return time.Duration(n) * time.Second
			}
		}
	}
	return 0
}

// stopPod ends a pod's server (closed by its node's kubelet, or its
// supervisor stopped first) and removes its
// namespace and link.
func (l *Lab) stopPod(name string) error {
	if served, err := l.stopServedPod(name); !served {
		l.stopSupervised(name) //nolint:errcheck // the namespace's processes are ended below in any case
	} else if err != nil {
		return err
	}
	process.StopInNamespaces([]string{network.NamespaceName(l.Name(), name)}, 2*time.Second)
	if err := network.DetachPod(l.Name(), name); err != nil {
		return err
	}
	return network.RemoveResolvConf(l.Name(), name)
}

// listenSet are the TCP and UDP ports a pod's server listens on.
type listenSet struct{ tcp, udp []int }

// waitListening waits until the pod's server listens on every port, asked
// of sock_diag in the pod's namespace (listening), or read from
// /proc/<pid>/net/{tcp,udp} of its supervisor, which shares the server's
// namespace. A server that crash-loops ends the wait at once.
func (l *Lab) waitListening(ctx context.Context, pod string, pid int, ports listenSet, timeout time.Duration, log string) error {
	deadline := time.Now().Add(timeout)
	for poll := listenPollFirst; ; poll = min(poll*3/2, listenPollMax) {
		var tcp, udp map[int]bool
		ns := network.NamespaceName(l.Name(), pod)
		if len(ports.tcp) > 0 {
			tcp = listening(ns, pid, unix.IPPROTO_TCP, stateListen, "tcp", "0A")
		}
		if len(ports.udp) > 0 {
			udp = listening(ns, pid, unix.IPPROTO_UDP, stateClose, "udp", "07")
		}
		missing := 0
		for _, p := range ports.tcp {
			if !tcp[p] {
				missing++
			}
		}
		for _, p := range ports.udp {
			if !udp[p] {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		ps, err := l.podState(pod)
		if err != nil {
			return err
		}
		if why := ps.failure(); why != "" {
			return fmt.Errorf("server of pod %s does not run: %s\n%s", pod, why, tail(log, 10))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("server of pod %s (supervisor pid %d) does not listen on TCP %v and UDP %v after %s\n%s", pod, pid, ports.tcp, ports.udp, timeout, tail(log, 10))
		}
		time.Sleep(poll)
	}
}

// A pod's server is looked for every listenPollFirst at first, then less
// and less often, up to listenPollMax: many pods start side by side.
const (
	listenPollFirst = 5 * time.Millisecond
	listenPollMax   = 50 * time.Millisecond
)

// listening are the local ports of the sockets of a protocol in a state
// in the pod's namespace, from sock_diag, or from /proc/PID/net of its
// supervisor (the file named by procName, the state as procState) where
// sock_diag cannot answer (a kernel without its inet_diag module).
func listening(namespace string, pid int, protocol, state uint8, procName, procState string) map[int]bool {
	if ports, err := socketPorts(namespace, protocol, state); err == nil {
		return ports
	}
	return listeningPorts(pid, procName, procState)
}

// listeningPorts are the local ports of the sockets of a protocol (tcp
// or udp, IPv4 and IPv6) in state (hex, as /proc/net shows it).
func listeningPorts(pid int, protocol, state string) map[int]bool {
	out := map[int]bool{}
	for _, f := range []string{protocol, protocol + "6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != state {
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

// podIPs are a pod's addresses, primary first (status.podIPs: one per
// family of its node; a pod of a single-stack lab may have only podIP).
func podIPs(pod *corev1.Pod) []netip.Addr {
	var ips []netip.Addr
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, mustAddr(ip.IP))
	}
	return ips
}

// hosts plans the lab's hosts for the pods a change starts.
func (l *Lab) hosts() (*network.Hosts, error) {
	hs, err := network.PlanHosts(l.Topology)
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", l.Name(), err)
	}
	return hs, nil
}
