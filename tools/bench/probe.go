package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/proxy/iptables"
)

// probe asks the node's kernel whether a Service's rule is programmed and
// how much the proxy's state holds, with the command-line tool of the mode.
type probe struct {
	lab  *netns.Lab
	mode Mode
	ip   netip.Addr // the Service's cluster IP
	name string     // its name
}

// command is what found runs, as the report names it.
func (p probe) command() []string {
	switch p.mode.ProxyMode {
	case "nftables":
		return []string{hostprog.NFT, "get", "element", "ip", "kube-proxy", "service-ips", fmt.Sprintf("{ %s . tcp . %d }", p.ip, servicePort)}
	case "ipvs":
		return []string{hostprog.IPVSAdm, "-Ln", "-t", fmt.Sprintf("%s:%d", p.ip, servicePort)}
	}
	chain := iptables.ServiceChainName(namespace+"/"+p.name+":http", "tcp")
	return []string{iptablesBinary(p.mode.Backend), "-w", "5", "-t", "nat", "-S", chain}
}

// found reports whether the kernel has the Service's rule with its
// endpoints: its KUBE-SVC chain jumping to KUBE-SEP chains, its element
// in the service-ips verdict map, or its IPVS virtual server with real
// servers. Each is written in one transaction with the rest of the sync
// (iptables-restore, an nft transaction; IPVS: the last of the sync's
// virtual servers), so the last Service's rule means the whole apply.
func (p probe) found(ctx context.Context) (bool, error) {
	argv := p.command()
	cmd, err := p.lab.Command(nodeName, argv...)
	if err != nil {
		return false, err
	}
	out, err := output(ctx, cmd)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return false, nil // no such chain, element or service yet
		}
		return false, err
	}
	switch p.mode.ProxyMode {
	case "nftables":
		return true, nil
	case "ipvs":
		return bytes.Contains(out, []byte("->")), nil
	}
	return bytes.Contains(out, []byte("-j KUBE-SEP-")), nil
}

// count counts what the kernel holds for the proxy: the nat table's rules
// (iptables), the lines of its nftables table, or the IPVS virtual and
// real servers; what says what it counted.
func (p probe) count(ctx context.Context) (n int, what string, err error) {
	var argv []string
	var match func(line string) bool
	switch p.mode.ProxyMode {
	case "nftables":
		argv, what = []string{hostprog.NFT, "list", "table", "ip", "kube-proxy"}, "lines of nft list table ip kube-proxy"
		match = func(line string) bool { return strings.TrimSpace(line) != "" }
	case "ipvs":
		argv, what = []string{hostprog.IPVSAdm, "-Ln"}, "IPVS virtual and real servers"
		match = func(line string) bool {
			return strings.HasPrefix(line, "TCP") || strings.HasPrefix(line, "UDP") || strings.HasPrefix(strings.TrimSpace(line), "->")
		}
	default:
		argv, what = []string{iptablesSaveBinary(p.mode.Backend), "-t", "nat"}, "nat rules"
		match = func(line string) bool { return strings.HasPrefix(line, "-A ") }
	}
	cmd, err := p.lab.Command(nodeName, argv...)
	if err != nil {
		return 0, what, err
	}
	out, err := output(ctx, cmd)
	if err != nil {
		return 0, what, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if match(line) {
			n++
		}
	}
	return n, what, nil
}

// waitFound polls found until it is true or ctx ends. It polls at most
// every 20 ms and at least twice as long as a probe takes, so that the
// probe never takes more than a third of a core from the proxy it
// watches; it returns the time the rule was seen and the last interval
// (the measurement's resolution).
func (p probe) waitFound(ctx context.Context) (at time.Time, resolution time.Duration, err error) {
	interval := 20 * time.Millisecond
	for {
		start := time.Now()
		ok, err := p.found(ctx)
		if err != nil {
			return time.Time{}, interval, err
		}
		if ok {
			return time.Now(), interval, nil
		}
		interval = max(20*time.Millisecond, min(250*time.Millisecond, 2*time.Since(start)))
		select {
		case <-ctx.Done():
			return time.Time{}, interval, ctx.Err()
		case <-time.After(interval):
		}
	}
}

func iptablesBinary(b topology.IPTablesBackend) string {
	switch b {
	case topology.BackendLegacy:
		return hostprog.IPTablesLegacy
	case topology.BackendNFT:
		return hostprog.IPTablesNFT
	}
	return hostprog.IPTables
}

func iptablesSaveBinary(b topology.IPTablesBackend) string {
	switch b {
	case topology.BackendLegacy:
		return hostprog.IPTablesLegacySave
	case topology.BackendNFT:
		return hostprog.IPTablesNFTSave
	}
	return hostprog.IPTablesSave
}

// output runs cmd, killed when ctx ends, and returns its stdout; a failure
// carries stderr.
func output(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return stdout.Bytes(), fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return stdout.Bytes(), nil
	case <-ctx.Done():
		cmd.Process.Kill() //nolint:errcheck // it may have ended
		<-done
		return nil, ctx.Err()
	}
}
